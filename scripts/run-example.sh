#!/usr/bin/env bash
# The main job (README): installs what is missing, builds tilec, compiles the
# FlashAttention-2 forward spec examples/attention/flash_fwd.tile to PTX (and
# cubin where ptxas is present) with its manifest, prints a summary, and
#   * with a GPU: JIT-compiles, launches and checks it for bf16, f16 and f32
#     (build/bin/flash_fwd_jit);
#   * without one: says so, and runs the JIT example once to show that it
#     fails cleanly ("no CUDA driver ...", non-zero exit, no crash).
#
# Environment: BUILD_DIR (default build), ARCH (default: the GPU's, else sm_80).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
SPEC="$ROOT/examples/attention/flash_fwd.tile"
OUT_DIR="$BUILD_DIR/examples"
OUT="$OUT_DIR/flash_fwd"
cd "$ROOT"

step() { printf '\n==== %s\n' "$*"; }

step "install dependencies"
bash scripts/install-deps.sh

have_gpu=0
if nvidia-smi -L >/dev/null 2>&1; then
  have_gpu=1
fi

step "build tilec and the JIT example"
BUILD_DIR="$BUILD_DIR" CONFIGURE_ONLY=1 bash scripts/build.sh >/dev/null
targets=(tilec)
if ninja -C "$BUILD_DIR" -t targets all 2>/dev/null | grep -q '^flash_fwd_jit:'; then
  targets+=(flash_fwd_jit)
fi
BUILD_DIR="$BUILD_DIR" TARGETS="${targets[*]}" bash scripts/build.sh

# Target architecture: the GPU's when there is one.
if [[ -z ${ARCH:-} ]]; then
  ARCH=sm_80
  if ((have_gpu)); then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
    case "$cc" in
      90) ARCH=sm_90a ;;
      8?) ARCH=sm_$cc ;;
    esac
  fi
fi

emit=ptx
if command -v ptxas >/dev/null || [[ -x /usr/local/cuda/bin/ptxas ]]; then
  emit=cubin
fi

step "compile $(realpath --relative-to="$ROOT" "$SPEC") (-emit=$emit -arch=$ARCH)"
mkdir -p "$OUT_DIR"
rm -f "$OUT".*
set -x
"$BUILD_DIR/bin/tilec" "$SPEC" -emit="$emit" -arch="$ARCH" -o "$OUT"
{ set +x; } 2>/dev/null

step "summary"
shopt -s nullglob
for f in "$OUT" "$OUT".*; do
  [[ -f $f ]] || continue
  printf '  %-44s %8d bytes\n' "$(realpath --relative-to="$ROOT" "$f")" "$(stat -c %s "$f")"
done
ptx=("$OUT"*.ptx)
if ((${#ptx[@]})); then
  p=${ptx[0]}
  echo "  PTX: $(grep -c '' "$p") lines; kernels: $(grep -oE '\.entry [A-Za-z0-9_]+' "$p" | cut -d' ' -f2 | tr '\n' ' ')"
  for pat in mma.sync.aligned ldmatrix ex2.approx cp.async shfl.sync ld.global.v4; do
    printf '    %-18s %5d\n' "$pat" "$(grep -c "$pat" "$p" || true)"
  done
fi
for m in "$OUT"*.json "$OUT"*.manifest; do
  echo "  manifest $(basename "$m"):"
  sed 's/^/    /' "$m"
done

JIT="$BUILD_DIR/bin/flash_fwd_jit"
if [[ ! -x $JIT ]]; then
  step "no $JIT target in this tree yet: skipping the JIT example"
  exit 0
fi

if ((have_gpu)); then
  step "launch and check on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  for dt in bf16 f16 f32; do
    echo "-- $dt"
    "$JIT" --dtype "$dt"
  done
  echo "all launches passed"
else
  step "no GPU: skipping launch"
  echo "running $(basename "$JIT") once to show it fails cleanly without a driver:"
  set +e
  "$JIT" --dtype bf16
  rc=$?
  set -e
  if ((rc == 0)); then
    echo "unexpected: it succeeded without a GPU"
  elif ((rc < 128)); then
    echo "OK: clean failure (exit $rc), as expected without a GPU"
  else
    echo "error: the JIT example crashed (exit $rc, signal $((rc - 128)))" >&2
    exit 1
  fi
fi
