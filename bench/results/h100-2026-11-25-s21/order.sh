#!/bin/bash
# Does the provider order in a round move the tilec / cuDNN ratio? Causal D = 64.
set -u
mkdir -p /tmp/tb && tar -xJf bundle/tilec-bundle.tar.xz -C /tmp/tb
B=/tmp/tb/tilec-bundle; T=$B/bin/tilec
export LD_LIBRARY_PATH=$B/lib
nvidia-smi -L > $OUT/gpu.txt
run() { python3 bench/attention_fwd.py --tilec $T --dtype bf16 fp16 --head-dim 64 --causal 1 --seqlen 2048 4096 --tuned bench/results/tuned.json --rounds 5 --min-runs 10 --min-ms 100 --compile-runs 1 --providers "$@" --out $OUT/order-$N > $OUT/order-$N.txt 2>&1; }
N=1a run tilec sdpa-cudnn
N=1b run sdpa-cudnn tilec
N=2a run tilec sdpa-cudnn
N=2b run sdpa-cudnn tilec
N=3full run tilec triton sdpa-flash sdpa-cudnn sdpa-efficient
for f in $OUT/order-*/results.json; do python3 - "$f" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); r=d['results']
k={}
for x in r: k.setdefault((x['dtype'],x['S']),{})[x['provider']]=x['tflops']
print(sys.argv[1].split('/')[-2], ' '.join(f"{dt}/{S}: {v['tilec']:.1f}/{v['sdpa-cudnn']:.1f}={v['tilec']/v['sdpa-cudnn']:.3f}" for (dt,S),v in sorted(k.items())))
PY
done
