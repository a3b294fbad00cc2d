#!/bin/bash
set -u
nvidia-smi -L > $OUT/gpu.txt
STEP_TIMEOUT=300 bash bundle/run-gpu.sh > $OUT/suite.txt 2>&1
grep -A40 "==== summary" $OUT/suite.txt
B=/tmp/tilec-bundle; export LD_LIBRARY_PATH=$B/lib TILEC_CACHE_DIR=$(mktemp -d)
# memcheck of the default configuration's TMA store path (whole and cut boxes)
timeout 200 compute-sanitizer --tool memcheck $B/bin/flash_fwd_jit $B/examples/attention/flash_fwd.tile --seqlen 239 --batch-heads 4 --iters 1 > $OUT/memcheck.txt 2>&1; echo "memcheck rc $?"; tail -3 $OUT/memcheck.txt
timeout 200 compute-sanitizer --tool racecheck $B/bin/flash_fwd_jit $B/examples/attention/flash_fwd.tile --seqlen 239 --batch-heads 4 --iters 1 > $OUT/racecheck.txt 2>&1; echo "racecheck rc $?"; tail -3 $OUT/racecheck.txt
