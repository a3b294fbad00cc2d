#!/usr/bin/env python3
"""Energy per call, clocks and rate of tilec and cuDNN over ~2 s windows each."""
import json, statistics, sys, threading, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import attention_fwd as af
import torch
import pynvml
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)

class Clocks:
    def __init__(self): self.on = False; self.s = []
    def run(self):
        while self.on:
            self.s.append((pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM),
                           pynvml.nvmlDeviceGetTemperature(H, 0)))
            time.sleep(0.005)
    def __enter__(self):
        self.on = True; self.t = threading.Thread(target=self.run); self.t.start(); return self
    def __exit__(self, *a):
        self.on = False; self.t.join()

exe, window = sys.argv[1], float(sys.argv[2])
tuned = json.loads(Path("bench/results/tuned.json").read_text())
Path("/tmp/en").mkdir(exist_ok=True)
tc = af.Tilec(exe, af.TILE, "sm_90a", "/tmp/en")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
print("device:", torch.cuda.get_device_name(), flush=True)
out = []
for (D, c, dts) in ((64, True, ("fp16", "bf16")), (128, False, ("fp16", "bf16"))):
    for dt in dts:
        s = dict(dtype=dt, D=D, causal=c, S=2048, B=af.TOKENS // 2048, H=af.HIDDEN // D)
        inputs = af.make_inputs(s, l2)
        cfg = af.cfg_from_tuned(tuned[af.shape_key(s)])
        fns = {"tilec": af.tilec_runner(tc, s, cfg), "cudnn": af.sdpa_runner("sdpa-cudnn", s)}
        ms_est = {k: af.time_ms(f, inputs, 10, 30)[0] for k, f in fns.items()}
        for rnd in range(3):
            for name, fn in (fns.items() if rnd % 2 == 0 else reversed(list(fns.items()))):
                n = max(20, int(window * 1e3 / ms_est[name]))
                torch.cuda.synchronize()
                e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(H)
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                with Clocks() as ck:
                    a.record()
                    for i in range(n):
                        fn(*inputs[i % len(inputs)])
                    b.record()
                    torch.cuda.synchronize()
                e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(H)
                ms = a.elapsed_time(b) / n
                clk = statistics.mean(x[0] for x in ck.s)
                temp = max(x[1] for x in ck.s)
                joules = (e1 - e0) / 1e3 / n
                tf = af.tflops(s, ms)
                row = dict(key=af.shape_key(s), prov=name, rnd=rnd, n=n, ms=ms, tflops=tf, clk=clk, temp=temp,
                           mj_per_call=joules * 1e3, watts=joules / (ms / 1e3), tf_per_ghz=tf / clk * 1e3)
                out.append(row)
                print(f"{row['key']:24s} {name:6s} r{rnd} {tf:6.1f} TF  {ms*1e3:7.1f} us  clk {clk:5.0f}  T {temp}C  "
                      f"{row['mj_per_call']:7.2f} mJ/call  {row['watts']:5.0f} W  TF/GHz {row['tf_per_ghz']:.1f}", flush=True)
        del inputs
        torch.cuda.empty_cache()
json.dump(out, open(sys.argv[3], "w"), indent=1)
