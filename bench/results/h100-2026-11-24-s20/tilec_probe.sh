#!/bin/bash
# ncu of tilec's causal D=64 2k kernel (tuned config) next to cuDNN's: same sections.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
export LD_LIBRARY_PATH=/tmp/tb/tilec-bundle/lib
nvidia-smi -L > $OUT/gpu.txt
S="--section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats --print-details all"
timeout 300 ncu -k regex:flash_fwd --launch-skip 3 --launch-count 1 $S python3 bench/attention_fwd.py --tilec /tmp/tb/tilec-bundle/bin/tilec --dtype bf16 --head-dim 64 --seqlen 2048 --causal 1 --providers tilec --tuned bench/results/tuned.json --min-runs 5 --min-ms 1 --compile-runs 1 --out /tmp/o > $OUT/ncu-tilec-d64-c1-2k-details.txt 2>&1
timeout 240 ncu -k regex:fprop --launch-skip 1 --launch-count 1 $S python3 proto/cudnn_probe.py 64 2048 1 > $OUT/ncu-cudnn-d64-c1-2k-details.txt 2>&1
