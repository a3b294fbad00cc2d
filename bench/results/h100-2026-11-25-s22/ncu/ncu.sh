#!/bin/bash
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
timeout 240 ncu -k regex:flash_fwd --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $OUT/ts python3 proto/ncu_run.py $T examples/attention/flash_fwd.tile 2048 64 1 > $OUT/ncu-ts.log 2>&1; echo rc=$?
ncu -i $OUT/ts.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/tilec-ts-src.csv.gz
ncu -i $OUT/ts.ncu-rep --page details 2>/dev/null > $OUT/ts-details.txt
rm -f $OUT/ts.ncu-rep; tail -3 $OUT/ncu-ts.log; grep -E "Duration|Cycles Per Issued" $OUT/ts-details.txt
