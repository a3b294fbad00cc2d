#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/u && tar -C /tmp/u -xJf bundle/tilec-bundle.tar.xz && rm -rf /tmp/tilec-bundle && mv /tmp/u/tilec-bundle /tmp/tilec-bundle
export LD_LIBRARY_PATH=/tmp/tilec-bundle/lib PATH=/tmp/tilec-bundle/bin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
export TILEC_CACHE_DIR=/tmp/tc-cache
D="--define PERSISTENT=true --define PRODUCER=true --define BN=128 --define TMA_STAGES=4 --define CTA_PROGRAMS=3"
for only in bf16_full_d64 bf16_causal_d64; do
for tool in memcheck racecheck synccheck; do
  timeout -s KILL 120 compute-sanitizer --tool $tool --print-limit 20 /tmp/tilec-bundle/bin/tile-gpu-tests --tile examples/attention/flash_fwd.tile $D --quick --no-aot --only $only > $OUT/san-$tool-$only.txt 2>&1; echo "$tool $only rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|summary:" $OUT/san-$tool-$only.txt | tail -3
done; done
