#!/bin/bash
set -u
nvidia-smi -L > $OUT/gpu.txt
B=/tmp/tilec-bundle; [[ -x $B/bin/tilec ]] || tar -xJf bundle/tilec-bundle.tar.xz -C /tmp
export LD_LIBRARY_PATH=$B/lib
python3 proto/transient.py $B/bin/tilec > $OUT/transient.txt 2>&1; cat $OUT/transient.txt
for W in 0 200; do
python3 bench/attention_fwd.py --tilec $B/bin/tilec --dtype bf16 fp16 --head-dim 64 --causal 1 --seqlen 2048 --tuned bench/results/tuned.json --rounds 3 --min-runs 10 --min-ms 100 --compile-runs 1 --warmup-ms $W --out $OUT/w$W-d64 > $OUT/w$W-d64.txt 2>&1
python3 bench/attention_fwd.py --tilec $B/bin/tilec --dtype bf16 fp16 --head-dim 128 --causal 0 --seqlen 2048 --tuned bench/results/tuned.json --rounds 3 --min-runs 10 --min-ms 100 --compile-runs 1 --warmup-ms $W --out $OUT/w$W-d128 > $OUT/w$W-d128.txt 2>&1
grep "rounds" $OUT/w$W-d64.txt $OUT/w$W-d128.txt
done
