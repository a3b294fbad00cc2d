#!/bin/bash
# cuDNN's loop structure: no intra-warpgroup overlap (TILEC_NO_OVERLAP), masks behind a branch in the
# loop (TILEC_GUARD_WHERE, entry 76), ping-pong turns at D = 64 (TILEC_TURN_MIN=64).
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
mkdir -p /tmp/w
mk() { printf '#!/bin/sh\n%s exec %s "$@"\n' "$2" $T > /tmp/w/$1; chmod +x /tmp/w/$1; }
mk no "TILEC_NO_OVERLAP=1"
mk nog "TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1"
mk nogt "TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1 TILEC_TURN_MIN=64"
mk not "TILEC_NO_OVERLAP=1 TILEC_TURN_MIN=64"
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant base=$T:$C --variant NO=/tmp/w/no:$C --variant NOG=/tmp/w/nog:$C --variant NOGT=/tmp/w/nogt:$C --variant NOT=/tmp/w/not:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-cudnn-loop-d64c.txt 2>&1
tail -4 $OUT/ab-cudnn-loop-d64c.txt
export TILEC_CACHE_DIR=$(mktemp -d)
TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1 TILEC_TURN_MIN=64 timeout 150 stdbuf -oL $B/bin/tile-gpu-tests --tile $B/examples/attention/flash_fwd.tile --define PERSISTENT=true --define BM=128 --define BN=128 --define NUM_WARPS=8 --define PRODUCER=true --no-aot > $OUT/tests-nogt.txt 2>&1
echo "tests nogt rc=$? $(grep summary $OUT/tests-nogt.txt)"
