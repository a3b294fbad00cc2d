#!/bin/bash
# A/B of mbarrier.try_wait suspend-time hints (prototype TILEC_SUSPEND_P/C/W).
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
mkdir -p /tmp/w
H=${H:-1000000}
printf '#!/bin/sh\nTILEC_SUSPEND_P=%s exec %s "$@"\n' $H $T > /tmp/w/sp; chmod +x /tmp/w/sp
printf '#!/bin/sh\nTILEC_SUSPEND_C=%s exec %s "$@"\n' $H $T > /tmp/w/sc; chmod +x /tmp/w/sc
printf '#!/bin/sh\nTILEC_SUSPEND_W=%s exec %s "$@"\n' $H $T > /tmp/w/sw; chmod +x /tmp/w/sw
printf '#!/bin/sh\nTILEC_SUSPEND_P=%s TILEC_SUSPEND_C=%s TILEC_SUSPEND_W=%s exec %s "$@"\n' $H $H $H $T > /tmp/w/sa; chmod +x /tmp/w/sa
nvidia-smi -L > $OUT/gpu.txt
R=${R:-5}
C=128,128,8,0,3,1,1
V="--variant base=$T:$C --variant P=/tmp/w/sp:$C --variant C=/tmp/w/sc:$C --variant W=/tmp/w/sw:$C --variant all=/tmp/w/sa:$C"
python3 bench/compare.py $V --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-suspend-d64c.txt 2>&1
G=64,128,4,0,4,1,1,3
VG="--variant base=$T:$G --variant P=/tmp/w/sp:$G --variant C=/tmp/w/sc:$G --variant W=/tmp/w/sw:$G --variant all=/tmp/w/sa:$G"
python3 bench/compare.py $VG --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds $R --min-ms 40 > $OUT/ab-suspend-d64g3.txt 2>&1
python3 bench/compare.py $V --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds $R --min-ms 40 > $OUT/ab-suspend-d128.txt 2>&1
