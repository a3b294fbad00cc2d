#!/bin/bash
# A/B: cuDNN's per-score form (scores scaled by a multiply, max subtracted) vs one fma per score.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
K=proto/flash_fwd_mulsub.tile
R=${R:-7}
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant base=$T:$C --variant mulsub=$T@$K:$C --variant base2=$T:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-mulsub-d64c.txt 2>&1
G=64,128,4,0,4,1,1,3
python3 bench/compare.py --variant base=$T:$G --variant mulsub=$T@$K:$G --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds $R --min-ms 40 > $OUT/ab-mulsub-d64g3.txt 2>&1
python3 bench/compare.py --variant base=$T:$C --variant mulsub=$T@$K:$C --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds $R --min-ms 40 > $OUT/ab-mulsub-d128.txt 2>&1
