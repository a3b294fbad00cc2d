# StaticLLVM.cmake - link LLVM and MLIR statically (-DTILEC_STATIC_LLVM=ON).
#
# Included from the top-level CMakeLists.txt after find_package(MLIR) and
# before any target is defined. The result runs on a machine with no LLVM
# installed (the GPU machine): `ldd` shows no libLLVM / libMLIR.
#
# Debian's packages build LLVM as one shared library and export it as the
# imported target `LLVM`:
#   * every exported MLIR archive (MLIRIR, MLIRPass, ...) lists `LLVM` in its
#     INTERFACE_LINK_LIBRARIES;
#   * LLVMConfig.cmake sets LLVM_LINK_LLVM_DYLIB, so llvm_add_library and
#     add_mlir_library map our own LINK_COMPONENTS to `LLVM` too.
# This file repoints both at the static component archives
# (/usr/lib/llvm-22/lib/libLLVM<Component>.a, exported as the imported
# targets LLVM<Component> with their own dependencies), chosen by
# `llvm-config --link-static --libnames <components>`.
include_guard(GLOBAL)

set(TILEC_STATIC_LLVM_COMPONENTS
  "nvptx passes irreader bitreader bitwriter linker asmparser frontendopenmp frontendoffloading mcparser object targetparser"
  CACHE STRING "LLVM components linked statically with TILEC_STATIC_LLVM")

find_program(TILEC_LLVM_CONFIG llvm-config
  HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
if(NOT TILEC_LLVM_CONFIG)
  message(FATAL_ERROR "TILEC_STATIC_LLVM: llvm-config not found in ${LLVM_TOOLS_BINARY_DIR}")
endif()

separate_arguments(_tilec_components UNIX_COMMAND "${TILEC_STATIC_LLVM_COMPONENTS}")
execute_process(
  COMMAND ${TILEC_LLVM_CONFIG} --link-static --libnames ${_tilec_components}
  OUTPUT_VARIABLE _tilec_libnames
  RESULT_VARIABLE _tilec_rc
  ERROR_VARIABLE _tilec_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _tilec_rc EQUAL 0)
  message(FATAL_ERROR "TILEC_STATIC_LLVM: llvm-config --link-static failed: ${_tilec_err}")
endif()

# libLLVMFoo.a -> the imported target LLVMFoo.
separate_arguments(_tilec_libnames UNIX_COMMAND "${_tilec_libnames}")
set(TILEC_STATIC_LLVM_LIBS)
foreach(lib IN LISTS _tilec_libnames)
  string(REGEX REPLACE "^lib(.*)\\.a$" "\\1" name "${lib}")
  if(NOT TARGET ${name})
    message(FATAL_ERROR "TILEC_STATIC_LLVM: no imported target ${name} for ${lib}")
  endif()
  list(APPEND TILEC_STATIC_LLVM_LIBS ${name})
endforeach()
list(LENGTH TILEC_STATIC_LLVM_LIBS _tilec_n)

# Z3 is only reached from LLVM's SMT solver code, which MLIR does not use;
# the GPU machine has no libz3. Drop it from LLVMSupport's interface.
get_target_property(_tilec_support_libs LLVMSupport INTERFACE_LINK_LIBRARIES)
list(FILTER _tilec_support_libs EXCLUDE REGEX "z3")
set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "${_tilec_support_libs}")

# What replaces the `LLVM` dylib wherever it is named.
add_library(tilec_llvm_static INTERFACE IMPORTED GLOBAL)
set_target_properties(tilec_llvm_static PROPERTIES
  INTERFACE_LINK_LIBRARIES "${TILEC_STATIC_LLVM_LIBS}")

# 1. The exported MLIR archives.
set(_tilec_patched 0)
foreach(tgt IN LISTS MLIR_EXPORTED_TARGETS)
  if(NOT TARGET ${tgt})
    continue()
  endif()
  get_target_property(_type ${tgt} TYPE)
  if(NOT _type STREQUAL "STATIC_LIBRARY" AND NOT _type STREQUAL "INTERFACE_LIBRARY")
    continue()
  endif()
  get_target_property(_libs ${tgt} INTERFACE_LINK_LIBRARIES)
  if(NOT _libs)
    continue()
  endif()
  set(_new)
  set(_changed FALSE)
  foreach(l IN LISTS _libs)
    if(l STREQUAL "LLVM")
      set(l tilec_llvm_static)
      set(_changed TRUE)
    elseif(l STREQUAL "$<LINK_ONLY:LLVM>")
      set(l "$<LINK_ONLY:tilec_llvm_static>")
      set(_changed TRUE)
    endif()
    list(APPEND _new "${l}")
  endforeach()
  if(_changed)
    set_target_properties(${tgt} PROPERTIES INTERFACE_LINK_LIBRARIES "${_new}")
    math(EXPR _tilec_patched "${_tilec_patched} + 1")
  endif()
endforeach()

# 2. Our own LINK_COMPONENTS (llvm_add_library / add_mlir_library /
#    add_llvm_executable) map to component archives, not the dylib.
set(LLVM_LINK_LLVM_DYLIB OFF)
set(MLIR_LINK_MLIR_DYLIB OFF)

# 3. Link flags: drop shared libraries nothing references (libxml2, ...)
#    and unreferenced sections.
add_link_options(LINKER:--as-needed LINKER:--gc-sections)

message(STATUS "TILEC_STATIC_LLVM: ${_tilec_patched} MLIR targets repointed to "
               "${_tilec_n} static LLVM component archives")
