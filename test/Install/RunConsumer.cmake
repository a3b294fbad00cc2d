# RunConsumer.cmake - the install test (ctest tile-install-consumer).
#
#   cmake -DBUILD_DIR=... -DCONSUMER_DIR=... -DWORK_DIR=... [-DGENERATOR=...]
#         [-DCXX=...] [-DNM=...] -P RunConsumer.cmake
#
# 1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix; lists the tree and
#    checks what must (not) be there: headers, tilec, the package files, a
#    versioned libTileCompiler.so, tile::Attention's library and kernels,
#    and no internal archive (TilePipeline, ...).
# 2. libTileCompiler.so exports only the public API (at most 20 symbols).
# 3. configures test/Install/consumer with -DCMAKE_PREFIX_PATH=prefix
#    (find_package(tilec)), builds it (add_jit: tilec::jit; add_aot:
#    tilec::runtime and a bundle the installed tilec compiles) and runs both:
#    exit 0, "compiled kernel 'add'" and, without a GPU, "no GPU:".
# 4. add_aot needs neither LLVM nor libTileCompiler.so.
# 5. where pkg-config is found: tilec-runtime.pc builds aot_main.cpp too.
cmake_minimum_required(VERSION 3.20)
foreach(v BUILD_DIR CONSUMER_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "RunConsumer.cmake: -D${v}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  cmake_parse_arguments(ARG "QUIET" "OUTPUT" "COMMAND" ${ARGN})
  string(REPLACE ";" " " line "${ARG_COMMAND}")
  message(STATUS "$ ${line}")
  execute_process(COMMAND ${ARG_COMMAND}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT ARG_QUIET OR NOT rc EQUAL 0)
    message("${out}")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${line}")
  endif()
  if(ARG_OUTPUT)
    set(${ARG_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# 1. Install.
run(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE tree LIST_DIRECTORIES false RELATIVE ${prefix} ${prefix}/*)
list(SORT tree)
string(REPLACE ";" "\n  " shown "${tree}")
message(STATUS "installed:\n  ${shown}")
foreach(f bin/tilec include/tile/Compiler.h include/tile/JIT.h
          include/tile/Runtime.h include/tile/Version.h
          include/tile/Attention.h lib/libTileAttentionCore.a
          share/tilec/attention/flash_fwd.tile
          share/tilec/attention/flash_fwd_ref.tile
          share/tilec/attention/nonfinite_count.tile
          share/tilec/attention/flash_bwd_dkdv.tile
          share/tilec/attention/configs/flash_fwd.sm_90a.json
          include/tile/AttentionBackward.h include/tile/tilec_c.h
          lib/libtilec_c.so lib/tilec/python/tilec/__init__.py
          lib/tilec/python/tilec/capi.py lib/tilec/python/tilec/ops.py
          lib/libTileRuntime.a lib/libTileJITCore.a lib/libTileCompiler.so
          lib/cmake/tilec/tilecConfig.cmake
          lib/cmake/tilec/tilecConfigVersion.cmake
          lib/cmake/tilec/tilecTargets.cmake lib/pkgconfig/tilec.pc
          lib/pkgconfig/tilec-runtime.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
foreach(f IN LISTS tree)
  if(f MATCHES "(TilePipeline|TileDialect|TileFrontend|TileTransforms|TileConversion|TileTarget|TileAnalysis)")
    message(FATAL_ERROR "internal library installed: ${f}")
  endif()
endforeach()
file(GLOB sonames ${prefix}/lib/libTileCompiler.so.*)
if(NOT sonames)
  message(FATAL_ERROR "libTileCompiler.so has no versioned SONAME")
endif()

# 2. Exports.
if(NM)
  run(COMMAND ${NM} -D --defined-only -C ${prefix}/lib/libTileCompiler.so
      OUTPUT syms)
  string(REGEX MATCHALL "[^\n]+" syms "${syms}")
  list(LENGTH syms n)
  message(STATUS "libTileCompiler.so exports ${n} symbols")
  if(n GREATER 20)
    message(FATAL_ERROR "libTileCompiler.so exports ${n} symbols (at most 20 expected: only include/tile/Compiler.h)")
  endif()
  # libtilec_c.so: the C API's functions and nothing else.
  run(COMMAND ${NM} -D --defined-only ${prefix}/lib/libtilec_c.so OUTPUT csyms)
  string(REGEX MATCHALL "[^\n]+" csyms "${csyms}")
  list(LENGTH csyms n)
  message(STATUS "libtilec_c.so exports ${n} symbols")
  foreach(sym IN LISTS csyms)
    if(NOT sym MATCHES " tilec_[a-z_]+$" AND NOT sym MATCHES " LIBTILEC")
      message(FATAL_ERROR "libtilec_c.so exports ${sym} (only tilec_* expected)")
    endif()
  endforeach()
endif()

# 3. The consumer project.
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${build}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
if(GENERATOR)
  list(APPEND configure -G ${GENERATOR})
endif()
if(CXX)
  list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX})
endif()
run(COMMAND ${configure})
run(COMMAND ${CMAKE_COMMAND} --build ${build})
# Neither may touch the user's cache or find a driver by accident.
set(ENV{TILEC_CACHE_DIR} ${WORK_DIR}/cache)
run(COMMAND ${build}/add_jit OUTPUT jit_out)
run(COMMAND ${build}/add_aot OUTPUT aot_out)
if(NOT jit_out MATCHES "compiled kernel 'add' for sm_80")
  message(FATAL_ERROR "add_jit did not compile the kernel")
endif()
if(NOT aot_out MATCHES "kernel 'add' for sm_80")
  message(FATAL_ERROR "add_aot did not read the bundle")
endif()
if(NOT jit_out MATCHES "(no GPU:|PASS: add)")
  message(FATAL_ERROR "add_jit: neither PASS nor a clean 'no GPU:'")
endif()
if(NOT aot_out MATCHES "(no GPU:|PASS: add)")
  message(FATAL_ERROR "add_aot: neither PASS nor a clean 'no GPU:'")
endif()

# 4. The AOT program is LLVM-free.
find_program(READELF readelf)
if(READELF)
  run(QUIET COMMAND ${READELF} -d ${build}/add_aot OUTPUT dyn)
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dyn}")
  message(STATUS "add_aot needs: ${needed}")
  if(dyn MATCHES "libLLVM|libMLIR|libTileCompiler")
    message(FATAL_ERROR "add_aot (tilec::runtime only) needs LLVM or the compiler")
  endif()
endif()

# 5. pkg-config.
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(PKG_CONFIG AND CXX)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  run(COMMAND ${PKG_CONFIG} --cflags --libs tilec-runtime OUTPUT flags)
  run(COMMAND ${PKG_CONFIG} --cflags --libs tilec)
  string(STRIP "${flags}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(COMMAND ${CXX} -std=c++17 -O1 "-DADD_BUNDLE=\"${build}/kernels/add\""
      ${CONSUMER_DIR}/aot_main.cpp ${flags} -o ${WORK_DIR}/add_aot_pc)
  run(COMMAND ${WORK_DIR}/add_aot_pc)
endif()
message(STATUS "tile-install-consumer: passed")
