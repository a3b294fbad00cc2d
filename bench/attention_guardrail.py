#!/usr/bin/env python3
"""What the NaN/inf guardrail costs: tilec's forward through the C API
(python/tilec/capi.py) with and without TILEC_FLAG_GUARDRAIL, on the same
inputs, in one process.

A guarded run() launches the forward, then nonfinite_count.tile over O (two
passes), and waits for the stream to read the count (docs/using.md): it
synchronises the host. So both providers are timed the same way, as host
wall time per call with a stream synchronisation after each (the plain
call's own GPU time, event-timed back to back, is printed beside them):

    overhead = guarded / (plain + synchronize) - 1

Each provider runs `--warmup-ms` of untimed calls first (the H100 runs at
its power limit: its clock settles on the load of the last tens of ms), and
the two alternate over `--rounds`; the median per call is reported.

    python3 bench/attention_guardrail.py --tilec-lib <bundle>/lib/libtilec_c.so.1
    python3 bench/attention_guardrail.py --self-test     # no GPU: the summary
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def overhead(guarded_ms, plain_ms):
    """Relative cost of the guarded call over the plain one (0.02: 2 %)."""
    return guarded_ms / plain_ms - 1.0


def summary(rows, goal):
    """One line: the worst overhead and whether it is within `goal`."""
    worst = max(rows, key=lambda r: r["overhead"])
    ok = worst["overhead"] <= goal
    return (f"worst overhead {worst['overhead'] * 100:.1f} % at {worst['shape']} "
            f"({'within' if ok else 'over'} {goal * 100:.0f} %)")


def self_test():
    assert abs(overhead(1.02, 1.0) - 0.02) < 1e-12
    rows = [{"shape": "a", "overhead": 0.01}, {"shape": "b", "overhead": 0.025}]
    assert summary(rows, 0.03) == "worst overhead 2.5 % at b (within 3 %)", summary(rows, 0.03)
    assert summary(rows, 0.02).endswith("(over 2 %)")
    print("self-test: ok")


def wall_ms(fn, warmup_ms, min_ms):
    """Median host wall time of fn() (which returns after the stream is
    idle), after warmup_ms of untimed calls."""
    t_end = time.perf_counter() + warmup_ms / 1e3
    while time.perf_counter() < t_end:
        fn()
    times, t0 = [], time.perf_counter()
    while len(times) < 10 or (time.perf_counter() - t0) * 1e3 < min_ms:
        a = time.perf_counter()
        fn()
        times.append((time.perf_counter() - a) * 1e3)
    return statistics.median(times)


def gpu_ms(torch, fn, n=20):
    """Median event time of fn() back to back (no synchronisation)."""
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(n)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


def run(args):
    import torch
    if args.tilec_lib:
        os.environ["TILEC_LIB"] = str(Path(args.tilec_lib).resolve())
        up = Path(args.tilec_lib).resolve().parent.parent
        if (up / "examples" / "attention" / "nonfinite_count.tile").is_file():
            os.environ.setdefault("TILEC_SOURCE_DIR", str(up))
    os.environ.setdefault("TILEC_SOURCE_DIR", str(ROOT))
    sys.path.insert(0, str(ROOT / "python"))
    from tilec import capi
    dt = {"bf16": (torch.bfloat16, capi.BF16), "fp16": (torch.float16, capi.F16)}[args.dtype]
    print(f"{torch.cuda.get_device_name()}; tilec {capi.version()}; {args.dtype}, "
          f"{args.tokens} tokens per shape, guardrail on O")
    print(f"{'D':>4} {'causal':>6} {'S':>6} {'B':>3} {'H':>3} {'gpu ms':>8} "
          f"{'plain+sync ms':>13} {'guarded ms':>10} {'overhead':>8}")
    rows = []
    for D in args.head_dim:
        for S in args.seqlen:
            for causal in ([0, 1] if args.causal == "both" else [int(args.causal)]):
                B, H = max(1, args.tokens // S), 2048 // D
                q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dt[0]) for _ in range(3))
                o = torch.empty_like(q)
                lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                stream = torch.cuda.current_stream().cuda_stream
                plans = {}
                for name, flags in (("plain", 0), ("guarded", capi.FLAG_GUARDRAIL)):
                    plans[name] = capi.ForwardPlan(capi.Desc(
                        batch=B, heads=H, seqlen=S, head_dim=D, dtype=dt[1], causal=causal,
                        scale=D ** -0.5, flags=flags))

                def call(name):
                    plans[name].run(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                                    lse.data_ptr(), stream)

                def plain_sync():
                    call("plain")
                    torch.cuda.synchronize()

                t = {"plain": [], "guarded": []}
                for _ in range(args.rounds):
                    t["plain"].append(wall_ms(plain_sync, args.warmup_ms, args.min_ms))
                    t["guarded"].append(wall_ms(lambda: call("guarded"), args.warmup_ms,
                                                args.min_ms))
                g = gpu_ms(torch, lambda: call("plain"))
                p, gd = statistics.median(t["plain"]), statistics.median(t["guarded"])
                r = {"shape": f"D={D} causal={causal} S={S}", "overhead": overhead(gd, p)}
                rows.append(r)
                print(f"{D:>4} {causal:>6} {S:>6} {B:>3} {H:>3} {g:>8.3f} {p:>13.3f} "
                      f"{gd:>10.3f} {r['overhead'] * 100:>7.1f}%")
                del plans, q, k, v, o, lse
    print(summary(rows, args.goal))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilec-lib", help="libtilec_c.so.1 (default: as python/tilec finds it)")
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    ap.add_argument("--head-dim", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--seqlen", type=int, nargs="+", default=[16384])
    ap.add_argument("--causal", choices=["0", "1", "both"], default="both")
    ap.add_argument("--tokens", type=int, default=16384, help="B·S per shape")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup-ms", type=float, default=200.0)
    ap.add_argument("--min-ms", type=float, default=100.0)
    ap.add_argument("--goal", type=float, default=0.03, help="overhead to stay within")
    ap.add_argument("--self-test", action="store_true", help="check the summary; no GPU")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    run(args)


if __name__ == "__main__":
    main()
