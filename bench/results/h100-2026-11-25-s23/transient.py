#!/usr/bin/env python3
"""Per-call latency over ~400 ms after the harness's spin kernel: the clock transient."""
import json, statistics, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import attention_fwd as af
import torch
exe = sys.argv[1]
tuned = json.loads(Path("bench/results/tuned.json").read_text())
Path("/tmp/tr").mkdir(exist_ok=True)
tc = af.Tilec(exe, af.TILE, "sm_90a", "/tmp/tr")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
print("device:", torch.cuda.get_device_name(), flush=True)
for (D, c, dt) in ((64, True, "fp16"), (128, False, "fp16")):
    s = dict(dtype=dt, D=D, causal=c, S=2048, B=af.TOKENS // 2048, H=af.HIDDEN // D)
    inputs = af.make_inputs(s, l2)
    cfg = af.cfg_from_tuned(tuned[af.shape_key(s)])
    fns = {"tilec": af.tilec_runner(tc, s, cfg), "cudnn": af.sdpa_runner("sdpa-cudnn", s),
           "efficient": af.sdpa_runner("sdpa-efficient", s)}
    for rnd in range(2):
        for name in ("tilec", "cudnn"):
            # precede by sdpa-efficient for 100 ms, then the harness's spin kernel
            for i in range(60):
                fns["efficient"](*inputs[i % len(inputs)])
            n = 1000 if D == 64 else 800
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
            torch.cuda._sleep(int(20 * 2e6))
            for i, (a, b) in enumerate(ev):
                a.record(); fns[name](*inputs[i % len(inputs)]); b.record()
            torch.cuda.synchronize()
            t = [a.elapsed_time(b) for a, b in ev]
            chunk = 50
            meds = [statistics.median(t[k:k + chunk]) for k in range(0, n, chunk)]
            tf = [af.tflops(s, m) for m in meds]
            print(f"{af.shape_key(s)} {name:6s} r{rnd}: TF per {chunk} calls (~{chunk*statistics.median(t):.0f} ms): "
                  + " ".join(f"{x:.0f}" for x in tf), flush=True)
    del inputs
    torch.cuda.empty_cache()
