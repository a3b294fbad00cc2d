#!/bin/bash
# A/B of TILEC_PREFETCH (prototype): Q of the next program loaded in this one's epilogue.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
T=/tmp/tb/tilec-bundle/bin/tilec
export LD_LIBRARY_PATH=/tmp/tb/tilec-bundle/lib
mkdir -p /tmp/w
printf '#!/bin/sh\nTILEC_PREFETCH=1 exec %s "$@"\n' $T > /tmp/w/pf; chmod +x /tmp/w/pf
nvidia-smi -L > $OUT/gpu.txt
R=${R:-7}
V="--variant base=$T:128,128,8,0,3,1,1 --variant pf=/tmp/w/pf:128,128,8,0,3,1,1"
python3 bench/compare.py $V --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-pf-d64c.txt 2>&1
python3 bench/compare.py $V --variant base2=$T:128,128,8,0,3,1,1 --head-dim 64 --dtype bf16 --seqlen 2048 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-pf-d64c-again.txt 2>&1
VG="--variant base=$T:64,128,4,0,4,1,1,3 --variant pf=/tmp/w/pf:64,128,4,0,4,1,1,3"
python3 bench/compare.py $VG --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds $R --min-ms 40 > $OUT/ab-pf-d64g3.txt 2>&1
python3 bench/compare.py $V --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds $R --min-ms 40 > $OUT/ab-pf-d128.txt 2>&1
