#!/bin/bash
# cuDNN's exponential turn (entry 42's expturn.py) on top of no-overlap + masks behind a branch.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
mkdir -p /tmp/w
P=$(pwd)/proto/expturn.py
mk() { # name, env, post (1: expturn)
  cat > /tmp/w/$1 <<EOT
#!/bin/bash
env $2 $T "\$@" || exit \$?
prev=""; out=""
for a in "\$@"; do [[ \$prev == -o ]] && out="\$a"; prev="\$a"; done
if [[ $3 = 1 && -n \$out && -f \$out.ptx ]]; then python3 $P \$out.ptx 2>>$OUT/expturn.log || exit 1; fi
exit 0
EOT
  chmod +x /tmp/w/$1; }
mk nog "TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1" 0
mk noget "TILEC_NO_OVERLAP=1 TILEC_GUARD_WHERE=1" 1
mk plain "X=1" 0
C=128,128,8,0,3,1,1
K=proto/flash_fwd_q.tile
python3 bench/compare.py --variant base=$T:$C --variant NOG_ET=/tmp/w/noget:$C --variant QA=/tmp/w/plain@$K:$C:TMA_A=true --variant QA_NOG_ET=/tmp/w/noget@$K:$C:TMA_A=true --variant QA_NOG=/tmp/w/nog@$K:$C:TMA_A=true --head-dim 64 --dtype bf16 fp16 --seqlen 2048 4096 --causal 1 --rounds 5 --min-ms 40 > $OUT/ab-qa-d64c.txt 2>&1
tail -4 $OUT/ab-qa-d64c.txt; grep -ciE "fail|error" $OUT/ab-qa-d64c.txt; tail -3 $OUT/expturn.log
