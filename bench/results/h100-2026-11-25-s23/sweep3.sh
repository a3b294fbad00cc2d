#!/bin/bash
set -u
nvidia-smi -L > $OUT/gpu.txt
B=/tmp/tilec-bundle; rm -rf $B; tar -xJf bundle/tilec-bundle.tar.xz -C /tmp
export LD_LIBRARY_PATH=$B/lib
start=$(date +%s)
python3 bench/attention_fwd.py --tilec $B/bin/tilec --dtype bf16 fp16 --tuned bench/results/tuned.json --rounds 3 --min-runs 10 --min-ms 100 --compile-runs 3 --out $OUT/sweep3 > $OUT/sweep3.txt 2>&1
echo rc $? wall $(( $(date +%s) - start )) s; tail -3 $OUT/sweep3.txt
