#!/usr/bin/env bash
# Builds the self-contained bundle for a GPU machine without LLVM:
#   build-static/  a build with -DTILEC_STATIC_LLVM=ON (LLVM/MLIR linked in)
#   bundle/tilec-bundle.tar.xz   bin/ (tilec, flash_fwd_jit, tile-gpu-tests,
#                  tile-unit-*, ...), lib/ (the project's shared libraries,
#                  libTileCompiler.so.X.Y.Z with its SONAME links),
#                  include/tile/ (the public headers), examples/ and test
#                  .tile files, python/ (the tilec package, its tests) and
#                  examples/python/, run-gpu.sh
#   bundle/run-gpu.sh            unpacks into /tmp and runs the GPU suite and
#                  the examples there:  bash bundle/run-gpu.sh
# The binaries need only glibc, libstdc++ and (to launch) libcuda.so.1.
#
# Environment: BUILD_DIR (default build-static), BUNDLE_DIR (default bundle),
# JOBS (default nproc), TARGETS (default: all), MAX_MIB (default 64: fail
# above this size), SKIP_BUILD=1 (package what BUILD_DIR holds). tile-opt
# (for lit only) is left out.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-static}"
[[ $BUILD_DIR = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
OUT_DIR="${BUNDLE_DIR:-$ROOT/bundle}"
[[ $OUT_DIR = /* ]] || OUT_DIR="$ROOT/$OUT_DIR"
NAME=tilec-bundle
STAGE="$OUT_DIR/$NAME"
MAX_MIB="${MAX_MIB:-64}"
cd "$ROOT"

bash scripts/install-deps.sh xz-utils binutils file

echo "==== static build in $(realpath --relative-to="$ROOT" "$BUILD_DIR")"
if [[ ${SKIP_BUILD:-0} = 1 ]]; then
  grep -q '^TILEC_STATIC_LLVM:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" ||
    { echo "error: $BUILD_DIR is not a TILEC_STATIC_LLVM build" >&2; exit 1; }
  echo "(SKIP_BUILD=1: packaging what is there)"
elif [[ -f $BUILD_DIR/CMakeCache.txt ]] && grep -q '^TILEC_STATIC_LLVM:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  BUILD_DIR="$BUILD_DIR" bash scripts/build.sh
else
  BUILD_DIR="$BUILD_DIR" bash scripts/build.sh -DTILEC_STATIC_LLVM=ON
fi

echo "==== staging $STAGE"
rm -rf "$STAGE" "$OUT_DIR/$NAME.tar.xz"
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/include/tile"

is_elf() { file -b "$1" | grep -q '^ELF'; }
for f in "$BUILD_DIR"/bin/*; do
  [[ $(basename "$f") == tile-opt ]] && continue
  if [[ -f $f && -x $f ]] && is_elf "$f"; then cp "$f" "$STAGE/bin/"; fi
done
shopt -s nullglob
# Versioned libraries (libTileCompiler.so.0.1.0) keep their SONAME links
# as links, so that each library is in the archive once.
for f in "$BUILD_DIR"/lib/*.so "$BUILD_DIR"/lib/*.so.*; do
  if [[ -L $f && $(readlink "$f") != */* ]]; then cp -P "$f" "$STAGE/lib/"
  elif is_elf "$f"; then cp -L "$f" "$STAGE/lib/"; fi
done
for f in "$STAGE"/bin/* "$STAGE"/lib/*; do
  [[ -L $f ]] || strip --strip-unneeded "$f" 2>/dev/null || true
done

# The public headers (docs/using.md), for host programs built against lib/.
cp include/tile/*.h "$BUILD_DIR/tile/Version.h" "$STAGE/include/tile/"

# The .tile sources, config tables and suite list the examples and tests read.
while IFS= read -r -d '' f; do
  mkdir -p "$STAGE/$(dirname "$f")"
  cp "$f" "$STAGE/$f"
done < <(find examples test \( -name '*.tile' -o -path 'examples/*/configs/*.json' \
           -o -path test/GPU/suites.txt \) -print0 2>/dev/null)
# The Python package (ctypes over lib/libtilec_c.so.1), its tests and the
# training example.
while IFS= read -r -d '' f; do
  mkdir -p "$STAGE/$(dirname "$f")"
  cp "$f" "$STAGE/$f"
done < <(find python examples/python -name '*.py' -print0 2>/dev/null)
cp scripts/run-gpu.sh "$STAGE/run-gpu.sh"
cp scripts/tilec-dossier.py "$STAGE/tilec-dossier.py"
cp scripts/run-gpu.sh "$OUT_DIR/run-gpu.sh"
{
  echo "tilec bundle"
  echo "built:  $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "source: $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'no commit'))"
  echo "llvm:   $(/usr/lib/llvm-22/bin/llvm-config --version)"
} > "$STAGE/BUILD-INFO"

# Self-contained: no LLVM/MLIR shared library may be needed.
bad=0
for f in "$STAGE"/bin/* "$STAGE"/lib/*; do
  [[ -L $f ]] && continue
  if LD_LIBRARY_PATH="$STAGE/lib" ldd "$f" 2>/dev/null | grep -E 'libLLVM|libMLIR|not found'; then
    echo "error: $(basename "$f") needs a library the GPU machine lacks" >&2
    bad=1
  fi
done
((bad == 0))

echo "==== contents (stripped)"
(cd "$STAGE" && find bin lib include -type f -printf '  %-40p %9s bytes\n' | sort)
(cd "$STAGE" && find lib -type l -printf '  %-40p -> %l\n' | sort)
echo "  needed shared libraries (all files):"
for f in "$STAGE"/bin/* "$STAGE"/lib/*; do
  [[ -L $f ]] && continue
  readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
done | sort | uniq -c | sed 's/^/   /'

tar -C "$OUT_DIR" -cJf "$OUT_DIR/$NAME.tar.xz" "$NAME"
size=$(stat -c %s "$OUT_DIR/$NAME.tar.xz")
echo "==== $(realpath --relative-to="$ROOT" "$OUT_DIR/$NAME.tar.xz"): $((size / 1024)) KiB" \
     "(unpacked $(du -sk "$STAGE" | cut -f1) KiB)"
# Only the archive and run-gpu.sh stay: the directory is what gets carried.
rm -rf "$STAGE"
if ((size > MAX_MIB * 1024 * 1024)); then
  echo "error: the bundle is over ${MAX_MIB} MiB" >&2
  exit 1
fi
rel=$(realpath --relative-to="$ROOT" "$OUT_DIR")
echo "on the GPU machine: bash $rel/run-gpu.sh   (carry the $rel/ directory)"
