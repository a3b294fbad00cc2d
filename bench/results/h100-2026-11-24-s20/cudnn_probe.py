"""Which kernels SDPA's cuDNN backend launches (names, grid, block) at the sweep's shapes."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

def run(D, S, causal, dtype=torch.bfloat16, iters=3):
    B, H = 16384 // S, 2048 // D
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dtype) for _ in range(3))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for _ in range(iters):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.cuda.synchronize()

if len(sys.argv) > 1:  # under ncu: one shape
    D, S, c = map(int, sys.argv[1:4])
    run(D, S, bool(c))
    sys.exit(0)
from torch.profiler import profile, ProfilerActivity
for D in (64, 128):
    for c in (1, 0):
        for S in (2048, 8192):
            run(D, S, bool(c), iters=2)
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                run(D, S, bool(c), iters=3)
            names = sorted({(e.name, e.device_time / max(1, 1)) for e in p.events() if e.device_type.name == "CUDA"}, key=lambda x: -x[1])
            for n, t in names[:2]:
                print(f"D={D} causal={c} S={S}: {t:8.1f} us  {n}")
