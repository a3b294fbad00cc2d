#!/bin/bash
# Instruction mix by SASS opcode, tilec's tuned causal D=64 2k kernel and cuDNN's.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
export LD_LIBRARY_PATH=/tmp/tb/tilec-bundle/lib
nvidia-smi -L > $OUT/gpu.txt
M="--metrics sass__inst_executed_per_opcode,smsp__pcsamp_warps_issue_stalled_wait --print-metric-instances details"
timeout 300 ncu -k regex:flash_fwd --launch-skip 3 --launch-count 1 $M python3 bench/attention_fwd.py --tilec /tmp/tb/tilec-bundle/bin/tilec --dtype bf16 --head-dim 64 --seqlen 2048 --causal 1 --providers tilec --tuned bench/results/tuned.json --min-runs 5 --min-ms 1 --compile-runs 1 --out /tmp/o > $OUT/mix-tilec.txt 2>&1
timeout 240 ncu -k regex:fprop --launch-skip 1 --launch-count 1 $M python3 proto/cudnn_probe.py 64 2048 1 > $OUT/mix-cudnn.txt 2>&1
