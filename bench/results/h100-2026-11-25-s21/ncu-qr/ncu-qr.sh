#!/bin/bash
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
P=$(pwd)/proto/expturn.py
cat > /tmp/qrnoget <<EOT
#!/bin/bash
TILEC_Q_RING=1 TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1 $T "\$@" || exit \$?
prev=""; out=""
for a in "\$@"; do [[ \$prev == -o ]] && out="\$a"; prev="\$a"; done
if [[ -n \$out && -f \$out.ptx ]]; then python3 $P \$out.ptx 2>>$OUT/expturn.log || exit 1; fi
exit 0
EOT
chmod +x /tmp/qrnoget
timeout 200 ncu -k regex:flash_fwd --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $OUT/qr python3 proto/ncu_run.py /tmp/qrnoget proto/flash_fwd_q.tile 2048 64 1 TMA_A=true > $OUT/ncu-qr.log 2>&1; echo rc=$?
ncu -i $OUT/qr.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/qr-src.csv.gz
ncu -i $OUT/qr.ncu-rep --page details 2>/dev/null > $OUT/qr-details.txt
rm -f $OUT/qr.ncu-rep; ls -la $OUT; tail -3 $OUT/ncu-qr.log; grep -E "Duration|Cycles Per Issued" $OUT/qr-details.txt
