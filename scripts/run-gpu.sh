#!/usr/bin/env bash
# Runs the tilec bundle (scripts/bundle.sh) on a GPU machine that has no LLVM:
# unpacks tilec-bundle.tar.xz into /tmp, then runs the unit tests, the GPU
# suite, the PyTorch tests and training example (python/, when torch is
# there), the JIT example for bf16/f16/f32, an AOT compile with tilec and
# the kernel dossier of flash_fwd (dossier.json and dossier.md into $OUT).
#
#   bash bundle/run-gpu.sh [path/to/tilec-bundle.tar.xz]
#
# Environment: DEST (default /tmp/tilec-bundle), ARCH (default: the GPU's),
# ONLY (a regex: run only the steps whose name matches), GPU_TEST_ARGS (extra
# arguments of tile-gpu-tests, e.g. --quick), LOG_DIR (default
# $OUT/tilec-logs when $OUT is set, else DEST/logs): every step's full output,
# STEP_TIMEOUT (seconds, default 900; 0: none): a step that runs longer (a
# kernel that hangs) is killed and reported as timed out, and the next runs.
# UNPACK_ONLY=1 unpacks, prints the build info and the GPU, and exits 0 (for
# a command that runs its own steps from DEST).
# SANITIZE=1 adds compute-sanitizer memcheck/racecheck/synccheck steps over
# small shapes of every example kernel (SANITIZE_TESTS: GPU test binaries,
# run with --quick under each tool too).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARBALL="${1:-$HERE/tilec-bundle.tar.xz}"
DEST="${DEST:-/tmp/tilec-bundle}"

if [[ -f $TARBALL ]]; then
  rm -rf "$DEST"
  mkdir -p "$(dirname "$DEST")"
  tmp=$(mktemp -d)
  tar -C "$tmp" -xJf "$TARBALL" || { echo "error: cannot unpack $TARBALL" >&2; exit 1; }
  mv "$tmp"/tilec-bundle "$DEST"
  rmdir "$tmp"
elif [[ -d $HERE/bin && -d $HERE/lib ]]; then
  DEST="$HERE" # already unpacked
else
  echo "error: no bundle at $TARBALL (build it with scripts/bundle.sh)" >&2
  exit 1
fi

export LD_LIBRARY_PATH="$DEST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$DEST/bin:$PATH:/usr/local/cuda/bin"
# The test binaries hold build-machine paths; these point them at the bundle.
export TILEC_SOURCE_DIR="$DEST" # where examples/ and test .tile files are
export TILEC_FLASH_FWD_TILE="$DEST/examples/attention/flash_fwd.tile"
export TILEC_FAKECUDA_PATH="$DEST/lib/libtile-fakecuda.so"
export TILEC_CACHE_DIR="${TILEC_CACHE_DIR:-$(mktemp -d /tmp/tilec-cache.XXXXXX)}"
LOG_DIR="${LOG_DIR:-${OUT:+$OUT/tilec-logs}}"
LOG_DIR="${LOG_DIR:-$DEST/logs}"
mkdir -p "$LOG_DIR"
cd "$DEST"

cat "$DEST/BUILD-INFO" 2>/dev/null
echo "machine: $(uname -n), $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}")"
if gpus=$(nvidia-smi -L 2>/dev/null); then
  echo "$gpus"
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
  case "$cc" in 90) def_arch=sm_90a ;; *) def_arch=sm_$cc ;; esac
else
  echo "no GPU: GPU steps will report skipped or fail"
  def_arch=sm_80
fi
ARCH="${ARCH:-$def_arch}"
command -v ptxas >/dev/null && echo "ptxas: $(ptxas --version | tail -1)"
[[ ${UNPACK_ONLY:-} == 1 ]] && exit 0

names=() results=() times=()
run_step() { # run_step NAME CMD...
  local name=$1; shift
  if [[ -n ${ONLY:-} && ! $name =~ $ONLY ]]; then return; fi
  local log="$LOG_DIR/$name.log" t=$SECONDS rc
  printf '\n---- %s: %s\n' "$name" "$*"
  # Line-buffered stdout: a step that times out still shows its last case.
  command -v stdbuf >/dev/null && set -- stdbuf -oL -eL "$@"
  if ((${STEP_TIMEOUT:-900} > 0)) && command -v timeout >/dev/null; then
    timeout -k 10 "${STEP_TIMEOUT:-900}" "$@" >"$log" 2>&1 </dev/null
  else
    "$@" >"$log" 2>&1 </dev/null
  fi
  rc=$?
  names+=("$name") times+=($((SECONDS - t)))
  if ((rc == 124 || rc == 137)) && ((${STEP_TIMEOUT:-900} > 0)); then
    results+=("TIMED OUT (${STEP_TIMEOUT:-900}s)"); tail -n 20 "$log"
  elif ((rc == 0)); then
    if grep -q '\[  SKIPPED \]' "$log"; then results+=("ok (some skipped)"); else results+=(ok); fi
    tail -n 3 "$log"
  elif ((rc == 77)); then
    results+=(skipped); tail -n 3 "$log"
  else
    results+=("FAILED ($rc)"); tail -n 40 "$log"
  fi
}

for t in "$DEST"/bin/tile-unit-*; do
  [[ -x $t ]] && run_step "$(basename "$t")" "$t" --gtest_brief=1
done
# The GPU suites, one per line of test/GPU/suites.txt (the list ctest uses).
if [[ -x $DEST/bin/tile-gpu-tests && -f $DEST/test/GPU/suites.txt ]]; then
  while read -r name args; do
    [[ -z $name || $name == \#* ]] && continue
    args=${args//@CONFIGS@/$DEST/examples/attention/configs}
    # shellcheck disable=SC2086  # args and GPU_TEST_ARGS are lists
    run_step "$name" "$DEST/bin/tile-gpu-tests" --tile "$TILEC_FLASH_FWD_TILE" \
      $args ${GPU_TEST_ARGS:-}
  done < "$DEST/test/GPU/suites.txt"
fi
for t in tile-gpu-persistent tile-gpu-cta-programs tile-gpu-launch-contract \
         tile-gpu-varlen tile-gpu-decode tile-gpu-decode-api tile-gpu-attention-api \
         tile-gpu-attention-bwd-api tile-gpu-bwd tile-gpu-philox tile-gpu-dropout tile-gpu-atomic tile-gpu-fp8 tile-gpu-fp8-attn \
         tile-gpu-linear-attn tile-gpu-linear-attn-bwd tile-gpu-variants; do
  [[ -x $DEST/bin/$t ]] && run_step "$t" "$DEST/bin/$t"
done
# Paged decode with its page ids a block ahead (the schedule's index_ahead,
# opt-in: docs/schedule.md).
[[ -x $DEST/bin/tile-gpu-decode ]] &&
  run_step tile-gpu-decode-index-ahead "$DEST/bin/tile-gpu-decode" --schedule index_ahead
# K and V through cp.async rings (the schedule's cp_async; docs/schedule.md).
[[ -x $DEST/bin/tile-gpu-decode ]] &&
  run_step tile-gpu-decode-cp-async "$DEST/bin/tile-gpu-decode" --schedule cp_async=true,num_stages=2
# A schedule the backward's tables do not use yet: a producer warpgroup
# over rings two products read (Q and dO of dK/dV, Kᵀ of dQ). Quick shapes
# take seconds: a short limit, so a stage-release deadlock costs little.
[[ -x $DEST/bin/tile-gpu-bwd ]] &&
  STEP_TIMEOUT=180 run_step tile-gpu-bwd-producer "$DEST/bin/tile-gpu-bwd" --quick \
    --schedule producer=true
# PyTorch (python3 with torch; exit 77, "skipped", without): tilec.attention
# against SDPA, gradients, torch.compile, CUDA-graph replay; then 100 training
# steps of a tiny model on tilec and on SDPA, and 50 of an fp32 layer whose
# logits pass 88 (a naive softmax goes NaN, tilec's gradients match fp64
# at every step). The package finds
# lib/libtilec_c.so.1 beside it (DEST/python/tilec -> DEST/lib).
if [[ -f $DEST/python/tests/test_attention.py ]]; then
  run_step python-attention python3 "$DEST/python/tests/test_attention.py"
  run_step python-train-tiny python3 "$DEST/examples/python/train_tiny.py"
  run_step python-train-sharpen python3 "$DEST/examples/python/train_sharpen.py"
fi
if [[ -x $DEST/bin/tilec && -f $DEST/examples/attention/flash_fwd.tile ]]; then
  mkdir -p "$DEST/out"
  emit=ptx; command -v ptxas >/dev/null && emit=cubin
  run_step tilec-aot "$DEST/bin/tilec" examples/attention/flash_fwd.tile \
    -emit=$emit -arch="$ARCH" -o "$DEST/out/flash_fwd"
fi
if [[ -x $DEST/bin/flash_fwd_jit ]]; then
  for dt in bf16 f16 f32; do
    run_step "flash_fwd_jit-$dt" "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" --dtype "$dt"
  done
  # [B, S, H, D] (flash_fwd_bshd.tile, rows H*D apart: TMA with a run-time
  # stride on sm_90a) against [B*H, S, D] on the same data.
  run_step flash_fwd_jit-bshd-bf16 "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    --layout both --dtype bf16 --seqlen 1000 --batch-heads 24 --heads 8 --head-dim 128
  # Head dims that are not powers of two (tile-pad-shapes).
  run_step flash_fwd_jit-d96-bf16-causal "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    --dtype bf16 --causal --seqlen 1000 --batch-heads 8 --head-dim 96
  run_step flash_fwd_jit-d192-f16 "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    --dtype f16 --seqlen 777 --batch-heads 6 --head-dim 192
  run_step flash_fwd_jit-d80-f32 "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    --dtype f32 --seqlen 300 --batch-heads 4 --head-dim 80
  run_step flash_fwd_jit-bshd-f16-causal "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    --layout both --dtype f16 --causal --seqlen 777 --batch-heads 12 --heads 3 --head-dim 64
  # B·H = 70 000: grids over 65 535 along y ([B·H, S, D]) and, with H = 1,
  # z ([B, S, H, D]) run as several launches (tile-grid-offsets, the
  # manifest's gridArgs). The kernel defaults (--no-table) are not
  # persistent, so the split launches are what runs; then 8 warps (two
  # warpgroups, causal), and the table's (persistent) choice.
  bh=(--dtype bf16 --batch-heads 70000 --head-dim 64 --iters 2 --warmup-ms 0)
  run_step flash_fwd_jit-bh70000 "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    "${bh[@]}" --no-table --layout both --heads 1 --seqlen 100
  run_step flash_fwd_jit-bh70000-8warps "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    "${bh[@]}" --no-table --schedule num_warps=8 --causal --seqlen 64
  run_step flash_fwd_jit-bh70000-table "$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" \
    "${bh[@]}" --seqlen 64
fi

# The kernel dossier (scripts/tilec-dossier.py): flash_fwd's config-table
# configurations compiled (registers and spills from ptxas -v), the
# toolchain, the GPU, parity runs and a few timings, as dossier.json and
# dossier.md in $OUT (else the log directory). DOSSIER_ARGS: more flags
# (default --quick: fewer parity runs and shapes).
if [[ -f $DEST/tilec-dossier.py && -x $DEST/bin/tilec ]] && command -v python3 >/dev/null; then
  # shellcheck disable=SC2086  # DOSSIER_ARGS is a list
  run_step dossier python3 "$DEST/tilec-dossier.py" "$TILEC_FLASH_FWD_TILE" \
    --tilec "$DEST/bin/tilec" --bin "$DEST/bin" --arch "$ARCH" --out "${OUT:-$LOG_DIR}" \
    ${DOSSIER_ARGS:---quick}
fi

# compute-sanitizer (SANITIZE=1; memcheck, racecheck and synccheck are 10 to
# 1000x slower than a plain run): every example kernel on small shapes, one
# step per kernel and tool, through flash_fwd_jit (which compiles by JIT,
# launches once and checks) or the kernel's GPU test.
if [[ ${SANITIZE:-0} = 1 && -x $DEST/bin/flash_fwd_jit ]] && command -v compute-sanitizer >/dev/null; then
  jit=("$DEST/bin/flash_fwd_jit" "$TILEC_FLASH_FWD_TILE" --iters 1 --warmup-ms 0)
  small=(--seqlen 200 --batch-heads 4 --heads 2)
  for tool in memcheck racecheck synccheck; do
    san=(compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20)
    # The config table's entry (persistent, producer on sm_90a), then the
    # kernel's defaults (4 warps, TMA rings) and ping-pong over 8 warps.
    run_step "sanitize-$tool-flash_fwd-table" "${san[@]}" "${jit[@]}" "${small[@]}" --causal --head-dim 64
    run_step "sanitize-$tool-flash_fwd-defaults" "${san[@]}" "${jit[@]}" "${small[@]}" --no-table --head-dim 64
    run_step "sanitize-$tool-flash_fwd-8warps" "${san[@]}" "${jit[@]}" "${small[@]}" --no-table \
      --schedule num_warps=8 --head-dim 128
    run_step "sanitize-$tool-flash_fwd_bshd" "${san[@]}" "${jit[@]}" "${small[@]}" --layout bshd --head-dim 128 \
      "$DEST/examples/attention/flash_fwd_bshd.tile"
    run_step "sanitize-$tool-flash_fwd-f32" "${san[@]}" "${jit[@]}" "${small[@]}" --dtype f32 --head-dim 64
    # The forward variants (flex_fwd, flex_fwd_sparse): a window smaller
    # than a block and the block-sparse kernel (TMA at loaded block
    # indices), default and fast schedules, from tile-gpu-variants.
    for only in window_l5 sparse_bhsd; do
      [[ -x $DEST/bin/tile-gpu-variants ]] && run_step "sanitize-$tool-variants-$only" \
        "${san[@]}" "$DEST/bin/tile-gpu-variants" --quick --only "$only"
    done
    for t in ${SANITIZE_TESTS:-}; do # GPU test binaries that take small shapes
      [[ -x $DEST/bin/$t ]] && run_step "sanitize-$tool-$t" "${san[@]}" "$DEST/bin/$t" --quick
    done
  done
fi

echo
echo "==== summary (logs in $LOG_DIR)"
status=0
for i in "${!names[@]}"; do
  printf '  %-28s %-20s %4ss\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
  [[ ${results[$i]} == FAILED* || ${results[$i]} == TIMED* ]] && status=1
done
((${#names[@]})) || { echo "  nothing ran"; status=1; }
exit $status
