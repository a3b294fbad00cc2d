#!/bin/bash
set -u
for v in old new; do xz -dc bundle-ct/tilec-$v.xz > /tmp/tilec-$v; chmod +x /tmp/tilec-$v; done
python3 proto/ct2.py 11 /tmp/tilec-old /tmp/tilec-new > $OUT/ct2.txt 2>&1; cat $OUT/ct2.txt
