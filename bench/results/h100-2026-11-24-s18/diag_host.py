"""Host vs GPU time per call for tilec and SDPA at one shape (diagnostic)."""
import sys, time, statistics, tempfile
from pathlib import Path
sys.path.insert(0, "bench")
import attention_fwd as af
import torch

tilec = sys.argv[1]
for S, D, causal in [(2048, 64, True), (2048, 128, True), (4096, 64, True)]:
    s = dict(dtype="bf16", D=D, causal=causal, S=S, B=16384 // S, H=2048 // D)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    inputs = af.make_inputs(s, l2)
    tc = af.Tilec(tilec, "examples/attention/flash_fwd.tile", "sm_90a", Path(tempfile.mkdtemp()))
    fns = {"tilec": af.tilec_runner(tc, s, (128, 128, 8, 0, 3, 1, 1, 1)),
           "cudnn": af.sdpa_runner("sdpa-cudnn", s), "flash": af.sdpa_runner("sdpa-flash", s)}
    for rnd in range(3):
        for name, fn in fns.items():
            for i in range(5):
                fn(*inputs[i % 2])
            torch.cuda.synchronize()
            n = 100
            # host enqueue time per call (no events)
            t0 = time.perf_counter()
            for i in range(n):
                fn(*inputs[i % 2])
            host = (time.perf_counter() - t0) * 1e3 / n
            torch.cuda.synchronize()
            # per-call events (the benchmark's method)
            per = af.time_ms(fn, inputs, 10, 50)[0]
            # one event pair around n calls
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            fn(*inputs[0]); torch.cuda.synchronize()
            a.record()
            for i in range(n):
                fn(*inputs[i % 2])
            b.record(); torch.cuda.synchronize()
            batch = a.elapsed_time(b) / n
            # single-call host cost when the GPU is idle
            torch.cuda.synchronize(); t0 = time.perf_counter(); fn(*inputs[0]); h1 = (time.perf_counter() - t0) * 1e3
            torch.cuda.synchronize()
            print(f"S={S} D={D} causal={int(causal)} {name:6s} round {rnd}: host/call {host:.3f} ms (idle-GPU call {h1*1e3:.0f} us), "
                  f"event median {per:.3f} ms ({af.tflops(s, per):.1f} TF), batch avg {batch:.3f} ms ({af.tflops(s, batch):.1f} TF)", flush=True)
    del inputs
