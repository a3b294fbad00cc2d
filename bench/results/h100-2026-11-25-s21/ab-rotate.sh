#!/bin/bash
# Prototype: the next program's S0 = Q'K0' issued in this program's tail (TILEC_ROTATE=1|2).
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
FT=$B/examples/attention/flash_fwd.tile; [ -f $FT ] || FT=examples/attention/flash_fwd.tile
for m in 1 2; do
  for cfg in "" "--define REVERSE=true"; do
    export TILEC_CACHE_DIR=$(mktemp -d)
    TILEC_ROTATE=$m timeout 150 stdbuf -oL $B/bin/tile-gpu-tests --tile $FT --define PERSISTENT=true --define BM=128 --define BN=128 --define NUM_WARPS=8 --define PRODUCER=true $cfg > $OUT/tests-r$m${cfg:+-rev}.txt 2>&1
    rc=$?; echo "rotate=$m $cfg rc=$rc $(grep summary $OUT/tests-r$m${cfg:+-rev}.txt)"; [ $rc = 0 ] || { tail -3 $OUT/tests-r$m${cfg:+-rev}.txt; exit 1; }
  done
done
unset TILEC_CACHE_DIR
mkdir -p /tmp/w
for m in 1 2; do printf '#!/bin/sh\nTILEC_ROTATE=%s exec %s "$@"\n' $m $T > /tmp/w/r$m; chmod +x /tmp/w/r$m; done
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant base=$T:$C --variant R1=/tmp/w/r1:$C --variant R2=/tmp/w/r2:$C --variant base2=$T:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds ${R:-7} --min-ms 40 > $OUT/ab-rot-d64c.txt 2>&1
tail -4 $OUT/ab-rot-d64c.txt
python3 bench/compare.py --variant base=$T:$C --variant R1=/tmp/w/r1:$C --variant R2=/tmp/w/r2:$C --head-dim 128 --dtype bf16 --seqlen 2048 8192 --causal both --rounds 5 --min-ms 40 > $OUT/ab-rot-d128.txt 2>&1
tail -4 $OUT/ab-rot-d128.txt
