#!/usr/bin/env bash
# The test command (README; .ci/run calls it): installs what is missing,
# builds every target into build/, runs the lit suite (`ninja check-tile`)
# and then every other ctest test (unit + GPU; GPU tests are reported as
# skipped where there is no GPU). Exits non-zero if anything failed.
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

step "summary"
echo "build ${build_s}s, lit ${lit_s}s, ctest ${ctest_s}s, total $((SECONDS - t0))s"
if ((status)); then
  echo "FAILED"
else
  echo "all tests passed"
fi
exit $status
