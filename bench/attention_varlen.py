#!/usr/bin/env python3
"""Varlen prefill benchmark: flash_fwd_varlen.tile against the fixed-length
flash_fwd.tile on the same total tokens.

For each head dim, mask and length S, B = --tokens / S sequences are timed
three ways in one process, after the same warm-up:

  fixed     flash_fwd.tile on [B*H, S, D] under its config-table entry
  fixed-cfg flash_fwd.tile under --config (the varlen kernel's schedule)
  varlen    flash_fwd_varlen.tile, the same B sequences of S packed
            ([H, total, D], cu_seqlens_q = cu_seqlens_k), under --config
  ragged    flash_fwd_varlen.tile over B lengths drawn from [S/2, 3S/2]
            that sum to the same tokens (--seed), under --config

TFLOP/s count the FLOPs each sequence needs (4 * S_b^2 * D * H, halved
for causal). The varlen rows are checked against SDPA (math) per sequence
(rel-L2 <= 1e-2). See docs/serving.md.

  python3 bench/attention_varlen.py --tilec PATH/TO/tilec
  python3 bench/attention_varlen.py --dry-run --tilec build/bin/tilec   # compile only
"""
import argparse
import json
import math
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fwd_config as fc  # noqa: E402
import fwd_launch as fl  # noqa: E402
import fwd_measure as fm  # noqa: E402
from fwd_tilec import Tilec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXED = ROOT / "examples" / "attention" / "flash_fwd.tile"
VARLEN = ROOT / "examples" / "attention" / "flash_fwd_varlen.tile"
# The fixed-length table's schedule at D = 128 (flash_fwd.sm_90a.json).
DEFAULT_CONFIG = "128,128,8,producer,persistent"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tilec", default="tilec")
    p.add_argument("--arch", default=None, help="default: from the GPU (sm_90a for --dry-run)")
    p.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    p.add_argument("--head-dim", type=int, nargs="+", default=[64, 128])
    p.add_argument("--seqlen", type=int, nargs="+", default=[2048, 4096, 8192])
    p.add_argument("--causal", choices=["0", "1", "both"], default="both")
    p.add_argument("--tokens", type=int, default=16384, help="total tokens per batch")
    p.add_argument("--config", default=DEFAULT_CONFIG,
                   help=f"schedule of the varlen rows and of fixed-cfg (default {DEFAULT_CONFIG})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-ms", type=float, default=100.0)
    p.add_argument("--warmup-ms", type=float, default=200.0)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--out", default=None, help="write varlen.json here")
    return p.parse_args(argv)


def ragged_lengths(rng, S, tokens):
    """Lengths from [S/2, 3S/2] summing to `tokens` (the last one trimmed)."""
    lens = []
    while sum(lens) < tokens:
        lens.append(min(rng.randint(S // 2, 3 * S // 2), tokens - sum(lens)))
    return lens


def flops(lens, H, D, causal):
    return sum(4 * s * s * D * H / (2 if causal else 1) for s in lens)


def launcher(tc, T, D, causal, cfg, grid):
    """The KernelLauncher of a kernel of `tc` over grid(BM)."""
    ptx, man = tc.compile(T, D, causal, cfg)
    return fl.launch_compiled(ptx, man, grid(int(tc.defines(T, D, causal, cfg)["BM"])))


def varlen_runner(tc, T, D, causal, cfg, lens, H):
    import torch
    cu = torch.tensor([0] + list(_prefix(lens)), device="cuda", dtype=torch.int32)
    total, scale = int(cu[-1]), D ** -0.5
    launch = launcher(tc, T, D, causal, cfg, lambda bm: (math.ceil(max(lens) / bm), len(lens) * H, 1))
    lse = torch.empty(H * total, device="cuda", dtype=torch.float32)

    def fn(q, k, v):
        o = torch.empty_like(q)
        launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(),
               cu.data_ptr(), cu.data_ptr(), total, total, H, scale)
        return o
    return fn


def fixed_runner(tc, T, D, causal, cfg, B, S, H):
    import torch
    launch = launcher(tc, T, D, causal, cfg, lambda bm: (math.ceil(S / bm), B * H, 1))

    def fn(q, k, v):
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:-1], device="cuda", dtype=torch.float32)
        launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), S, D ** -0.5)
        return o
    return fn


def mkdir(parent, name):
    path = Path(parent) / name
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _prefix(lens):
    t = 0
    for n in lens:
        t += n
        yield t


def check_varlen(o, q, k, v, lens, causal):
    """Worst rel-L2 over the sequences against SDPA (math), [H, total, D]."""
    import torch
    import torch.nn.functional as F
    worst, start = 0.0, 0
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        for n in lens:
            sl = slice(start, start + n)
            ref = F.scaled_dot_product_attention(q[None, :, sl].float(), k[None, :, sl].float(),
                                                 v[None, :, sl].float(), is_causal=causal)[0]
            got = o[:, sl].float()
            worst = max(worst, ((got - ref).norm() / ref.norm()).item())
            start += n
    return worst


def main(argv=None):
    a = parse_args(argv)
    T = {"bf16": "bf16", "fp16": "f16"}[a.dtype]
    cfg = fc.parse_cfg(a.config)
    causals = [False, True] if a.causal == "both" else [a.causal == "1"]
    work = tempfile.mkdtemp(prefix="tilec-varlen-")
    if a.dry_run:
        arch = a.arch or "sm_90a"
        tv = Tilec(a.tilec, VARLEN, arch, mkdir(work, "varlen"))
        for D in a.head_dim:
            for causal in causals:
                ptx, man = tv.compile(T, D, causal, cfg)
                print(f"compiled {man['kernelName']} D={D} causal={int(causal)}: {ptx}")
        rng = random.Random(a.seed)
        for S in a.seqlen:
            lens = ragged_lengths(rng, S, a.tokens // S * S)
            print(f"S={S}: {a.tokens // S} sequences of {S}; ragged: {len(lens)} sequences, "
                  f"{sum(lens)} tokens, lengths {min(lens)}-{max(lens)}")
        print("dry run: ok")
        return 0
    import torch
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    cc = torch.cuda.get_device_capability()
    arch = a.arch or ("sm_90a" if cc[0] >= 9 else "sm_80")
    table = fc.load_table(fc.CONFIGS / f"flash_fwd.{arch}.json")
    # Separate directories: the two kernels' files would share names.
    tf = Tilec(a.tilec, FIXED, arch, mkdir(work, "fixed"))
    tv = Tilec(a.tilec, VARLEN, arch, mkdir(work, "varlen"))
    gpu = torch.cuda.get_device_name()
    print(f"{gpu}; varlen schedule {fc.cfg_str(cfg)}; {a.tokens} tokens per batch")
    print(f"{'D':>4} {'causal':>6} {'S':>6} {'B':>4} {'provider':>10} {'ms':>8} {'TFLOP/s':>8} "
          f"{'x fixed':>8} {'rel-L2':>8}")
    rows, rng, failed = [], random.Random(a.seed), False
    for D in a.head_dim:
        H = 2048 // D
        for causal in causals:
            for S in a.seqlen:
                B = a.tokens // S
                s = dict(dtype=a.dtype, D=D, causal=int(causal), S=S, B=B, H=H)
                g = torch.Generator(device="cuda").manual_seed(a.seed)
                mk = lambda *shape: torch.randn(*shape, device="cuda", dtype=dtype, generator=g)  # noqa: E731
                fixed_in = [(mk(B * H, S, D), mk(B * H, S, D), mk(B * H, S, D))]
                packed_in = [(mk(H, B * S, D), mk(H, B * S, D), mk(H, B * S, D))]
                ragged = ragged_lengths(rng, S, B * S)
                entry = fc.lookup(table, fc.table_keys(s), S)
                cases = [("fixed", fixed_runner(tf, T, D, causal, entry, B, S, H), fixed_in, [S] * B),
                         ("fixed-cfg", fixed_runner(tf, T, D, causal, cfg, B, S, H), fixed_in, [S] * B),
                         ("varlen", varlen_runner(tv, T, D, causal, cfg, [S] * B, H), packed_in, [S] * B),
                         ("ragged", varlen_runner(tv, T, D, causal, cfg, ragged, H), packed_in, ragged)]
                base = None
                for name, fn, inputs, lens in cases:
                    err = None
                    if name in ("varlen", "ragged"):
                        err = check_varlen(fn(*inputs[0]), *inputs[0], lens, causal)
                        failed |= not err <= 1e-2
                    ms, _ = fm.time_ms(fn, inputs, 10, a.min_ms, a.warmup_ms)
                    tfl = flops(lens, H, D, causal) / ms / 1e9
                    base = base or tfl
                    rows.append(dict(s, provider=name, ms=ms, tflops=tfl, ratio=tfl / base, rel_l2=err,
                                     lens=lens if name == "ragged" else None,
                                     config=fc.cfg_str(entry if name == "fixed" else cfg)))
                    print(f"{D:>4} {int(causal):>6} {S:>6} {B:>4} {name:>10} {ms:>8.3f} {tfl:>8.1f} "
                          f"{tfl / base:>8.3f} {'' if err is None else f'{err:.1e}':>8}")
                del fixed_in, packed_in
                torch.cuda.empty_cache()
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "varlen.json").write_text(json.dumps(dict(gpu=gpu, rows=rows), indent=1))
    if failed:
        print("FAIL: a varlen output is off SDPA by more than 1e-2 (rel-L2)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
