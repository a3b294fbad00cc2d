#!/bin/bash
# Q ring over programs (prototype TILEC_Q_RING): correctness, then A/B.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
mkdir -p /tmp/w
printf '#!/bin/sh\nTILEC_Q_RING=1 exec %s "$@"\n' $T > /tmp/w/qr; chmod +x /tmp/w/qr
nvidia-smi -L > $OUT/gpu.txt
K=proto/flash_fwd_q.tile
TILEC_Q_RING=1 timeout 300 $B/bin/tile-gpu-tests --tile $K --define PERSISTENT=true --define BM=128 --define BN=128 --define NUM_WARPS=8 --define PRODUCER=true --define TMA_A=true > $OUT/tests-qring.txt 2>&1; echo "tests rc=$?" >> $OUT/tests-qring.txt
tail -3 $OUT/tests-qring.txt
[[ ${TESTS_ONLY:-0} = 1 ]] && exit 0
R=${R:-5}
V="--variant base=$T:128,128,8,0,3,1,1 --variant maxq=$T@$K:128,128,8,0,3,1,1 --variant qa1=$T@$K:128,128,8,0,3,1,1:TMA_A=true --variant qring=/tmp/w/qr@$K:128,128,8,0,3,1,1:TMA_A=true"
python3 bench/compare.py $V --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-qring-d64c.txt 2>&1
python3 bench/compare.py $V --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds $R --min-ms 40 > $OUT/ab-qring-d64nc.txt 2>&1
python3 bench/compare.py $V --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds $R --min-ms 40 > $OUT/ab-qring-d128.txt 2>&1
