"""Launches one tilec flash_fwd configuration a few times (for ncu)."""
import sys, tempfile
from pathlib import Path
sys.path.insert(0, "bench")
import attention_fwd as af
import torch

tilec, S, D, causal = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
s = dict(dtype="bf16", D=D, causal=causal, S=S, B=16384 // S, H=2048 // D)
inputs = af.make_inputs(s, torch.cuda.get_device_properties(0).L2_cache_size)
tc = af.Tilec(tilec, "examples/attention/flash_fwd.tile", "sm_90a", Path(tempfile.mkdtemp()))
fn = af.tilec_runner(tc, s, (128, 128, 8, 0, 3, 1, 1, 1))
for i in range(8):
    fn(*inputs[i % 2])
torch.cuda.synchronize()
print("ok")
