#!/bin/bash
# TMA stores of O: correctness (three flash_fwd suites) and A/B against TMA_STORE=false.
set -u
nvidia-smi -L > $OUT/gpu.txt
STEP_TIMEOUT=200 ONLY='^tile-gpu-tests$|^tile-gpu-tests-persistent-producer$|^tile-gpu-tests-8warps$' bash bundle/run-gpu.sh > $OUT/suite.txt 2>&1
tail -8 $OUT/suite.txt
B=/tmp/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
C=128,128,8,0,3,1,1
python3 bench/compare.py --variant off=$T:$C:TMA_STORE=false --variant on=$T:$C --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-d64c.txt 2>&1
tail -12 $OUT/ab-d64c.txt
python3 bench/compare.py --variant off=$T:$C:TMA_STORE=false --variant on=$T:$C --head-dim 128 --dtype bf16 --seqlen 2048 8192 --causal both --rounds 3 --min-ms 40 > $OUT/ab-d128.txt 2>&1
tail -12 $OUT/ab-d128.txt
