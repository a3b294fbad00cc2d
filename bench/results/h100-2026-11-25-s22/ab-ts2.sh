#!/bin/bash
# TMA stores of O, per warpgroup: more A/B against TMA_STORE=false.
set -u
nvidia-smi -L > $OUT/gpu.txt
mkdir -p /tmp/tilec-bundle && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp && true
B=/tmp/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant off=$T:$C:TMA_STORE=false --variant on=$T:$C --head-dim 128 --dtype bf16 fp16 --seqlen 2048 8192 --causal 0 --rounds 5 --min-ms 40 > $OUT/ab-d128nc.txt 2>&1
tail -5 $OUT/ab-d128nc.txt
python3 bench/compare.py --variant off=$T:$C:TMA_STORE=false --variant on=$T:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 8192 16384 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-d64c.txt 2>&1
tail -7 $OUT/ab-d64c.txt
C=64,64,4,4,3,0,0
python3 bench/compare.py --variant off=$T:$C:TMA_STORE=false --variant on=$T:$C --head-dim 64 --dtype bf16 --seqlen 512 1024 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-small.txt 2>&1
tail -3 $OUT/ab-small.txt
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant off=$T:$C:TMA_STORE=false --variant on=$T:$C --head-dim 64 --dtype bf16 --seqlen 1024 --causal 0 --rounds 5 --min-ms 40 > $OUT/ab-1k.txt 2>&1
tail -2 $OUT/ab-1k.txt
