#!/bin/bash
# One comparison for the causal mask and the key bound in the masked tail (FuseUpperBounds) vs HEAD's tilec.
set -u
nvidia-smi -L > $OUT/gpu.txt
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
xz -dc bundle/tilec-old.xz > /tmp/tilec-old && chmod +x /tmp/tilec-old
export LD_LIBRARY_PATH=$B/lib
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant old=/tmp/tilec-old:$C --variant fused=$T:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-fuse-d64c.txt 2>&1
tail -5 $OUT/ab-fuse-d64c.txt
python3 bench/compare.py --variant old=/tmp/tilec-old:$C --variant fused=$T:$C --head-dim 128 --dtype bf16 --seqlen 2048 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-fuse-d128c.txt 2>&1
tail -2 $OUT/ab-fuse-d128c.txt
STEP_TIMEOUT=120 ONLY='^tile-gpu-tests$|^tile-gpu-tests-persistent-producer$|^tile-gpu-tests-reverse$' DEST=$B bash $B/run-gpu.sh > $OUT/suite-fuse.txt 2>&1; tail -5 $OUT/suite-fuse.txt
