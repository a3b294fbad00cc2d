#!/usr/bin/env bash
# Configures and builds tilec (Release, Ninja).
#
#   scripts/build.sh [cmake args...]            build every target into build/
#   BUILD_DIR=build-static scripts/build.sh -DTILEC_STATIC_LLVM=ON
#   TARGETS="tilec tile-opt" scripts/build.sh   build only these targets
#
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release),
# JOBS (default nproc), TARGETS (default: all), CONFIGURE_ONLY=1 (no build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
[[ $BUILD_DIR = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
BUILD_TYPE="${BUILD_TYPE:-Release}"
JOBS="${JOBS:-$(nproc)}"

# Configure when there is no build yet, or when arguments change the cache.
if [[ ! -f "$BUILD_DIR/build.ninja" || $# -gt 0 ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "$@"
fi

[[ ${CONFIGURE_ONLY:-0} = 1 ]] && exit 0
# shellcheck disable=SC2086  # TARGETS is a list
ninja -C "$BUILD_DIR" -j "$JOBS" ${TARGETS:-}
