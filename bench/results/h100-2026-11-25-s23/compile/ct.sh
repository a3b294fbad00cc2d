#!/bin/bash
set -u
for v in old new; do xz -dc bundle-ct/tilec-$v.xz > /tmp/tilec-$v; chmod +x /tmp/tilec-$v; done
cat /sys/kernel/mm/transparent_hugepage/enabled > $OUT/thp.txt; uname -r >> $OUT/thp.txt; nproc >> $OUT/thp.txt; cat /proc/loadavg >> $OUT/thp.txt
cat $OUT/thp.txt
python3 proto/ct.py 15 > $OUT/ct.txt 2>&1; cat $OUT/ct.txt
python3 bench/attention_fwd.py --dry-run --tilec /tmp/tilec-old --tuned bench/results/tuned.json --compile-runs 5 > $OUT/dry-old.txt 2>&1
grep -E " ms (ok|SLOW)" $OUT/dry-old.txt
