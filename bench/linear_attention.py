#!/usr/bin/env python3
"""Linear attention benchmark: tilec's chunked linear_attn.tile against tilec's
causal softmax flash_fwd.tile and a PyTorch chunked implementation (eager and
torch.compile), side by side in one process, at seqlen 1k-64k with the same
number of tokens per shape. Prints tokens/s and TFLOP/s per provider and the
seqlen from which linear attention is faster than softmax attention.

  python3 bench/linear_attention.py --tilec PATH/TO/tilec [--out DIR]
  python3 bench/linear_attention.py --dry-run --tilec build/bin/tilec  # no GPU
  python3 bench/linear_attention.py --self-test                        # no GPU

Reuses bench/attention_fwd.py's compiler driver, launcher, config table lookup
and timing (see bench/README.md, "Method"). torch and cupy are imported
lazily, so --help, --dry-run and --self-test work without them.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention_fwd as af  # noqa: E402
from linear_torch import torch_chunked  # noqa: E402
from linear_tilec import (BWD_KERNELS, KINDS, LINEAR_TILE, LinearTilec, bwd_bk,  # noqa: E402
                          linear_bwd_runner, linear_runner, linear_schedule, segments,
                          PROGRAMS_PER_SM, SMS)

SEQLENS = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
TOKENS = 65536   # batch = TOKENS / seqlen
HIDDEN = 2048    # heads = HIDDEN / head_dim, as in attention_fwd.py
PROVIDERS = ["tilec-linear", "tilec-softmax", "torch-chunked", "torch-compile", "tilec-linear-bwd"]
# --tilec-b's binary running the same kernels in the same process (an A/B)
B_PROVIDERS = ["tilec-linear-b", "tilec-linear-bwd-b"]


def linear_flops(s, C):
    """Flops the chunked algorithm executes: per chunk of C tokens and head
    φQ·φKᵀ and A·V (2·C²·D each, the masked half included) and φQ·S, φKᵀ·V
    (2·C·D² each): per token 4·C·D + 4·D²."""
    return s["B"] * s["H"] * s["S"] * (4 * C * s["D"] + 4 * s["D"] ** 2)


def softmax_flops(s):
    """Causal softmax attention: 4·S²·D per head, halved (attention_fwd.py)."""
    return 2 * s["B"] * s["H"] * s["S"] ** 2 * s["D"]


def shapes(dtypes, head_dims, seqlens, tokens=TOKENS):
    for dt in dtypes:
        for D in head_dims:
            for S in seqlens:
                yield dict(dtype=dt, D=D, causal=True, S=S, B=max(1, tokens // S),
                           H=max(1, HIDDEN // D))


def crossover(points):
    """points: [(seqlen, linear tokens/s, softmax tokens/s)]. The smallest
    seqlen from which linear is faster at every larger seqlen, else None."""
    best = None
    for S, lin, soft in sorted(points, reverse=True):
        if lin is None or soft is None or lin <= soft:
            break
        best = S
    return best


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tilec", default="tilec")
    p.add_argument("--dtype", nargs="+", default=["bf16"], choices=list(af.DTYPES))
    p.add_argument("--head-dim", nargs="+", type=int, default=[64], choices=[64, 128])
    p.add_argument("--seqlen", nargs="+", type=int, default=SEQLENS)
    p.add_argument("--chunk", type=int, default=64, choices=[32, 64, 128])
    p.add_argument("--kind", default="elu-norm", choices=list(KINDS),
                   help="elu-norm-decay: the decay's code with γ = 1 (same result as elu-norm)")
    p.add_argument("--bv", type=int, default=0, choices=[0, 16, 32, 64, 128],
                   help="value columns per program (and the backward's BK); 0: 64 at "
                        "D = 64, 32 at D = 128")
    p.add_argument("--programs-per-sm", type=int, default=0,
                   help="programs of the segmented forward that run at once on one SM, "
                        "the wave segments() plans with (default 0: the driver's occupancy; "
                        f"--dry-run: {PROGRAMS_PER_SM})")
    p.add_argument("--tilec-b", metavar="TILEC", default=None,
                   help="a second tilec (e.g. the build before a change): providers "
                        "tilec-linear-b and tilec-linear-bwd-b run the same kernels with it, "
                        "in the same process, after the same warm-up")
    p.add_argument("--providers", nargs="+", default=None, choices=PROVIDERS + B_PROVIDERS,
                   help="default: all of " + ", ".join(PROVIDERS) +
                        ", and with --tilec-b also " + ", ".join(B_PROVIDERS))
    p.add_argument("--arch", default=None, help="--dry-run's arch (default sm_90a)")
    p.add_argument("--min-runs", type=int, default=10)
    p.add_argument("--min-ms", type=float, default=200.0)
    p.add_argument("--warmup-ms", type=float, default=100.0)
    p.add_argument("--out", default=None, help="directory for results.json")
    p.add_argument("--dry-run", action="store_true", help="compile every tilec kernel, no GPU")
    p.add_argument("--self-test", action="store_true", help="the pure-Python logic, no GPU")
    a = p.parse_args(argv)
    if a.providers is None:
        a.providers = PROVIDERS + (B_PROVIDERS if a.tilec_b else [])
    if a.bv and any(D % a.bv for D in a.head_dim):
        p.error(f"--bv {a.bv} must divide every head dim ({' '.join(map(str, a.head_dim))})")
    if any(x in B_PROVIDERS for x in a.providers) and not a.tilec_b:
        p.error("providers " + ", ".join(B_PROVIDERS) + " need --tilec-b")
    return a


def self_test():
    """--self-test: crossover, flop counts, shape plan; no GPU or torch."""
    assert crossover([(1024, 1.0, 2.0), (4096, 3.0, 2.0), (8192, 5.0, 1.0)]) == 4096
    assert crossover([(1024, 3.0, 2.0), (4096, 1.0, 2.0), (8192, 5.0, 1.0)]) == 8192
    assert crossover([(1024, 1.0, 2.0), (8192, 1.0, 2.0)]) is None
    assert crossover([(1024, 2.0, 1.0), (8192, 3.0, 1.0)]) == 1024
    assert crossover([(1024, 2.0, 1.0), (8192, None, 1.0)]) is None
    s = dict(dtype="bf16", D=64, causal=True, S=4096, B=16, H=16)
    assert linear_flops(s, 64) == 16 * 16 * 4096 * (4 * 64 * 64 + 4 * 64 * 64)
    assert softmax_flops(s) == 2 * 16 * 16 * 4096 ** 2 * 64
    plan = list(shapes(["bf16"], [64, 128], SEQLENS))
    assert all(x["B"] * x["S"] == TOKENS for x in plan), "same tokens at every seqlen"
    assert all(x["H"] * x["D"] == HIDDEN for x in plan)
    assert linear_schedule(64) == (64, 4) and linear_schedule(128) == (32, 8)
    assert linear_schedule(64, 32) == (32, 4) and linear_schedule(128, 64) == (64, 8)
    assert bwd_bk(64, 2 * 32) == 32 and bwd_bk(64, 4 * 32) == 32    # 64, 128 programs < 132 SMs
    assert bwd_bk(64, 8 * 32) == 64 and bwd_bk(64, 2 * 32, 64) == 64  # 256 programs; --bv 64
    assert bwd_bk(128, 32) == 32                                      # D = 128: BV = 32 already
    assert segments(1024, 64, 2048) == (1, 1024)
    assert segments(65536, 64, 32) == (8, 8192)      # one wave of 256 programs
    assert segments(16384, 64, 128) == (2, 8192)     # 3 would take two waves
    assert segments(4096, 64, 512) == (1, 4096)      # the heads fill the GPU
    assert segments(300, 64, 1) == (1, 320)          # at least 4 chunks each
    for S, C, n in [(65536, 64, 32), (4097, 64, 8), (1000, 32, 3), (70000, 128, 64)]:
        nseg, seg_len = segments(S, C, n)
        assert seg_len % C == 0 and (nseg - 1) * seg_len < S <= nseg * seg_len
    print("self-test: ok")


def arch_of_device():
    import torch
    major, minor = torch.cuda.get_device_capability()
    return "sm_90a" if (major, minor) == (9, 0) else "sm_80"


def softmax_cfg(table, s):
    return af.lookup(table, af.table_keys(s), s["S"]) if table else af.KERNEL_DEFAULT


def dry_run(a):
    arch = a.arch or "sm_90a"
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as work_b:
        lt = LinearTilec(a.tilec, LINEAR_TILE, arch, work, bv=a.bv)
        lt_b = LinearTilec(a.tilec_b, LINEAR_TILE, arch, work_b, bv=a.bv) if a.tilec_b else None
        sm = af.Tilec(a.tilec, af.TILE, arch, work)
        table = load_softmax_table(arch)
        bad = 0
        for s in shapes(a.dtype, a.head_dim, a.seqlen):
            T = af.DTYPES[s["dtype"]]
            bv, warps = linear_schedule(s["D"], a.bv)
            nseg, seg_len = segments(s["S"], a.chunk, s["D"] // bv * s["B"] * s["H"],
                                     (a.programs_per_sm or PROGRAMS_PER_SM) * SMS)
            line = (f"{s['dtype']} D={s['D']} S={s['S']} B={s['B']} H={s['H']}: "
                    f"linear C={a.chunk} BV={bv} W={warps} grid ({s['D'] // bv}, {s['B'] * s['H']}, "
                    f"{nseg}) segment {seg_len}")
            bk = bwd_bk(s["D"], s["B"] * s["H"], a.bv)
            try:
                for v in [None, "seg", "segsum"] + BWD_KERNELS if nseg > 1 else [None] + BWD_KERNELS:
                    vbk = bk if v in BWD_KERNELS else None
                    lt.compile_linear(T, s["D"], a.chunk, a.kind, v, vbk)
                    if lt_b:
                        lt_b.compile_linear(T, s["D"], a.chunk, a.kind, v, vbk)
                cfg = softmax_cfg(table, s)
                sm.compile(T, s["D"], True, cfg)
                line += f"; backward BK={bk}; softmax {af.cfg_str(cfg)}: compiled" + \
                    (" (linear kernels by --tilec-b too)" if lt_b else "")
            except RuntimeError as e:
                line += f": {e}"
                bad += 1
            print(line)
    return 1 if bad else 0


def load_softmax_table(arch):
    path = af.CONFIGS / f"flash_fwd.{arch}.json"
    if not path.exists():
        return None
    table = af.load_table(str(path))
    table["_path"] = str(path)
    return table


def run(a):
    import torch
    arch = arch_of_device()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    work = tempfile.mkdtemp(prefix="linear-bench-")
    lt = LinearTilec(a.tilec, LINEAR_TILE, arch, work, bv=a.bv)
    lt_b = LinearTilec(a.tilec_b, LINEAR_TILE, arch, tempfile.mkdtemp(prefix="linear-bench-b-"),
                       bv=a.bv) if a.tilec_b else None
    sm = af.Tilec(a.tilec, af.TILE, arch, work)
    table = load_softmax_table(arch)
    compiled = torch.compile(torch_chunked, dynamic=False)
    rows, status = [], 0
    print(f"{torch.cuda.get_device_name(0)}, {arch}, kind {a.kind}, chunk {a.chunk}, "
          f"{TOKENS} tokens per shape, hidden {HIDDEN}")
    print(f"{'dtype':5} {'D':>4} {'S':>6} {'B':>3} {'H':>3} {'provider':16} {'config':34} {'ms':>9} "
          f"{'Mtok/s':>9} {'TFLOP/s':>8} {'rel_l2':>8} status")
    for s in shapes(a.dtype, a.head_dim, a.seqlen):
        inputs = af.make_inputs(s, l2)
        ref = torch_chunked(*inputs[0], a.chunk, a.kind, dtype=torch.float32).float()
        runners = {}
        for p in a.providers:
            try:
                if p in ("tilec-linear", "tilec-linear-b"):
                    fn = linear_runner(lt if p == "tilec-linear" else lt_b, s, a.chunk, a.kind,
                                       a.programs_per_sm)
                    runners[p] = (fn, linear_flops(s, a.chunk))
                elif p == "tilec-softmax":
                    fn = af.tilec_runner(sm, s, softmax_cfg(table, s))
                    runners[p] = ((lambda f: lambda q, k, v: f(q, k, v)[0])(fn), softmax_flops(s))
                elif p == "torch-chunked":
                    runners[p] = ((lambda q, k, v: torch_chunked(q, k, v, a.chunk, a.kind)),
                                  linear_flops(s, a.chunk))
                elif p == "torch-compile":
                    runners[p] = ((lambda q, k, v: compiled(q, k, v, a.chunk, a.kind)),
                                  linear_flops(s, a.chunk))
                else:  # three scans of about a forward's products each
                    runners[p] = (linear_bwd_runner(lt if p == "tilec-linear-bwd" else lt_b, s,
                                                    a.chunk, a.kind),
                                  3 * linear_flops(s, a.chunk))
            except Exception as e:  # one provider's failure is a row, not the end
                rows.append(dict(s, provider=p, status="error", error=str(e)))
                print(f"{s['dtype']:5} {s['D']:4} {s['S']:6} {s['B']:3} {s['H']:3} {p:16} error: {e}")
                status = 1
        bv, warps = linear_schedule(s["D"], a.bv)
        nseg = getattr(runners.get("tilec-linear", (None,))[0], "nseg", "?")
        bk = getattr(runners.get("tilec-linear-bwd", (None,))[0], "bk", bv)
        configs = {"tilec-linear": f"C={a.chunk},BV={bv},W={warps},NSEG={nseg}",
                   "tilec-linear-bwd": f"C={a.chunk},BK={bk},W={warps}",
                   "tilec-linear-b": f"C={a.chunk},BV={bv},W={warps},NSEG={nseg}",
                   "tilec-linear-bwd-b": f"C={a.chunk},BK={bk},W={warps}",
                   "tilec-softmax": af.cfg_str(softmax_cfg(table, s)),
                   "torch-chunked": f"C={a.chunk}", "torch-compile": f"C={a.chunk}"}
        for p, (fn, fl) in runners.items():
            row = dict(s, provider=p, config=configs[p])
            try:
                out = fn(*inputs[0])
                torch.cuda.synchronize()
                if p not in ("tilec-softmax", "tilec-linear-bwd", "tilec-linear-bwd-b"):  # (the
                    # backward's parity: tile-gpu-linear-attn-bwd)
                    row["rel_l2"] = ((out.float() - ref).norm() / ref.norm()).item()
                ms, _ = af.time_ms(fn, inputs, a.min_runs, a.min_ms, a.warmup_ms)
                row.update(ms=ms, tokens_per_s=s["B"] * s["S"] / (ms * 1e-3),
                           tflops=fl / (ms * 1e-3) / 1e12)
                row["status"] = "PASS" if row.get("rel_l2", 0.0) <= af.RTOL else "FAIL"
            except Exception as e:
                row.update(status="error", error=str(e))
            status |= row["status"] != "PASS"
            rows.append(row)
            print(f"{s['dtype']:5} {s['D']:4} {s['S']:6} {s['B']:3} {s['H']:3} {p:16} "
                  f"{row['config']:34} {row.get('ms', float('nan')):9.3f} {row.get('tokens_per_s', 0) / 1e6:9.1f} "
                  f"{row.get('tflops', 0):8.1f} {row.get('rel_l2', float('nan')):8.1e} "
                  f"{row['status']}{'  ' + row['error'] if 'error' in row else ''}", flush=True)
        del inputs
    summary = summarize(rows, a)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "linear_attention.json").write_text(json.dumps(
            {"meta": {"device": torch.cuda.get_device_name(0), "arch": arch, "argv": sys.argv,
                      "tokens": TOKENS, "hidden": HIDDEN, "kind": a.kind, "chunk": a.chunk},
             "results": rows, "summary": summary}, indent=1))
    return status


def summarize(rows, a):
    """Crossover against tilec's softmax attention, and ratios (printed)."""
    def tps(p, s):
        r = next((r for r in rows if r["provider"] == p and r["S"] == s["S"]
                  and r["D"] == s["D"] and r["dtype"] == s["dtype"] and "tokens_per_s" in r), None)
        return r["tokens_per_s"] if r else None
    out = []
    for dt in a.dtype:
        for D in a.head_dim:
            plan = list(shapes([dt], [D], a.seqlen))
            pts = [(s["S"], tps("tilec-linear", s), tps("tilec-softmax", s)) for s in plan]
            x = crossover(pts)
            last = plan[-1]
            lin, soft, comp = (tps(p, last) for p in ("tilec-linear", "tilec-softmax", "torch-compile"))
            item = {"dtype": dt, "D": D, "crossover_seqlen": x,
                    f"linear_over_softmax_at_{last['S']}": lin / soft if lin and soft else None,
                    "linear_over_torch_compile": {s["S"]: (tps("tilec-linear", s) or 0) /
                                                  tps("torch-compile", s)
                                                  for s in plan if tps("torch-compile", s)}}
            for p in ("tilec-linear", "tilec-linear-bwd"):  # the A/B of --tilec-b
                ab = {s["S"]: tps(p, s) / tps(p + "-b", s)
                      for s in plan if tps(p, s) and tps(p + "-b", s)}
                if ab:
                    item[f"{p}_over_b"] = ab
                    print(f"{dt} D={D} {p} / {p}-b: " +
                          ", ".join(f"S={k} {v:.3f}" for k, v in ab.items()))
            out.append(item)
            print(f"\n{dt} D={D}: linear attention is faster than causal softmax attention "
                  f"from seqlen {x if x else 'never (in this sweep)'}; at {last['S']}: "
                  f"{lin / soft if lin and soft else float('nan'):.2f}x softmax, "
                  f"{lin / comp if lin and comp else float('nan'):.2f}x torch.compile")
    return out


def main(argv=None):
    a = parse_args(argv)
    if a.self_test:
        self_test()
        return 0
    if a.dry_run:
        return dry_run(a)
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
