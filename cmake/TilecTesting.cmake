# Helpers for ctest-driven tests (test/Unit, test/GPU).
#
#   tilec_add_unit_test(<name> <target> [args...])
#     A C++ test executable that needs no GPU. Label `unit`.
#
#   tilec_add_gpu_test(<name> <target> [args...])
#     A test that needs a CUDA GPU. It must exit with 77 (TILEC_SKIP_CODE)
#     after printing why ("no GPU: skipped ...") when no GPU or driver is
#     present; ctest then reports it as skipped, not passed. A test whose
#     output contains "no GPU: skipped" (e.g. every case GTEST_SKIP()s with
#     that message) is reported as skipped too. Label `gpu`.
include_guard(GLOBAL)

set(TILEC_SKIP_CODE 77)

function(tilec_add_unit_test name target)
  add_test(NAME ${name} COMMAND ${target} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300)
endfunction()

function(tilec_add_gpu_test name target)
  add_test(NAME ${name} COMMAND ${target} ${ARGN})
  set_tests_properties(${name} PROPERTIES
    LABELS gpu
    SKIP_RETURN_CODE ${TILEC_SKIP_CODE}
    SKIP_REGULAR_EXPRESSION "no GPU: skipped"
    TIMEOUT 600)
endfunction()
