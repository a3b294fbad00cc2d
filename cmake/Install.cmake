# Install.cmake - what `cmake --install` puts under the prefix (docs/using.md).
#
#   bin/tilec                               the compiler driver
#   include/tile/*.h                        the public API (+ Version.h)
#   lib/libTileRuntime.a                    tilec::runtime   (no LLVM; libdl)
#   lib/libTileJITCore.a                    tilec::jit_core  (cache + JIT class)
#   lib/libTileAttentionCore.a              tilec::attention_core (tile::Attention)
#   lib/libTileCompiler.so.X.Y.Z (+ links)  tilec::compiler  (tile::compile)
#   lib/libtilec_c.so.1.0.0 (+ links)       tilec::c  (include/tile/tilec_c.h)
#   lib/tilec/python/tilec/                 the Python package (ctypes)
#   lib/cmake/tilec/tilecConfig.cmake, tilecConfigVersion.cmake,
#                   tilecTargets*.cmake     find_package(tilec)
#   lib/pkgconfig/tilec.pc, tilec-runtime.pc
#   share/doc/tilec/using.md
#   share/tilec/attention/*.tile, configs/  the kernels tile::Attention runs
#
# tilec::jit = tilec::jit_core + tilec::compiler (+ tilec::runtime): link it
# to compile .tile at run time; link tilec::runtime alone to load what
# `tilec` compiled ahead of time. tilec::attention = tilec::attention_core +
# tilec::jit: the attention forward as a library call (tile::Attention). The internal MLIR libraries (TileDialect,
# TilePipeline, ...) are not installed: LLVM_INSTALL_TOOLCHAIN_ONLY (top-level
# CMakeLists.txt) turns off add_mlir_library's own install rules.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(TILEC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilec)

# The public headers, and the generated version header beside them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tile
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT tilec
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/tile/Version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tile
  COMPONENT tilec)

if(TARGET tilec)
  install(TARGETS tilec RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          COMPONENT tilec)
endif()

# Exported names: tilec::runtime, tilec::jit_core, tilec::attention_core,
# tilec::compiler, tilec::jit, tilec::attention.
set_target_properties(TileRuntime PROPERTIES EXPORT_NAME runtime)
set_target_properties(TileJITCore PROPERTIES EXPORT_NAME jit_core)
set_target_properties(TileAttentionCore PROPERTIES EXPORT_NAME attention_core)
set(_tilec_exported TileRuntime TileJITCore TileAttentionCore)
if(TARGET TileCompiler AND TARGET TileJIT)
  set_target_properties(TileCompiler PROPERTIES EXPORT_NAME compiler)
  set_target_properties(TileJIT PROPERTIES EXPORT_NAME jit)
  set_target_properties(TileAttention PROPERTIES EXPORT_NAME attention)
  list(APPEND _tilec_exported TileCompiler TileJIT TileAttention)
endif()
if(TARGET tilec_c)
  set_target_properties(tilec_c PROPERTIES EXPORT_NAME c)
  list(APPEND _tilec_exported tilec_c)
  # The Python package finds libtilec_c.so by walking up to PREFIX/lib.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tilec
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/tilec/python
    COMPONENT tilec
    FILES_MATCHING PATTERN "*.py")
endif()
install(TARGETS ${_tilec_exported}
  EXPORT tilecTargets
  COMPONENT tilec
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT tilecTargets
  NAMESPACE tilec::
  DESTINATION ${TILEC_INSTALL_CMAKEDIR}
  COMPONENT tilec)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/tilecConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tilecConfig.cmake
  INSTALL_DESTINATION ${TILEC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
# 0.x: a new minor version may break the API, so only X.Y.* is compatible.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/tilecConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/tilecConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/tilecConfigVersion.cmake
  DESTINATION ${TILEC_INSTALL_CMAKEDIR}
  COMPONENT tilec)

# pkg-config files, relocatable (prefix from the .pc file's own place).
file(RELATIVE_PATH TILEC_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" TILEC_PC_TO_PREFIX "${TILEC_PC_TO_PREFIX}")
set(TILEC_PC_DL_LIBS)
foreach(lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND TILEC_PC_DL_LIBS " -l${lib}")
endforeach()
string(STRIP "${TILEC_PC_DL_LIBS}" TILEC_PC_DL_LIBS)
foreach(pc tilec tilec-runtime)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in
                 ${PROJECT_BINARY_DIR}/cmake/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    COMPONENT tilec)
endforeach()

# The kernels and config tables tile::Attention and tile::Decode compile
# (defaultKernelDir() finds them here).
install(FILES
  ${PROJECT_SOURCE_DIR}/examples/attention/flash_fwd.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/flash_fwd_bshd.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/flash_fwd_ref.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/nonfinite_count.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/decode.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/decode_combine.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/flash_bwd_preprocess.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/flash_bwd_dkdv.tile
  ${PROJECT_SOURCE_DIR}/examples/attention/flash_bwd_dq.tile
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tilec/attention
  COMPONENT tilec)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/attention/configs
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tilec/attention
  COMPONENT tilec
  FILES_MATCHING PATTERN "*.json")

install(FILES ${PROJECT_SOURCE_DIR}/docs/using.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT tilec)
