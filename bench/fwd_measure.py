"""Timing, parity and output of attention_fwd.py: the fp32 reference, the
event-timed loop, input rotation past L2, the table, CSV/JSON and the plot."""
import csv
import json
import math
import statistics
import sys
import time
from fwd_config import RTOL, format_table, shape_key, tflops

# ------------------------------------------------------------ measuring ----
def reference(q, k, v, causal, budget=1 << 30):
    """fp32 softmax(Q K^T scale) V and natural-log LSE, chunked over B*H."""
    import torch
    B, H, S, D = q.shape
    qf, kf, vf = (t.reshape(B * H, S, D) for t in (q, k, v))
    out = torch.empty(B * H, S, D, device=q.device, dtype=torch.float32)
    lse = torch.empty(B * H, S, device=q.device, dtype=torch.float32)
    step = max(1, budget // (S * S * 4 * 2))
    mask = torch.ones(S, S, device=q.device, dtype=torch.bool).triu(1) if causal else None
    for i in range(0, B * H, step):
        sl = slice(i, i + step)
        sc = torch.bmm(qf[sl].float(), kf[sl].float().transpose(1, 2)) * D ** -0.5
        if causal:
            sc.masked_fill_(mask, float("-inf"))
        lse[sl] = torch.logsumexp(sc, dim=-1)
        out[sl] = torch.bmm(torch.softmax(sc, dim=-1), vf[sl].float())
        del sc
    return out.view(B, H, S, D), lse.view(B, H, S)


def parity(o, lse, ref, ref_lse):
    d = o.float() - ref
    r = {"rel_l2": (d.norm() / ref.norm()).item(), "max_abs": d.abs().max().item()}
    if lse is not None:
        r["lse_max_abs"] = (lse - ref_lse).abs().max().item()
    return r


def time_ms(fn, inputs, min_runs, min_ms, warmup_ms=0.0):
    """Median latency (ms) with CUDA events, rotating over the input copies;
    the timed calls follow `warmup_ms` of untimed ones, back to back."""
    import torch
    for i in range(3):  # warm-up and a first estimate
        fn(*inputs[i % len(inputs)])
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(5):
        fn(*inputs[i % len(inputs)])
    enqueue_ms = (time.perf_counter() - t0) * 1e3 / 5  # host time per call
    torch.cuda.synchronize()
    est = (time.perf_counter() - t0) * 1e3 / 5
    n = max(min_runs, math.ceil(min_ms / max(est, 1e-3)))
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(n)]
    # The events time the GPU: a timestamp is taken when the GPU reaches the
    # event in the stream. fn's host work between a.record() and its launch
    # (torch.empty for the outputs; for tilec, packing the arguments and
    # encoding the tensor maps; tens of microseconds) is outside a..b only
    # while the host enqueues ahead of the GPU, so that a is reached when the
    # previous kernel finishes and the kernel is already queued behind it.
    # A sleep kernel queued first holds the GPU while the host enqueues
    # (twice the estimated enqueue time of the n calls, at ~2 GHz), so that a
    # host as slow as the GPU, or slowed down for a moment, does not add its
    # time to the GPU's. The gaps between consecutive pairs, measured on the
    # GPU, say whether that held.
    #
    # Warm-up: the H100 runs these kernels at its power limit, where its
    # clock follows the power drawn over the last tens of ms. Right after
    # the spin kernel (or another provider) a kernel starts at a clock set
    # for a different load: the first ~50 ms of a run measured 5-13 %
    # faster than its steady rate (docs/performance.md). So
    # `warmup_ms` of untimed calls run between the spin kernel and the
    # timed ones, enqueued with them: each provider is timed at the clock
    # its own load settles at.
    w = math.ceil(warmup_ms / max(est, 1e-3)) if warmup_ms > 0 else 0
    sleep_ms = min(2.0 * (n + w) * max(enqueue_ms, 0.02), 1000.0)
    if hasattr(torch.cuda, "_sleep"):  # PyTorch's spin kernel (its tests use it)
        torch.cuda._sleep(int(sleep_ms * 2e6))
    for i in range(w):
        fn(*inputs[i % len(inputs)])
    for i, (a, b) in enumerate(ev):
        a.record()
        fn(*inputs[i % len(inputs)])
        b.record()
    torch.cuda.synchronize()
    ms = statistics.median(a.elapsed_time(b) for a, b in ev)
    gap = max((ev[i - 1][1].elapsed_time(ev[i][0]) for i in range(1, n)), default=0.0)
    if gap > max(0.02, 0.05 * ms):  # back-to-back kernels leave a few us
        print(f"  warning: the GPU waited up to {gap:.3f} ms for the host between calls "
              f"({ms:.3f} ms/call): the latency may include host time", file=sys.stderr)
    return ms, n


def measure(fn, inputs, ref, s, min_runs, min_ms, warmup_ms=0.0):
    """One provider on one shape: peak memory + parity of one call, then timing."""
    import torch
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    o, lse = fn(*inputs[0])
    torch.cuda.synchronize()
    row = {"peak_mib": (torch.cuda.max_memory_allocated() - base) / 2**20}
    row.update(parity(o, lse, *ref))
    del o, lse
    row["ms"], row["runs"] = time_ms(fn, inputs, min_runs, min_ms, warmup_ms)
    row["tflops"] = tflops(s, row["ms"])
    row["status"] = "PASS" if row["rel_l2"] <= RTOL else "FAIL"
    return row


def interleaved_rounds(a, s, inputs, shape_rows):
    """--rounds N: N - 1 more timings of each passing (row, runner) of a shape,
    the providers in turn, so that clock drift hits them alike; each row keeps
    the median over its N timings (and `rounds`, the N timings in ms)."""
    timed = [(r, fn, [r["ms"]]) for r, fn in shape_rows if r.get("status") == "PASS"]
    for _ in range(a.rounds - 1):
        for r, fn, ts in timed:
            ts.append(time_ms(fn, inputs, a.min_runs, a.min_ms, a.warmup_ms)[0])
    for r, fn, ts in timed:
        r["ms"] = statistics.median(ts)
        r["tflops"] = tflops(s, r["ms"])
        r["rounds"] = ts
        print(f"  rounds {shape_key(s)} {r['provider']}: {fmt(r['tflops'])} TFLOP/s "
              f"(median of {len(ts)}, spread {100 * (max(ts) - min(ts)) / r['ms']:.0f}%)", flush=True)


def make_inputs(s, l2_bytes):
    import torch
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[s["dtype"]]
    shape = (s["B"], s["H"], s["S"], s["D"])
    per_set = 3 * math.prod(shape) * 2
    copies = max(2, math.ceil(2 * l2_bytes / per_set))  # together > 2x L2
    g = torch.Generator(device="cuda").manual_seed(s["S"] * 1000 + s["D"])
    return [tuple(torch.randn(shape, device="cuda", dtype=dt, generator=g) for _ in range(3))
            for _ in range(copies)]


# -------------------------------------------------------------- output ----
COLS = ["dtype", "D", "causal", "S", "B", "H", "provider", "config", "tflops", "ms",
        "peak_mib", "rel_l2", "max_abs", "lse_max_abs", "status"]


def fmt(v):
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 0.01 and v != 0 else f"{v:.2f}"
    return "" if v is None else str(v)


def print_table(rows):
    table = [COLS] + [[fmt(r.get(c)) for c in COLS] for r in rows]
    w = [max(len(t[i]) for t in table) for i in range(len(COLS))]
    for t in table:
        print("  ".join(x.rjust(w[i]) for i, x in enumerate(t)))


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = sorted({(r["dtype"], r["D"], r["causal"]) for r in rows})
    ncol = min(4, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.5 * ncol, 3.6 * nrow), squeeze=False)
    for ax, (dt, D, c) in zip(axes.flat, panels):
        for p in sorted({r["provider"] for r in rows}):
            pts = sorted((r["S"], r["tflops"]) for r in rows if (r["dtype"], r["D"], r["causal"], r["provider"]) == (dt, D, c, p) and r.get("tflops"))
            if pts:
                ax.plot(*zip(*pts), marker="o", label=p)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{dt}, head dim {D}, {'causal' if c else 'non-causal'}")
        ax.set_xlabel("seqlen")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_outputs(out, meta, compile_rows, rows, tuned):
    """results.json, results.csv, the plot and, after --tune, the config
    table `tuned` as flash_fwd.ARCH.json."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"meta": meta, "compile": compile_rows, "results": rows, "tuned": tuned or {}}, indent=1))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS + ["runs", "error"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    if tuned:
        (out / f"flash_fwd.{tuned['arch']}.json").write_text(format_table(tuned))
    plot([r for r in rows if r.get("tflops")], out / "attention_fwd.png")


