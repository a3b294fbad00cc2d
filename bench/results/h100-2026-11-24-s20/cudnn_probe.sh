#!/bin/bash
set -u
nvidia-smi -L > $OUT/gpu.txt
[[ ${NAMES:-0} = 1 ]] && python3 proto/cudnn_probe.py > $OUT/cudnn-kernels.txt 2>&1
for c in 1 0; do
  timeout 240 ncu -k regex:fprop --launch-skip 1 --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis python3 proto/cudnn_probe.py 64 2048 $c > $OUT/ncu-cudnn-d64-c$c-2k.txt 2>&1
done
