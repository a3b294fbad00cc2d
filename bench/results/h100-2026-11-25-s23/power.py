#!/usr/bin/env python3
"""Clocks and power while tilec and cuDNN run: is tilec's fp16 deficit a clock effect?"""
import json, statistics, sys, threading, time, subprocess
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import attention_fwd as af
import torch

try:
    import pynvml
    pynvml.nvmlInit()
    H = pynvml.nvmlDeviceGetHandleByIndex(0)
    def sample():
        return (pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM),
                pynvml.nvmlDeviceGetPowerUsage(H) / 1000.0,
                pynvml.nvmlDeviceGetTemperature(H, 0),
                pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(H))
    print("nvml: pynvml")
except Exception as e:
    print("nvml unavailable:", e); sys.exit(1)

class Sampler:
    def __init__(self): self.on = False; self.s = []
    def run(self):
        while self.on:
            self.s.append(sample()); time.sleep(0.002)
    def __enter__(self):
        self.on = True; self.s = []; self.t = threading.Thread(target=self.run); self.t.start(); return self
    def __exit__(self, *a):
        self.on = False; self.t.join()

exe = sys.argv[1]; min_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 100
tuned = json.loads(Path("bench/results/tuned.json").read_text())
tc = af.Tilec(exe, af.TILE, "sm_90a", "/tmp/pw")
Path("/tmp/pw").mkdir(exist_ok=True)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
print("device:", torch.cuda.get_device_name())
out = []
for (D, c) in ((128, False), (64, True)):
    for dt in ("bf16", "fp16", "bf16", "fp16"):
        s = dict(dtype=dt, D=D, causal=c, S=2048, B=af.TOKENS // 2048, H=af.HIDDEN // D)
        inputs = af.make_inputs(s, l2)
        cfg = af.cfg_from_tuned(tuned[af.shape_key(s)])
        fns = {"tilec": af.tilec_runner(tc, s, cfg), "cudnn": af.sdpa_runner("sdpa-cudnn", s)}
        for rnd in range(3):
            for name, fn in fns.items():
                with Sampler() as sm:
                    ms, n = af.time_ms(fn, inputs, 10, min_ms)
                busy = [x for x in sm.s if x[1] > 250] or sm.s
                clk = statistics.median(x[0] for x in busy); pw = statistics.median(x[1] for x in busy)
                tmp = max(x[2] for x in sm.s); thr = sorted({x[3] for x in busy})
                tf = af.tflops(s, ms)
                row = dict(key=af.shape_key(s), prov=name, rnd=rnd, tflops=tf, ms=ms, clk=clk, pw=pw, temp=tmp,
                           thr=[hex(t) for t in thr], nsamp=len(sm.s), tf_per_ghz=tf / clk * 1000)
                out.append(row)
                print(f"{row['key']:24s} {name:6s} r{rnd} {tf:6.1f} TF  clk {clk:5.0f} MHz  pw {pw:5.0f} W  T {tmp}C  thr {row['thr']}  TF/GHz {row['tf_per_ghz']:.1f} n={len(sm.s)}", flush=True)
        del inputs
        torch.cuda.empty_cache()
json.dump(out, open(sys.argv[3] if len(sys.argv) > 3 else "/tmp/power.json", "w"), indent=1)
