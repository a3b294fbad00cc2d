#!/usr/bin/env bash
# The test command (README; .ci/run calls it): installs what is missing,
# builds every target into build/, runs the lit suite (`ninja check-tile`)
# and then every other ctest test (unit + GPU; GPU tests are reported as
# skipped where there is no GPU), then, when CI=true or SANITIZE=1 (not
# SANITIZE=0), scripts/sanitize.sh: the ASan + UBSan unit tests, the mutation
# corpus and FUZZ_SECONDS (120) of the frontend fuzzer, in build-fuzz/.
# Exits non-zero if anything failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
cd "$ROOT"

step() { printf '\n==== %s\n' "$*"; }
t0=$SECONDS

step "install dependencies"
bash scripts/install-deps.sh

step "build (all targets, -j${JOBS:-$(nproc)})"
tb=$SECONDS
BUILD_DIR="$BUILD_DIR" bash scripts/build.sh
build_s=$((SECONDS - tb))

if nvidia-smi -L >/dev/null 2>&1 || [[ -e /dev/nvidia0 ]]; then
  echo "GPU present: GPU tests will run"
else
  echo "no GPU: GPU tests will be skipped (lit: UNSUPPORTED, ctest: Skipped)"
fi

status=0
step "lit suite (ninja check-tile)"
tl=$SECONDS
ninja -C "$BUILD_DIR" check-tile || status=1
lit_s=$((SECONDS - tl))

step "unit and GPU tests (ctest, lit excluded: it ran above)"
tc=$SECONDS
(cd "$BUILD_DIR" && ctest --output-on-failure -LE '^lit$' -j "${JOBS:-$(nproc)}") || status=1
ctest_s=$((SECONDS - tc))

san="skipped (CI=true or SANITIZE=1 runs it)"
if [[ ${SANITIZE:-} = 1 || ( ${CI:-} = true && ${SANITIZE:-} != 0 ) ]]; then
  step "sanitizers and fuzzer (scripts/sanitize.sh)"
  ts=$SECONDS
  if bash scripts/sanitize.sh; then
    san="passed $((SECONDS - ts))s"
  else
    san="FAILED $((SECONDS - ts))s"
    status=1
  fi
fi

step "summary"
echo "build ${build_s}s, lit ${lit_s}s, ctest ${ctest_s}s, sanitize ${san}, total $((SECONDS - t0))s"
if ((status)); then
  echo "FAILED"
else
  echo "all tests passed"
fi
exit $status
