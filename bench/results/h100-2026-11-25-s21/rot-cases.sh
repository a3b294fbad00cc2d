#!/bin/bash
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
FT=$B/examples/attention/flash_fwd.tile
for c in f16_full_d128 f16_causal_d64 f16_causal_d128 bf16_causal_d64; do
  export TILEC_CACHE_DIR=$(mktemp -d)
  TILEC_ROTATE=1 timeout 40 stdbuf -oL $B/bin/tile-gpu-tests --tile $FT --define PERSISTENT=true --define BM=128 --define BN=128 --define NUM_WARPS=8 --define PRODUCER=true --only $c --no-aot > $OUT/c-$c.txt 2>&1
  echo "$c rc=$? $(grep -c PASS $OUT/c-$c.txt) pass, last: $(tail -1 $OUT/c-$c.txt)"
done
