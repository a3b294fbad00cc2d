"""Launches one tilec flash_fwd configuration a few times (for ncu): argv tilec, kernel, S, D, causal, defs."""
import sys, tempfile
from pathlib import Path
sys.path.insert(0, "bench")
import attention_fwd as af
import torch
tilec, kernel, S, D, causal = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
defs = dict(a.split("=", 1) for a in sys.argv[6:])
s = dict(dtype="bf16", D=D, causal=causal, S=S, B=16384 // S, H=2048 // D)
inputs = af.make_inputs(s, torch.cuda.get_device_properties(0).L2_cache_size)
tc = af.Tilec(tilec, kernel, "sm_90a", Path(tempfile.mkdtemp()), defs)
fn = af.tilec_runner(tc, s, (128, 128, 8, 0, 3, 1, 1, 1))
for i in range(8):
    fn(*inputs[i % 2])
torch.cuda.synchronize()
print("ok")
