#!/bin/bash
# A/B of TILEC_WG_OFFSET (prototype): consumer warps meet before each K wait.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
mkdir -p /tmp/w
NS=${NS:-1}
for n in $NS; do printf '#!/bin/sh\nTILEC_LOCKSTEP=%s exec %s "$@"\n' $n $T > /tmp/w/o$n; chmod +x /tmp/w/o$n; done
nvidia-smi -L > $OUT/gpu.txt
R=${R:-5}
C=128,128,8,0,3,1,1
V="--variant base=$T:$C"; for n in $NS; do V="$V --variant o$n=/tmp/w/o$n:$C"; done
python3 bench/compare.py $V --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-lockstep-d64c.txt 2>&1
python3 bench/compare.py $V --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds $R --min-ms 40 > $OUT/ab-lockstep-d64nc.txt 2>&1
python3 bench/compare.py $V --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds $R --min-ms 40 > $OUT/ab-lockstep-d128.txt 2>&1
