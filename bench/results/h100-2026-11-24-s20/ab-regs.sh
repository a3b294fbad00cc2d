#!/bin/bash
# A/B of TILEC_CONSUMER_REGS (prototype): consumer warps' setmaxnreg budget.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
T=/tmp/tb/tilec-bundle/bin/tilec
export LD_LIBRARY_PATH=/tmp/tb/tilec-bundle/lib
mkdir -p /tmp/w
RS=${RS:-232 224 208}
for r in $RS; do printf '#!/bin/sh\nTILEC_CONSUMER_REGS=%s exec %s "$@"\n' $r $T > /tmp/w/r$r; chmod +x /tmp/w/r$r; done
nvidia-smi -L > $OUT/gpu.txt
F="-D BM=128 -D BN=128 -D D=64 -D CAUSAL=true -D NUM_WARPS=8 -D TMA_STAGES=3 -D PRODUCER=true -D PERSISTENT=true"
for r in 240 $RS; do TILEC_CONSUMER_REGS=$r $T examples/attention/flash_fwd.tile --arch=sm_90a $F --emit=cubin -o /tmp/w/c$r >/dev/null 2>&1; cuobjdump -sass /tmp/w/c$r.cubin | grep -v "setmaxnreg\|USETMAXREG" | sed 's|/\*[0-9a-f]*\*/||' | md5sum | sed "s/^/sass $r /" >> $OUT/sass-md5.txt; done
R=${R:-5}
V="--variant base=$T:128,128,8,0,3,1,1"
for r in $RS; do V="$V --variant r$r=/tmp/w/r$r:128,128,8,0,3,1,1"; done
python3 bench/compare.py $V --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds $R --min-ms 40 > $OUT/ab-regs-d64c.txt 2>&1
python3 bench/compare.py $V --head-dim 64 --dtype bf16 --seqlen 2048 8192 --causal 0 --rounds $R --min-ms 40 > $OUT/ab-regs-d64nc.txt 2>&1
python3 bench/compare.py $V --head-dim 128 --dtype bf16 --seqlen 2048 8192 --rounds $R --min-ms 40 > $OUT/ab-regs-d128.txt 2>&1
