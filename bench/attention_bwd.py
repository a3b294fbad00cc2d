#!/usr/bin/env python3
"""Attention backward benchmark: tilec's backward vs PyTorch SDPA (flash, cuDNN, efficient) and FlexAttention.

Times the backward alone, every provider side by side in one process on the
same random inputs (issue #31), and checks dq, dk, dv of the same run against
an fp32 reference. See bench/README.md.

  python3 bench/attention_bwd.py --tilec-lib /tmp/tilec-bundle/lib/libtilec_c.so.1 --out $OUT/bwd
  python3 bench/attention_bwd.py --quick           # bf16, seqlens 1k and 4k, fewer runs
  python3 bench/attention_bwd.py --dry-run         # the plan; no torch or GPU needed

Providers (bwd_providers.py):
  tilec            torch.ops.tilec.attention_bwd (python/tilec) on o and lse from
                   torch.ops.tilec.attention_fwd, made once per input copy outside the timing
  sdpa-flash, sdpa-cudnn, sdpa-efficient
                   F.scaled_dot_product_attention under sdpa_kernel([that backend]);
                   the forward runs once per input copy, the timed call is
                   torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
  flex             torch.compile'd flex_attention (a causal BlockMask when causal),
                   its backward timed the same way
  *-det            the "det" row of a shape: the provider under
                   torch.use_deterministic_algorithms(True) (warn_only=False: SDPA's
                   flash and efficient backward then take their deterministic path,
                   torch refuses cuDNN SDPA). tilec-det is the tilec row itself
                   (tilec's backward is always deterministic: dQ in its own kernel,
                   no atomics), not timed again. flex-det is opt-in.
  tilec-atomic     opt-in, the "atomic" row: tilec's backward with dQ added by f32
                   atomics in the dK/dV pass (attention_bwd(..., deterministic=False))

Shapes: bf16 and fp16, D 64 and 128, seqlen 1k-16k with batch = 16384 / seqlen
and heads = 2048 / D, causal and not. TFLOP/s = 2.5 x the forward's FLOPs
(4 * B * H * S^2 * D, halved for causal) / latency. Timing as attention_fwd.py
(fwd_measure.time_ms: input copies past L2 in turn, 200 ms warm-up, median of
CUDA-event pairs).

Parity rule: each provider's dq, dk and dv against the fp32 reference backward
(explicit formula, chunked over B*H; the inputs' first copy), rel-L2 =
||g - ref||_2 / ||ref||_2 per gradient; a row PASSes when all three are
<= 2e-2 (bf16 and fp16 alike). Each row also says whether two calls on the same
inputs gave bitwise equal gradients (repeat_equal). The exit status is 1 when
any row FAILs or a tilec row is an error; an SDPA backend refusing a shape
(unsupported) or Flex that cannot compile (unavailable) is a row, not a stop.

torch is imported lazily: --help and --dry-run work without it.
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fwd_config import DTYPES, ROOT, finish_shape_args, shape_key, shapes  # noqa: E402
from fwd_measure import fmt, make_inputs  # noqa: E402
from fwd_providers import Unavailable, root_cause, short_reason  # noqa: E402
from bwd_providers import (EXTRA_PROVIDERS, PROVIDERS, SDPA, base_name, deterministic,  # noqa: E402
                           is_det, mode_of, setup, tilec_env, tilec_library)
from bwd_measure import (RTOL, bwd_flops, measure, print_row, print_rows_header,  # noqa: E402
                         print_table, reference_bwd, summarize, write_outputs)

SEQLENS = [1024, 2048, 4096, 8192, 16384]
HEAD_DIMS = [64, 96, 128, 256]  # tilec's backward head dims


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", nargs="+", choices=list(DTYPES), help="default: bf16 fp16")
    p.add_argument("--head-dim", nargs="+", type=int, choices=HEAD_DIMS, default=[64, 128])
    p.add_argument("--seqlen", nargs="+", type=int, help=f"default: {SEQLENS}")
    p.add_argument("--causal", choices=["0", "1", "both"], default="both")
    p.add_argument("--providers", nargs="+", choices=PROVIDERS + EXTRA_PROVIDERS, default=PROVIDERS,
                   help="default: %(default)s")
    p.add_argument("--tilec-lib", metavar="PATH",
                   help="libtilec_c.so for python/tilec (sets TILEC_LIB; default: $TILEC_LIB, "
                   "else the package's search, python/README.md)")
    p.add_argument("--quick", action="store_true", help="bf16, seqlens 1k and 4k, fewer runs")
    p.add_argument("--min-runs", type=int, default=30)
    p.add_argument("--min-ms", type=float, default=300.0, help="time at least this long per measurement")
    p.add_argument("--warmup-ms", type=float, default=200.0,
                   help="untimed calls for this long right before each measurement's timed ones "
                   "(default 200, as attention_fwd.py; 0: none)")
    p.add_argument("--out", default=str(ROOT / "bench" / "results-bwd"),
                   help="folder for results.json and results.csv")
    p.add_argument("--dry-run", action="store_true", help="print the plan; no torch or GPU")
    a = p.parse_args(argv)
    if a.warmup_ms < 0:
        p.error(f"--warmup-ms wants a time >= 0, got {a.warmup_ms}")
    return finish_shape_args(a, SEQLENS)


def failure(p, e):
    """(status, error) of a provider that raised e."""
    msg = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
    if isinstance(e, Unavailable) or base_name(p) == "flex":  # no Flex, or it failed to compile/run
        return "unavailable: " + short_reason(e if isinstance(e, Unavailable) else root_cause(e)), msg
    if base_name(p) in SDPA and "No available kernel" in str(e):
        return "unsupported", msg
    return "error", msg


def run_provider(p, s, inputs, dos, ref, a):
    """One row: provider p on shape s (its own forward state, made and freed here)."""
    import torch
    row = {"provider": p, "mode": mode_of(p)}
    sets = None
    try:
        with deterministic(is_det(p)):
            fn, sets = setup(p, s, inputs, dos)
            row.update(measure(fn, sets, ref, s, a))
    except Exception as e:  # an SDPA backend refusing the shape, flex failing to compile, ...
        row["status"], row["error"] = failure(p, e)
        if p == "sdpa-cudnn-det" and row["status"] == "unsupported":
            row["note"] = "torch refuses cuDNN SDPA under use_deterministic_algorithms"
    finally:
        del sets
        torch.cuda.empty_cache()
    return row


COPIED = ("tflops", "ms", "runs", "peak_mib", "rel_l2_dq", "rel_l2_dk", "rel_l2_dv", "max_abs",
          "repeat_equal", "status", "error")


def main(argv=None):
    a = parse_args(argv)
    # Line by line even into a file: a run cut off by a time limit keeps its rows.
    sys.stdout.reconfigure(line_buffering=True)
    shape_list = list(shapes(a))
    need_tilec = any(base_name(p) == "tilec" for p in a.providers)
    env = tilec_env(a.tilec_lib) if need_tilec else {}

    if a.dry_run:
        print(f"dry run: {len(shape_list)} shapes x {a.providers}")
        print(f"  min-runs {a.min_runs}, min-ms {a.min_ms:g}, warm-up {a.warmup_ms:g} ms; "
              f"parity: rel-L2 of dq, dk, dv <= {RTOL:g}")
        for s in shape_list:
            print(f"  {shape_key(s):28s} B={s['B']:<3d} H={s['H']:<3d} "
                  f"{bwd_flops(s) / 1e12:7.2f} TFLOP (backward)")
        if need_tilec:
            path, info = tilec_library()
            print(f"tilec: TILEC_LIB={env['TILEC_LIB'] or '(unset)'}; library "
                  + (f"{path} (tilec {info})" if path else f"not loaded here: {info}"))
            print(f"tilec: kernels from {env['kernels']}")
        return 0

    import torch
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA device (use --dry-run on a machine without a GPU)")
    if any(is_det(p) for p in a.providers):  # cuBLAS under deterministic mode (nothing timed uses it)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is true fp32
    torch.set_float32_matmul_precision("highest")
    props = torch.cuda.get_device_properties(0)
    cap = torch.cuda.get_device_capability()
    meta = {"device": torch.cuda.get_device_name(), "capability": list(cap),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "argv": sys.argv[1:], "min_runs": a.min_runs, "min_ms": a.min_ms,
            "warmup_ms": a.warmup_ms, "rtol": RTOL, "bwd_flops": "2.5 x forward",
            "l2_mib": getattr(props, "L2_cache_size", 50 << 20) / 2**20}
    if need_tilec:
        path, info = tilec_library()
        meta.update(tilec_lib=path, tilec_version=info if path else None, tilec_kernels=env["kernels"])
        print(f"tilec: {path} (tilec {info})" if path else f"tilec: library not loaded: {info}")
    print(f"device: {meta['device']} (sm_{cap[0]}{cap[1]}, L2 {meta['l2_mib']:.0f} MiB)  "
          f"torch {meta['torch']} (CUDA {meta['cuda']}, cuDNN {meta['cudnn']})")

    rows = []
    print_rows_header()
    for s in shape_list:
        inputs = make_inputs(s, meta["l2_mib"] * 2**20)
        g = torch.Generator(device="cuda").manual_seed(s["S"] * 1000 + s["D"] + 7)
        dos = [torch.randn(q.shape, device="cuda", dtype=q.dtype, generator=g) for q, _, _ in inputs]
        ref = reference_bwd(*inputs[0], dos[0], s["causal"])
        base = {k: int(s[k]) if k == "causal" else s[k] for k in ("dtype", "D", "causal", "S", "B", "H")}
        timed = {}
        for p in a.providers:
            if p == "tilec-det" and "tilec" in timed:  # the same kernels: not timed again
                row = {"provider": p, "mode": "det", "note": "always deterministic: the tilec row"}
                row.update({k: timed["tilec"][k] for k in COPIED if k in timed["tilec"]})
            else:
                row = run_provider(p, s, inputs, dos, ref, a)
            row = dict(base, **row)
            timed[p] = row
            rows.append(row)
            print_row(row)
        del inputs, dos, ref
        torch.cuda.empty_cache()

    lines = summarize(rows)
    print()
    print_table(lines)
    out = Path(a.out)
    write_outputs(out, meta, rows, lines)
    print(f"\nwrote {out}/results.json, results.csv")
    bad = [r for r in rows if r["status"] == "FAIL" or (base_name(r["provider"]) == "tilec"
                                                         and r["status"] == "error")]
    for r in bad:
        print(f"{r['status']}: {shape_key(r)} {r['provider']} "
              + " ".join(f"{k} {fmt(r.get(k))}" for k in ("rel_l2_dq", "rel_l2_dk", "rel_l2_dv"))
              + (f" {r['error']}" if r.get("error") else ""), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
