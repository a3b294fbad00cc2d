#!/usr/bin/env python3
"""Sustained (2 s) A/B of tilec variants (env switches at compile time) and cuDNN: ms and mJ per call."""
import json, os, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import attention_fwd as af
import torch
import pynvml
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
exe, window = sys.argv[1], float(sys.argv[2])
variants = {}
for spec in sys.argv[4:]:          # NAME=VAR:VAL,VAR:VAL or NAME=
    name, _, envs = spec.partition("=")
    variants[name] = dict(e.split(":", 1) for e in envs.split(",") if e)
tuned = json.loads(Path("bench/results/tuned.json").read_text())
l2 = torch.cuda.get_device_properties(0).L2_cache_size
print("device:", torch.cuda.get_device_name(), flush=True)
tcs = {}
for name, env in variants.items():
    d = Path("/tmp/eab") / name; d.mkdir(parents=True, exist_ok=True)
    tcs[name] = af.Tilec(exe, af.TILE, "sm_90a", str(d)); tcs[name].env.update(env)
out = []
shapes = [(64, True, "bf16"), (64, True, "fp16"), (128, False, "fp16"), (64, False, "bf16")]
for (D, c, dt) in shapes:
    s = dict(dtype=dt, D=D, causal=c, S=2048, B=af.TOKENS // 2048, H=af.HIDDEN // D)
    inputs = af.make_inputs(s, l2)
    ref = af.reference(*inputs[0], s["causal"])
    cfg = af.cfg_from_tuned(tuned[af.shape_key(s)])
    fns = {n: af.tilec_runner(tc, s, cfg) for n, tc in tcs.items()}
    for n, fn in fns.items():
        o, lse = fn(*inputs[0]); torch.cuda.synchronize()
        print(f"  {n}: rel_l2 {af.parity(o, lse, *ref)['rel_l2']:.3g}")
    fns["cudnn"] = af.sdpa_runner("sdpa-cudnn", s)
    est = {k: af.time_ms(f, inputs, 10, 30, 0)[0] for k, f in fns.items()}
    res = {k: [] for k in fns}
    names = list(fns)
    for rnd in range(3):
        for name in (names if rnd % 2 == 0 else names[::-1]):
            fn = fns[name]
            n = max(20, int(window * 1e3 / est[name]))
            torch.cuda.synchronize()
            e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(H)
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for i in range(n):
                fn(*inputs[i % len(inputs)])
            b.record(); torch.cuda.synchronize()
            e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(H)
            ms = a.elapsed_time(b) / n
            res[name].append((af.tflops(s, ms), (e1 - e0) / n))
    line = f"{af.shape_key(s):24s}"
    base = None
    for name in names:
        tf = statistics.median(x[0] for x in res[name]); mj = statistics.median(x[1] for x in res[name])
        base = base or (tf, mj)
        line += f" | {name} {tf:6.1f} TF (x{tf/base[0]:.3f}) {mj:6.1f} mJ (x{mj/base[1]:.3f})"
        out.append(dict(key=af.shape_key(s), name=name, rounds=res[name]))
    print(line, flush=True)
    del inputs, ref
    torch.cuda.empty_cache()
json.dump(out, open(sys.argv[3], "w"), indent=1)
