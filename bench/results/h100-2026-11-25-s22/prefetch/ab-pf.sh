#!/bin/bash
# Entry 87's prefetch of the next program's Q (TILEC_PREFETCH prototype), again on top of TMA stores.
set -u
nvidia-smi -L > $OUT/gpu.txt
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
mkdir -p /tmp/w && printf '#!/bin/bash\nTILEC_PREFETCH=1 exec %s "$@"\n' $T > /tmp/w/pf && chmod +x /tmp/w/pf
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant base=$T:$C --variant pf=/tmp/w/pf:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-pf-d64c.txt 2>&1
tail -5 $OUT/ab-pf-d64c.txt
TILEC_PREFETCH=1 STEP_TIMEOUT=120 ONLY='^tile-gpu-tests-persistent-producer$' DEST=/tmp/tb/tilec-bundle bash /tmp/tb/tilec-bundle/run-gpu.sh > $OUT/suite-pf.txt 2>&1; tail -3 $OUT/suite-pf.txt
