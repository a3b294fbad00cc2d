#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run, and the frontend fuzzer.
# scripts/test.sh runs it after the normal suite when CI=true (or SANITIZE=1).
#
#   bash scripts/sanitize.sh                      the CI run (FUZZ_SECONDS=120)
#   FUZZ_SECONDS=600 FUZZ_SEED=0 bash scripts/sanitize.sh   a longer developer
#                                                 run with a random seed
#
# Steps (all run; the script exits non-zero if any of them found something):
#   1. configure $SAN_BUILD_DIR (default build-fuzz/) with clang-14,
#      -DTILEC_FUZZ=ON (cmake/Sanitizers.cmake: ASan + UBSan everywhere, UB
#      aborts, libFuzzer coverage) and build only what this script runs:
#      tile-frontend-fuzzer and the LLVM-free unit tests of the runtime, the
#      cache and the JIT (fake compiler), plus the frontend's context test;
#   2. run those unit tests under ASan/UBSan (halt_on_error, leak checks);
#   3. replay through the fuzzer target, once each: test/fuzz/corpus/ (inputs
#      of past findings, stress inputs; *.fuzz) and the mutants test/fuzz/mutate.py writes of
#      examples/**/*.tile (MUTANTS per strategy) and test/**/*.tile (a tenth);
#   4. fuzz buildModule + dumpAST for FUZZ_SECONDS (default 120) from a corpus
#      seeded with examples/**/*.tile and test/**/*.tile (copied to a temp
#      folder), seed FUZZ_SEED (default 1, so CI runs are reproducible; 0 is
#      random). Crashing inputs are saved in $SAN_BUILD_DIR/fuzz-artifacts/;
#      reproduce one with `build-fuzz/bin/tile-frontend-fuzzer FILE`, then add
#      it to test/fuzz/corpus/ with the fix.
#
# Environment: SAN_BUILD_DIR, FUZZ_SECONDS, FUZZ_SEED, MUTANTS (default 100),
# JOBS (default nproc), CC/CXX for the build (default clang-14/clang++-14).
# Debian's LLVM is not instrumented, hence ASAN_OPTIONS=allow_user_poisoning=0
# (see cmake/Sanitizers.cmake).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SAN_BUILD_DIR="${SAN_BUILD_DIR:-$ROOT/build-fuzz}"
[[ $SAN_BUILD_DIR = /* ]] || SAN_BUILD_DIR="$ROOT/$SAN_BUILD_DIR"
FUZZ_SECONDS="${FUZZ_SECONDS:-120}"
FUZZ_SEED="${FUZZ_SEED:-1}"
MUTANTS="${MUTANTS:-100}"
JOBS="${JOBS:-$(nproc)}"
cd "$ROOT"

step() { printf '\n==== sanitize: %s\n' "$*"; }
t0=$SECONDS
status=0
failed=()

step "dependencies (clang-14, libclang-rt-14-dev)"
bash scripts/install-deps.sh clang-14 libclang-rt-14-dev

step "configure and build ($SAN_BUILD_DIR, -j$JOBS)"
tb=$SECONDS
if [[ ! -f "$SAN_BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$SAN_BUILD_DIR" \
    -DCMAKE_C_COMPILER="${CC:-clang-14}" -DCMAKE_CXX_COMPILER="${CXX:-clang++-14}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DTILEC_FUZZ=ON
fi
UNIT_TESTS=(tile-unit-runtime tile-unit-cache tile-unit-frontend)
ninja -C "$SAN_BUILD_DIR" -j "$JOBS" tile-frontend-fuzzer tile-fakecuda \
  "${UNIT_TESTS[@]}"
build_s=$((SECONDS - tb))
FUZZER="$SAN_BUILD_DIR/bin/tile-frontend-fuzzer"

export ASAN_OPTIONS="allow_user_poisoning=0:halt_on_error=1:detect_leaks=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/tilec-sanitize.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

step "unit tests under ASan + UBSan"
tu=$SECONDS
unit_summary=()
for t in "${UNIT_TESTS[@]}"; do
  log="$TMP/$t.log"
  # ctest's working directory for these tests (gtest_discover_tests).
  if (cd "$SAN_BUILD_DIR/test/Unit" && "$SAN_BUILD_DIR/bin/$t") >"$log" 2>&1; then
    unit_summary+=("$t $(grep -oE '[0-9]+ tests?' "$log" | tail -1) passed")
    echo "$t: $(tail -1 "$log")"
  else
    cat "$log"
    echo "sanitize: $t FAILED (report above)"
    unit_summary+=("$t FAILED")
    failed+=("$t")
    status=1
  fi
done
unit_s=$((SECONDS - tu))

# Options every fuzzer run shares: a hang of 30 s or 4 GiB is a finding.
FUZZ_OPTS=(-timeout=30 -rss_limit_mb=4096 -print_final_stats=1)
ARTIFACTS="$SAN_BUILD_DIR/fuzz-artifacts"
mkdir -p "$ARTIFACTS"

# Runs the fuzzer; its log goes to $1. Prints the log's tail and the report
# on failure.
run_fuzzer() {
  local log=$1
  shift
  if (cd "$TMP" && "$FUZZER" "${FUZZ_OPTS[@]}" -artifact_prefix="$ARTIFACTS/" "$@") \
      >"$log" 2>&1; then
    grep -E '^(Done|stat::)' "$log" || true
    return 0
  fi
  # The sanitizer or libFuzzer report, without the mutation chatter.
  grep -vE '^#[0-9]+\s+(NEW|REDUCE|pulse|RELOAD)' "$log" | tail -150
  return 1
}
stats() { sed -nE 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1 execs in \2 s/p' "$1" | tail -1; }

step "replay: test/fuzz/corpus and mutate.py mutants"
tr=$SECONDS
mkdir -p "$TMP/replay"
if compgen -G "test/fuzz/corpus/*" >/dev/null; then
  cp test/fuzz/corpus/* "$TMP/replay/"
fi
python3 test/fuzz/mutate.py --write "$TMP/replay" --examples examples \
  --mutants "$MUTANTS" --seed 1
python3 test/fuzz/mutate.py --write "$TMP/replay" --examples test \
  --mutants $(( (MUTANTS + 9) / 10 )) --seed 1
nreplay=$(find "$TMP/replay" -type f | wc -l)
if run_fuzzer "$TMP/replay.log" -runs=0 "$TMP/replay"; then
  replay_summary="$nreplay inputs replayed"
else
  echo "sanitize: replay FAILED: the input is in $ARTIFACTS/"
  replay_summary="replay FAILED"
  failed+=(replay)
  status=1
fi
replay_s=$((SECONDS - tr))

step "fuzz ${FUZZ_SECONDS}s (seed $FUZZ_SEED) from examples/ and test/ .tile files"
mkdir -p "$TMP/corpus"
while IFS= read -r -d '' f; do
  cp "$f" "$TMP/corpus/$(echo "$f" | tr / _)"
done < <(find examples test -name '*.tile' -print0)
echo "seed corpus: $(find "$TMP/corpus" -type f | wc -l) files"
if run_fuzzer "$TMP/fuzz.log" -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" \
    "$TMP/corpus"; then
  fuzz_summary="fuzz $(stats "$TMP/fuzz.log")"
else
  echo "sanitize: fuzzer FAILED: the input is in $ARTIFACTS/"
  fuzz_summary="fuzz FAILED after $(stats "$TMP/fuzz.log")"
  failed+=(fuzz)
  status=1
fi

step "summary"
echo "sanitize: build ${build_s}s; unit ${unit_s}s: $(IFS=,; echo "${unit_summary[*]}" | sed 's/,/, /g')"
echo "sanitize: replay ${replay_s}s: $replay_summary; $fuzz_summary (seed $FUZZ_SEED)"
if ((status)); then
  echo "sanitize: FAILED (${failed[*]}), total $((SECONDS - t0))s"
else
  echo "sanitize: passed, total $((SECONDS - t0))s"
fi
exit $status
