"""Measuring and output of attention_bwd.py: the fp32 reference backward,
parity of dq/dk/dv, one provider's measurement (timing through fwd_measure's
time_ms), the side-by-side table, results.json and results.csv."""
import csv
import json

from bwd_providers import base_name
from fwd_config import flops
from fwd_measure import fmt, time_ms

BWD_FACTOR = 2.5  # backward FLOPs = 2.5 x the forward's (5 matmuls of its 2)
RTOL = 2e-2  # rel-L2 bound of each of dq, dk, dv (16-bit) against the fp32 reference
GRADS = ("dq", "dk", "dv")


def bwd_flops(s):
    """2.5 x the forward's 4 * B * H * S^2 * D (halved for causal)."""
    return BWD_FACTOR * flops(s)


def reference_bwd(q, k, v, do, causal, budget=4 << 30):
    """fp32 dq, dk, dv of softmax(Q K^T scale) V, chunked over B*H (at most
    three S x S fp32 matrices per head alive): P = softmax(S), O = P V,
    dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)),
    dQ = dS K scale, dK = dS^T Q scale."""
    import torch
    B, H, S, D = q.shape
    scale = D ** -0.5
    qf, kf, vf, dof = (t.reshape(B * H, S, D) for t in (q, k, v, do))
    out = [torch.empty(B * H, S, D, device=q.device, dtype=torch.float32) for _ in range(3)]
    step = max(1, budget // (S * S * 4 * 3))
    mask = torch.ones(S, S, device=q.device, dtype=torch.bool).triu(1) if causal else None
    for i in range(0, B * H, step):
        sl = slice(i, i + step)
        Q, K, V, dO = (t[sl].float() for t in (qf, kf, vf, dof))
        sc = torch.bmm(Q, K.transpose(1, 2)).mul_(scale)
        if causal:
            sc.masked_fill_(mask, float("-inf"))
        P = torch.softmax(sc, dim=-1)
        del sc
        delta = (dO * torch.bmm(P, V)).sum(-1, keepdim=True)
        out[2][sl] = torch.bmm(P.transpose(1, 2), dO)
        dS = torch.bmm(dO, V.transpose(1, 2)).sub_(delta).mul_(P)
        del P
        out[0][sl] = torch.bmm(dS, K).mul_(scale)
        out[1][sl] = torch.bmm(dS.transpose(1, 2), Q).mul_(scale)
        del dS
    return tuple(t.view(B, H, S, D) for t in out)


def parity(grads, ref):
    """rel-L2 of each gradient and the largest |difference| of the three."""
    r, worst = {}, 0.0
    for name, g, gr in zip(GRADS, grads, ref):
        d = g.float() - gr
        r["rel_l2_" + name] = (d.norm() / gr.norm()).item()
        worst = max(worst, d.abs().max().item())
    r["max_abs"] = worst
    return r


def measure(fn, sets, ref, s, a):
    """One provider on one shape: the first call (peak memory, parity), a
    second on the same inputs (bitwise equal to the first?), then the timing."""
    import torch
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    g1 = fn(*sets[0])
    torch.cuda.synchronize()
    row = {"peak_mib": (torch.cuda.max_memory_allocated() - base) / 2**20}
    row.update(parity(g1, ref))
    g2 = fn(*sets[0])
    row["repeat_equal"] = all(torch.equal(x, y) for x, y in zip(g1, g2))
    del g1, g2
    row["ms"], row["runs"] = time_ms(fn, sets, a.min_runs, a.min_ms, a.warmup_ms)
    row["tflops"] = bwd_flops(s) / (row["ms"] * 1e-3) / 1e12
    row["status"] = "PASS" if max(row["rel_l2_" + g] for g in GRADS) <= RTOL else "FAIL"
    return row


# -------------------------------------------------------------- output ----
COLS = ["dtype", "D", "causal", "S", "B", "H", "provider", "mode", "tflops", "ms", "peak_mib",
        "rel_l2_dq", "rel_l2_dk", "rel_l2_dv", "max_abs", "repeat_equal", "status"]
# The side-by-side table: TFLOP/s per provider (det row: the -det providers).
SIDE = [("tilec", "tilec"), ("flash", "sdpa-flash"), ("cuDNN", "sdpa-cudnn"),
        ("efficient", "sdpa-efficient"), ("Flex", "flex")]
RATIOS = [("x cuDNN", "sdpa-cudnn"), ("x flash", "sdpa-flash"), ("x Flex", "flex")]
TABLE_COLS = (["dtype", "D", "causal", "S", "mode"] + [c for c, _ in SIDE] + [c for c, _ in RATIOS]
              + ["tilec rel-L2", "parity"])


def cell(r):
    """A provider's TFLOP/s in the table, or what kept it from one."""
    if r is None:
        return ""
    if r.get("tflops") is not None:
        return f"{r['tflops']:.0f}" + ("" if r["status"] == "PASS" else "!")
    st = r.get("status", "")
    return "n/a" if st == "unsupported" or st.startswith("unavailable") else "err"


def summarize(rows):
    """One line per (shape, mode): TFLOP/s per provider, tilec's speedup over
    cuDNN, flash and Flex (both rows PASS), tilec's worst rel-L2 and the parity
    verdict (FAIL: the providers over the bound)."""
    groups = {}
    for r in rows:
        key = tuple(r[k] for k in ("dtype", "D", "causal", "S", "mode"))
        groups.setdefault(key, {})[base_name(r["provider"])] = r
    out = []
    for key, by in groups.items():
        line = dict(zip(["dtype", "D", "causal", "S", "mode"], key))
        line.update({c: cell(by.get(p)) for c, p in SIDE})
        t = by.get("tilec")
        for c, p in RATIOS:
            o = by.get(p)
            ok = t and o and t.get("status") == "PASS" and o.get("status") == "PASS"
            line[c] = f"{t['tflops'] / o['tflops']:.2f}" if ok else ""
        if t and t.get("rel_l2_dq") is not None:
            line["tilec rel-L2"] = f"{max(t['rel_l2_' + g] for g in GRADS):.1e}"
        bad = [p for p, r in by.items() if r.get("status") == "FAIL"]
        line["parity"] = "FAIL: " + ",".join(bad) if bad else "PASS"
        out.append(line)
    return out


def print_rows_header():
    print("  ".join(COLS))


def print_row(r):
    print("  ".join(fmt(r.get(c)) for c in COLS)
          + (f"  [{r['note']}]" if r.get("note") else "")
          + (f"  {r['error']}" if r.get("error") else ""), flush=True)


def print_table(lines):
    table = [TABLE_COLS] + [[str(x.get(c, "")) for c in TABLE_COLS] for x in lines]
    w = [max(len(t[i]) for t in table) for i in range(len(TABLE_COLS))]
    for t in table:
        print("  ".join(x.rjust(w[i]) for i, x in enumerate(t)))


def write_outputs(out, meta, rows, lines):
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"meta": meta, "results": rows, "table": lines}, indent=1))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS + ["runs", "note", "error"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
