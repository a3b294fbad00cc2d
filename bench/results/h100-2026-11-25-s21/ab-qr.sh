#!/bin/bash
# Entry 89's Q ring (TILEC_Q_RING) in entry 102's structure (no overlap, guard, exponential turn).
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
export TILEC_CACHE_DIR=$(mktemp -d)
TILEC_Q_RING=1 TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1 timeout 120 stdbuf -oL $B/bin/tile-gpu-tests --tile proto/flash_fwd_q.tile --define PERSISTENT=true --define BM=128 --define BN=128 --define NUM_WARPS=8 --define PRODUCER=true --define TMA_A=true --only 16_ --no-aot > $OUT/tests-qr-nog.txt 2>&1
echo "tests rc=$? $(grep summary $OUT/tests-qr-nog.txt)"
unset TILEC_CACHE_DIR
mkdir -p /tmp/w
P=$(pwd)/proto/expturn.py
mk() {
  cat > /tmp/w/$1 <<EOT
#!/bin/bash
env $2 $T "\$@" || exit \$?
prev=""; out=""
for a in "\$@"; do [[ \$prev == -o ]] && out="\$a"; prev="\$a"; done
if [[ $3 = 1 && -n \$out && -f \$out.ptx ]]; then python3 $P \$out.ptx 2>>$OUT/expturn.log || exit 1; fi
exit 0
EOT
  chmod +x /tmp/w/$1; }
mk noget "TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1" 1
mk qrnoget "TILEC_Q_RING=1 TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1" 1
mk qr "TILEC_Q_RING=1" 0
C=128,128,8,0,3,1,1
K=proto/flash_fwd_q.tile
timeout 300 python3 bench/compare.py --variant base=$T:$C --variant NOG_ET=/tmp/w/noget:$C --variant QR_NOG_ET=/tmp/w/qrnoget@$K:$C:TMA_A=true --variant QR=/tmp/w/qr@$K:$C:TMA_A=true --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-qr-d64c.txt 2>&1
echo "compare rc=$?"; tail -4 $OUT/ab-qr-d64c.txt; grep -ciE "fail|error" $OUT/ab-qr-d64c.txt; tail -2 $OUT/expturn.log
