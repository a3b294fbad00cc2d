#!/bin/bash
# A/B of TILEC_EXP2_POLY (prototype): every k-th exp2 of a thread on the FMA units.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
T=/tmp/tb/tilec-bundle/bin/tilec
export LD_LIBRARY_PATH=/tmp/tb/tilec-bundle/lib
mkdir -p /tmp/w
for k in ${KS:-2 3 4 8}; do printf '#!/bin/sh\nTILEC_EXP2_POLY=%s exec %s "$@"\n' $k $T > /tmp/w/k$k; chmod +x /tmp/w/k$k; done
nvidia-smi -L > $OUT/gpu.txt
V64="--variant base=$T:128,128,8,0,3,1,1"
for k in ${KS:-2 3 4 8}; do V64="$V64 --variant k$k=/tmp/w/k$k:128,128,8,0,3,1,1"; done
python3 bench/compare.py $V64 --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds ${R:-5} --min-ms 40 > $OUT/ab-d64c.txt 2>&1
python3 bench/compare.py $V64 --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds ${R:-5} --min-ms 40 > $OUT/ab-d64nc.txt 2>&1
VG="--variant base=$T:64,128,4,0,4,1,1,3"
for k in ${KS:-2 3 4 8}; do VG="$VG --variant k$k=/tmp/w/k$k:64,128,4,0,4,1,1,3"; done
python3 bench/compare.py $VG --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds ${R:-5} --min-ms 40 > $OUT/ab-d64g3.txt 2>&1
python3 bench/compare.py $V64 --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds ${R:-5} --min-ms 40 > $OUT/ab-d128.txt 2>&1
