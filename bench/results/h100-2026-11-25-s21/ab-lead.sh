#!/bin/bash
# A/B: fma emitted LEAD ex2s ahead, add LAG ex2s behind (InterleaveExp prototype, env switches).
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
mkdir -p /tmp/w
V=""
for lv in 1,0 2,0 4,0 0,1 1,1 2,2; do L=${lv%,*}; G=${lv#*,}
  printf '#!/bin/sh\nTILEC_EXP_LEAD=%s TILEC_EXP_LAG=%s exec %s "$@"\n' $L $G $T > /tmp/w/t$L$G; chmod +x /tmp/w/t$L$G
done
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant base=$T:$C --variant L1=/tmp/w/t10:$C --variant L2=/tmp/w/t20:$C --variant L4=/tmp/w/t40:$C --variant G1=/tmp/w/t01:$C --variant L1G1=/tmp/w/t11:$C --variant L2G2=/tmp/w/t22:$C --variant base2=$T:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds ${R:-7} --min-ms 40 > $OUT/ab-lead-d64c.txt 2>&1
G=64,128,4,0,4,1,1,3
python3 bench/compare.py --variant base=$T:$G --variant L1=/tmp/w/t10:$G --variant L2=/tmp/w/t20:$G --variant L4=/tmp/w/t40:$G --variant G1=/tmp/w/t01:$G --variant L1G1=/tmp/w/t11:$G --variant L2G2=/tmp/w/t22:$G --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds 5 --min-ms 40 > $OUT/ab-lead-d64g3.txt 2>&1
tail -30 $OUT/ab-lead-d64c.txt
tail -20 $OUT/ab-lead-d64g3.txt
