# Sanitizer and fuzzer builds (scripts/sanitize.sh uses both, in build-fuzz/).
#
#   -DTILEC_SANITIZE=ON  every target compiled and linked with
#                        AddressSanitizer + UndefinedBehaviorSanitizer
#                        (gcc or clang); UB aborts (-fno-sanitize-recover).
#   -DTILEC_FUZZ=ON      clang only; implies TILEC_SANITIZE, adds libFuzzer's
#                        coverage instrumentation (-fsanitize=fuzzer-no-link)
#                        and the target tile-frontend-fuzzer (test/fuzz).
#
# LLVM/MLIR themselves stay Debian's uninstrumented libraries. Their headers
# poison BumpPtrAllocator memory in instrumented code that the uninstrumented
# libLLVM never unpoisons, so run with ASAN_OPTIONS=allow_user_poisoning=0.
# vptr is off: LLVM is built without RTTI.
option(TILEC_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(TILEC_FUZZ "Build the libFuzzer frontend fuzzer (clang; implies TILEC_SANITIZE)" OFF)

if(TILEC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TILEC_FUZZ needs clang for libFuzzer: configure with "
      "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "
      "(apt install clang-14 libclang-rt-14-dev; scripts/sanitize.sh does it)")
  endif()
  set(TILEC_SANITIZE ON CACHE BOOL
    "Build with AddressSanitizer + UndefinedBehaviorSanitizer" FORCE)
endif()

if(TILEC_SANITIZE)
  set(TILEC_SANITIZER_FLAGS
    -fsanitize=address,undefined -fno-sanitize=vptr
    -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  if(TILEC_FUZZ)
    list(APPEND TILEC_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
  endif()
  add_compile_options(${TILEC_SANITIZER_FLAGS})
  add_link_options(-fsanitize=address,undefined)
  # Shared libraries leave the sanitizer runtime's symbols to the executable:
  # drop HandleLLVMOptions' -z defs (LLVM does the same in its own builds).
  string(REPLACE "-Wl,-z,defs" "" CMAKE_SHARED_LINKER_FLAGS
         "${CMAKE_SHARED_LINKER_FLAGS}")
  string(REPLACE "-Wl,-z,defs" "" CMAKE_MODULE_LINKER_FLAGS
         "${CMAKE_MODULE_LINKER_FLAGS}")
  message(STATUS "TILEC_SANITIZE: ${TILEC_SANITIZER_FLAGS}")
endif()
