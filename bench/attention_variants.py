#!/usr/bin/env python3
"""Forward variants benchmark: tilec's flex_fwd / flex_fwd_sparse instances vs FlexAttention and SDPA.

Each variant (plain causal and non-causal, GQA 8:1 on [B, S, H, D], sliding
window, ALiBi, tanh softcap, sinks, document masking, prefix-LM, a random
block-sparse mask) is compiled by tilec from a few lines of user-style .tile
(`import "flex_fwd.tile"`, an instance with its hooks; bench/variants_defs.py)
and timed side by side with compiled FlexAttention (the same score_mod /
mask_mod, a BlockMask from create_block_mask) and SDPA where SDPA can express
it. TFLOP/s count only the visible (query, key) pairs: 4 * D per pair and head.
See bench/README.md.

  python3 bench/attention_variants.py --tilec PATH/TO/tilec --json variants.json
  python3 bench/attention_variants.py --tilec PATH/TO/tilec --quick
  python3 bench/attention_variants.py --dry-run --tilec build/bin/tilec   # no GPU
  python3 bench/attention_variants.py --tilec NEW/tilec --tilec-b OLD/tilec \
      --variants blocksparse --providers flex tilec   # A/B of two compilers, one run

torch and cupy are imported lazily: --help and --dry-run work without them.
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention_fwd as fwd  # noqa: E402  (launcher, timing, Flex compile)
import variants_defs as vd  # noqa: E402  (the variants: sources, masks, pair counts)
import variants_run as vr  # noqa: E402  (the providers)

SEQLENS = [2048, 4096, 8192, 16384]
HEAD_DIMS = [64, 128]
PROVIDERS = ["flex", "sdpa", "tilec", "tilec-b", "tilec-bm"]  # run in this order: flex is the reference
RTOL = 1e-2  # rel-L2 of a 16-bit output against the reference


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tilec", default="tilec", help="tilec binary (default: tilec on PATH)")
    p.add_argument("--tilec-b", metavar="TILEC",
                   help="a second tilec binary (a build before a compiler change): provider "
                        "tilec-b runs the same kernels and configs in the same process, for an A/B")
    p.add_argument("--schedule-b", metavar="NAME=VALUE,...", default="",
                   help="schedule fields set in every config of provider tilec-b (tilec-b's binary: "
                        "--tilec-b, else --tilec), e.g. tma_a: the A/B of a schedule change")
    p.add_argument("--config-b", metavar="CONFIG", default="",
                   help="a whole config for provider tilec-b instead of the table's, as "
                        "attention_fwd.py --config takes it (e.g. 128,64,8,producer,persistent)")
    p.add_argument("--arch", help="sm_90a or sm_80 (default: from the GPU; sm_90a for --dry-run)")
    p.add_argument("--head-dim", nargs="+", type=int, default=HEAD_DIMS)
    p.add_argument("--seqlen", nargs="+", type=int, help=f"default: {SEQLENS}")
    p.add_argument("--variants", nargs="+", choices=list(vd.BY_NAME), default=list(vd.BY_NAME))
    p.add_argument("--providers", nargs="+", choices=PROVIDERS,
                   help="default: all (tilec-b only with --tilec-b)")
    p.add_argument("--min-runs", type=int, default=10)
    p.add_argument("--min-ms", type=float, default=200.0)
    p.add_argument("--warmup-ms", type=float, default=200.0,
                   help="untimed calls right before each timing (attention_fwd.py's Method)")
    p.add_argument("--sdpa-max-gib", type=float, default=16.0,
                   help="skip SDPA where its mask / bias tensor would exceed this (default 16)")
    p.add_argument("--json", metavar="FILE", help="write the results here")
    p.add_argument("--quick", action="store_true",
                   help="seqlen 4k (plus 16k for causal and the window), fewer runs")
    p.add_argument("--dry-run", action="store_true", help="print the plan, compile every tilec kernel; no GPU")
    a = p.parse_args(argv)
    try:
        a.schedule_b = fwd.parse_schedule(a.schedule_b)
    except ValueError as e:
        p.error(f"--schedule-b: {e}")
    try:
        a.config_b = fwd.parse_cfg(a.config_b) if a.config_b else None
    except ValueError as e:
        p.error(f"--config-b: {e}")
    b = a.tilec_b or a.schedule_b or a.config_b
    if a.providers is None:
        a.providers = [x for x in PROVIDERS if x != "tilec-b" or b]
    elif "tilec-b" in a.providers and not b:
        p.error("provider tilec-b needs --tilec-b, --schedule-b or --config-b")
    elif b and "tilec-b" not in a.providers:
        a.providers.append("tilec-b")
    if a.quick:
        a.min_runs, a.min_ms, a.warmup_ms = min(a.min_runs, 10), min(a.min_ms, 50.0), min(a.warmup_ms, 50.0)
    return a


def plan(a):
    """[(shape, [variants])]: B = 16384 / S, H = 2048 / D as attention_fwd.py
    (16k tokens per batch, hidden size 2048); --quick: 4k, and 16k for the
    variants that name it (the window against plain causal)."""
    out = []
    for D in a.head_dim:
        seqlens = a.seqlen or ([4096] if a.quick else SEQLENS)
        extra = sorted({S for v in vd.VARIANTS for S in v.seqlens} - set(seqlens)) if a.quick and not a.seqlen else []
        for S in seqlens + extra:
            vs = [vd.BY_NAME[n] for n in a.variants if S in seqlens or S in vd.BY_NAME[n].seqlens]
            s = dict(dtype="bf16", D=D, S=S, B=max(1, fwd.TOKENS // S), H=fwd.HIDDEN // D)
            if vs:
                out.append((s, vs))
    return out


def flops(v, s, pairs):
    return 4.0 * s["D"] * pairs * s["H"]


def providers_of(v, a):
    return [p for p in a.providers if p != "tilec-bm" or v.bm_tile]


# ----------------------------------------------------------------- runs ----
def run_one(name, make, ref, v, s, a, fl):
    """One provider of one variant and shape: the first call (its output
    against the reference), then the timing. -> (row, first output)."""
    import torch
    row, out = {"provider": name}, None
    try:
        fn, inputs, config = make()
        row["config"] = config
        t0 = time.perf_counter()
        out = fn(*inputs[0])
        torch.cuda.synchronize()
        row["first_call_s"] = round(time.perf_counter() - t0, 2)
        if ref is not None:
            o, lse = out
            row.update(vr.diff(vr.to_bhsd(o, v) if name.startswith("tilec") else o, lse, *ref))
        ms, runs = fwd.time_ms(fn, inputs, a.min_runs, a.min_ms, a.warmup_ms)
        row.update(ms=ms, runs=runs, tflops=fl / (ms * 1e-3) / 1e12)
        row["status"] = "unchecked" if ref is None else ("PASS" if row["rel_l2"] <= RTOL else "FAIL")
    except fwd.Unavailable as e:
        row["status"] = "unavailable: " + fwd.short_reason(e)
    except Exception as e:  # tilec failing, a launch error
        row["status"] = "error"
        row["error"] = fwd.short_reason(fwd.root_cause(e), 200)
    return row, out


def run_shape(s, variants, a, tcs, l2):
    """Every variant and provider of shape s -> rows."""
    import torch
    data = vd.shape_data(s["S"], s["B"])
    rows, inputs_by_layout = [], {}
    for v in variants:
        g = vd.gpu_data(v, s, data)
        pairs = vd.visible_pairs(v, s["S"], s["B"], data)
        m = vd.dense_mask(v, g, s["S"], s["B"])  # the exact count, from the mask
        counted = s["B"] * s["S"] ** 2 if m is None else int(m.sum().item()) * (s["B"] // m.shape[0])
        del m
        if counted != pairs:
            sys.exit(f"error: {v.name} S={s['S']}: {counted} visible pairs in the mask, {pairs} counted")
        fl = flops(v, s, pairs)
        key = (v.bshd, v.gqa)
        if key not in inputs_by_layout:
            inputs_by_layout[key] = vr.make_inputs(v, s, l2)
        inputs = inputs_by_layout[key]
        base = dict(variant=v.name, dtype=s["dtype"], D=s["D"], S=s["S"], B=s["B"], H=s["H"],
                    H_kv=s["H"] // v.gqa, visible_pairs=pairs * s["H"],
                    visible_frac=pairs / (s["B"] * s["S"] ** 2), flops=fl)
        bm128 = {}

        def flex_mask(block=128):
            if block not in bm128:
                bm128[block] = vr.block_mask(v, s, g, block)
            return bm128[block]

        def tilec(bm, tc):
            """A tilec provider: its kernel's own config for this shape (as
            the dry run lists it), over a BlockMask of that kernel's BM x BN."""
            k = tc.kernel(v, s["D"], fwd.DTYPES[s["dtype"]], s["S"], bm)
            sparse = bm or v.name == "blocksparse"
            blk = (k["BM"], k["BN"])
            bmask = flex_mask(128 if blk == (128, 128) else blk) if sparse else None
            fn = vr.tilec_runner(tc, v, s, g, bm=bm, bmask=bmask)
            return fn, inputs, k["config"] + (" (default: fallback)" if k["fallback"] else "")

        makers = {
            "flex": lambda: (vr.flex_runner(v, s, g, flex_mask()), inputs, "compiled"),
            "sdpa": lambda: vr.sdpa_runner(v, s, g, inputs, a.sdpa_max_gib * 2**30),
            "tilec": lambda: tilec(False, tcs["tilec"]),
            "tilec-b": lambda: tilec(False, tcs.get("tilec-b")),
            "tilec-bm": lambda: tilec(True, tcs["tilec"]),
        }
        ref = None
        for p in providers_of(v, a):
            row, out = run_one(p, makers[p], ref, v, s, a, fl)
            row = dict(base, **row)
            if p.startswith("tilec"):  # where its config came from (cached: no compile here)
                try:
                    k = tcs[p if p == "tilec-b" else "tilec"].kernel(
                        v, s["D"], fwd.DTYPES[s["dtype"]], s["S"], p == "tilec-bm")
                    row.update(config_origin=k["origin"], fallback=k["fallback"])
                except RuntimeError:
                    pass
            if ref is None and p in ("flex", "sdpa") and row["status"] == "unchecked":
                o, lse = out  # the reference: flex; sdpa where flex is unavailable
                ref = (o, lse)  # [B, H, S, D]
                row["status"] = "ref"
            rows.append(row)
            print_progress(row)
            del out
    del inputs_by_layout
    torch.cuda.empty_cache()
    derive(rows)
    return rows


def derive(rows):
    """tilec rows: time per visible FLOP relative to the variant's reference
    (plain causal or non-causal, tilec, same shape) and speedup over flex."""
    by = {(r["variant"], r["provider"]): r for r in rows}
    for r in rows:
        if not r["provider"].startswith("tilec") or not r.get("ms"):
            continue
        plain = by.get((vd.BY_NAME[r["variant"]].ref, "tilec"))
        if plain and plain.get("ms"):
            r["vs_plain"] = (r["ms"] / r["flops"]) / (plain["ms"] / plain["flops"])
            r["plain"] = plain["variant"]
        flex = by.get((r["variant"], "flex"))
        if flex and flex.get("ms"):
            r["speedup_vs_flex"] = flex["ms"] / r["ms"]


# --------------------------------------------------------------- output ----
def f(x, spec=".1f"):
    return "-" if x is None else format(x, spec)


def print_progress(r):
    extra = r.get("error") or ""
    if r["provider"].startswith("tilec") and r.get("config"):
        extra = f"[{r['config']}] {extra}"
    print(f"  {r['variant']:11s} D={r['D']:<3d} S={r['S']:<5d} {r['provider']:8s} "
          f"{f(r.get('tflops')):>6s} TFLOP/s {f(r.get('ms'), '.3f'):>8s} ms  "
          f"max|d| {f(r.get('max_abs'), '.2e'):>8s}  {r['status']} {extra}", flush=True)


def print_table(s, rows):
    """One table per (D, S): a line per variant, the providers side by side."""
    by = {(r["variant"], r["provider"]): r for r in rows}
    names = list(dict.fromkeys(r["variant"] for r in rows))
    hdr = ["variant", "visible", "tilec TF/s", "ms", "vs plain", "tilec-bm TF/s", "flex TF/s", "ms",
           "tilec/flex", "sdpa TF/s", "backend", "max|d| vs ref", "lse d", "tilec", "tilec config"]
    table = [hdr]
    for n in names:
        t, bm, fx, sd = (by.get((n, p), {}) for p in ("tilec", "tilec-bm", "flex", "sdpa"))
        vp = t.get("vs_plain")
        table.append([n, f"{100 * (t or fx or sd).get('visible_frac', 0):.1f}%",
                      f(t.get("tflops")), f(t.get("ms"), ".3f"),
                      "" if vp is None else f"x{vp:.2f}" + ("" if t.get("plain") == "causal" else " nc"),
                      f(bm.get("tflops")), f(fx.get("tflops")), f(fx.get("ms"), ".3f"),
                      f(t.get("speedup_vs_flex"), ".2f"), f(sd.get("tflops")), sd.get("config", "-"),
                      f(t.get("max_abs"), ".1e"), f(t.get("lse_max_abs"), ".1e"),
                      short_status(t), t.get("config", "-")])
    if any(p == "tilec-b" for _, p in by):  # the A/B: the second tilec, its time over tilec's
        table[0] += ["tilec-b TF/s", "tilec / tilec-b"]
        for row, n in zip(table[1:], names):
            t, b = by.get((n, "tilec"), {}), by.get((n, "tilec-b"), {})
            ratio = t["tflops"] / b["tflops"] if t.get("tflops") and b.get("tflops") else None
            row += [f(b.get("tflops")), f(ratio, ".3f")]
        hdr = table[0]
    w = [max(len(str(row[i])) for row in table) for i in range(len(hdr))]
    print(f"\nbf16, D={s['D']}, S={s['S']}, B={s['B']}, H={s['H']}  "
          "(TF/s on visible pairs; vs plain: tilec time per visible FLOP / plain causal's, "
          "'nc' / plain non-causal's; tilec/flex: speedup; tilec config: BM, BN, schedule of the "
          "config table entry, flex_fwd_sparse without P and G)")
    for row in table:
        print("  ".join(str(x).rjust(w[i]) if i else str(x).ljust(w[i]) for i, x in enumerate(row)))
    notes = {(r["provider"], r["status"]) for r in rows if r["status"].startswith(("unavailable", "error"))}
    for p, st in sorted(notes):
        print(f"  note: {p}: {st}")


def short_status(r):
    st = r.get("status", "-")
    return "unavail." if st.startswith("unavailable") else st


# ----------------------------------------------------------------- main ----
def compile_all(shapes, a, tc):
    """Compiles every tilec kernel of the plan with the config each (D, S)
    gets (tc.kernel()) and prints one line per kernel and config, with the
    seqlens that use it; -> one row per (variant, bm, D, S)."""
    print("tilec kernels per config (seqlens that use it; compile wall time):")
    rows = []
    for D in sorted({s["D"] for s, _ in shapes}):
        names = list(dict.fromkeys(v.name for s, vs in shapes if s["D"] == D for v in vs))
        for n in names:
            v = vd.BY_NAME[n]
            seqlens = [s["S"] for s, vs in shapes if s["D"] == D and v in vs]
            for bm in ([False, True] if v.bm_tile and "tilec-bm" in a.providers else [False]):
                groups = {}  # config (or error) -> [(S, row)]
                for S in seqlens:
                    row = dict(variant=n, bm=bm, D=D, S=S)
                    try:
                        k = tc.kernel(v, D, "bf16", S, bm)
                        man = k["man"]
                        row.update(config=k["config"], origin=k["origin"], fallback=k["fallback"],
                                   kernel=man["kernelName"], blockSize=man["blockSize"],
                                   smem=man["sharedMemoryBytes"], tensor_maps=len(man.get("tensorMaps", [])),
                                   compile_ms=round(k["ms"]), warnings=k["warns"])
                        gkey = (k["config"], k["fallback"])
                    except RuntimeError as e:
                        row["error"] = str(e)
                        gkey = ("error", row["error"])
                    rows.append(row)
                    groups.setdefault(gkey, []).append((S, row))
                for (cfg, fallback), members in groups.items():
                    row = members[0][1]
                    ss = ",".join(str(S) for S, _ in members)
                    label = n + (" (bm)" if bm else "")
                    if "error" in row:
                        print(f"  D={D:<3d} {label:16s} S={ss:<22s} {row['error']}")
                        continue
                    print(f"  D={D:<3d} {label:16s} S={ss:<22s} {cfg:44s} {row['kernel']:14s} "
                          f"{row['compile_ms']:5d} ms  block {row['blockSize']}, smem {row['smem']}, "
                          f"{row['tensor_maps']} tensor maps")
                    if fallback:
                        print(f"      fallback to the default: the matched {fallback}")
                    for w in row.get("warnings", []):
                        print(f"      {w}")
    return rows


def main(argv=None):
    a = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    shapes = plan(a)
    workdir = tempfile.mkdtemp(prefix="tilec-variants-")
    if a.dry_run:
        arch = a.arch or "sm_90a"
    else:
        import torch
        if not torch.cuda.is_available():
            sys.exit("error: no CUDA device (use --dry-run on a machine without a GPU)")
        cap = torch.cuda.get_device_capability()
        arch = a.arch or ("sm_90a" if cap == (9, 0) else "sm_80")
    table_path = fwd.CONFIGS / f"flash_fwd.{arch}.json"
    table = fwd.load_table(table_path)
    tc = vr.Tilec(a.tilec, arch, table, workdir)
    tcs = {"tilec": tc}
    if a.tilec_b or a.schedule_b or a.config_b:
        Path(workdir, "b").mkdir()
        tcs["tilec-b"] = vr.Tilec(a.tilec_b or a.tilec, arch, table, str(Path(workdir, "b")),
                                  schedule=a.schedule_b, config=a.config_b)
    need_tilec = any(p.startswith("tilec") for p in a.providers)

    print(f"plan: {len(shapes)} shapes, arch {arch}, tilec configs from {table_path.relative_to(fwd.ROOT)} "
          f"per (T, D, CAUSAL, seqlen) (default {fwd.cfg_str(table['_default'])} where tilec refuses "
          f"the entry; flex_fwd_sparse without the producer and cta_programs), sources in {workdir}")
    for s, vs in shapes:
        data = vd.shape_data(s["S"], s["B"])
        cells = [f"{v.name} {100 * vd.visible_pairs(v, s['S'], s['B'], data) / (s['B'] * s['S'] ** 2):.0f}%"
                 for v in vs]
        print(f"  D={s['D']:<3d} S={s['S']:<5d} B={s['B']:<2d} H={s['H']:<2d}: {', '.join(cells)}")

    compile_rows = []
    if need_tilec:
        for name, t in tcs.items():
            if len(tcs) > 1:
                print(f"{name}: {t.exe}")
            compile_rows += compile_all(shapes, a, t)
    if a.dry_run:
        return 1 if any("error" in r for r in compile_rows) else 0

    import torch
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    meta = {"device": torch.cuda.get_device_name(), "arch": arch, "torch": torch.__version__,
            "cuda": torch.version.cuda, "tilec": tc.exe, "tilec_b": a.tilec_b,
            "tilec_config_table": str(table_path.relative_to(fwd.ROOT)),
            "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "argv": sys.argv[1:],
            "min_runs": a.min_runs, "min_ms": a.min_ms, "warmup_ms": a.warmup_ms}
    print(f"device: {meta['device']}  torch {meta['torch']} (CUDA {meta['cuda']})")
    rows = []
    for s, vs in shapes:
        print(f"-- D={s['D']} S={s['S']} B={s['B']} H={s['H']}")
        shape_rows = run_shape(s, vs, a, tcs, l2)
        print_table(s, shape_rows)
        rows += shape_rows
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps({"meta": meta, "compile": compile_rows, "rows": rows}, indent=1))
        print(f"\nwrote {a.json}")
    bad = [r for r in rows if r["provider"].startswith("tilec") and r["status"] in ("FAIL", "error")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
