#!/usr/bin/env python3
"""Train an fp32 attention layer whose logits sharpen past 88: a naive softmax
overflows to inf/NaN, tilec's fused forward and backward stay finite and their
gradients match an fp64 reference at every step.

    PYTHONPATH=python python3 examples/python/train_sharpen.py [--steps 50]

exp(x) overflows float32 for x > 88.72, so softmax written as
exp(s) / sum(exp(s)) turns into inf / inf = NaN as soon as one logit passes
that; the online softmax of a flash kernel subtracts the running row maximum
before exponentiating, in the forward and in the backward's recomputation of
P = exp(s - lse), and never overflows.

The task is associative recall: each head holds S (token, value) pairs;
query i names one of the tokens (a permutation of them) and must return its
value. Tokens are fixed unit vectors in clusters of near-duplicates (cosine
about 0.98 within a cluster), and a sequence holds several tokens of each
cluster: a query matches its key with q.k = 1 and its cluster's other
tokens with q.k ~ 0.98, so telling them apart takes logits in the hundreds.
The layer learns W_q, W_k and a log-temperature t (q = x_q W_q e^t,
k = x_k W_k, loss = MSE(o, value)): sharper attention lowers the loss until
the logits are that large, so e^t and with it the largest logit grow each
step, from 4 at step 1 past 88 by about step 25. The same model
from the same initial weights and batches is trained with the naive softmax
beside it.

Each step checks tilec's dQ, dK, dV against float64 autograd (stable softmax)
on the same q, k, v: max|g - g64| <= 3 x that of float32 eager autograd (stable
softmax) + 1e-5 x the largest |g64| of the three (once the attention is one-hot,
dQ and dK are ~1e-26 in fp64 and fp32 rounding of dP - delta is all either
implementation can give; the absolute term keeps that noise from counting). The run
passes when the naive model's loss went non-finite after the largest logit
passed 88, tilec's loss stayed finite at every step, every gradient check held,
and the loss went down. Exit 77 without torch or a GPU.
"""
import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

try:
    import torch
except ImportError as e:
    print(f"skipped: no GPU/torch ({e})")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no GPU/torch (torch.cuda.is_available() is False)")
    sys.exit(77)

import tilec  # noqa: E402

EXP_LIMIT = math.log(torch.finfo(torch.float32).max)  # 88.72


def naive_attention(q, k, v):
    """softmax(q k^T) v with softmax as exp(s) / sum(exp(s)): no max subtracted."""
    p = torch.exp(q @ k.transpose(-1, -2))
    return (p / p.sum(-1, keepdim=True)) @ v


def stable_attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


def tilec_attention(q, k, v):
    return tilec.attention(q, k, v, scale=1.0)


class Recall(torch.nn.Module):
    """q = x_q W_q e^t, k = x_k W_k (per head), o = attention(q, k, v)."""

    def __init__(self, heads, dim, log_scale):
        super().__init__()
        eye = torch.eye(dim).expand(heads, dim, dim)
        self.wq = torch.nn.Parameter(eye + 0.01 * torch.randn(heads, dim, dim))
        self.wk = torch.nn.Parameter(eye + 0.01 * torch.randn(heads, dim, dim))
        self.t = torch.nn.Parameter(torch.tensor(log_scale))

    def qk(self, xq, xk):
        return (xq @ self.wq) * self.t.exp(), xk @ self.wk


def batches(args, table, values):
    """(x_q, x_k, v, target) of [B, H, S, D]: S distinct tokens per head, the
    queries a permutation of them."""
    g = torch.Generator(device="cuda").manual_seed(args.seed + 1)
    B, H, S = args.batch, args.heads, args.seqlen
    heads = torch.arange(H, device="cuda").view(1, H, 1)
    for _ in range(args.steps):
        keys = torch.rand(B, H, args.vocab, device="cuda", generator=g).argsort(-1)[..., :S]
        perm = torch.rand(B, H, S, device="cuda", generator=g).argsort(-1)
        queries = keys.gather(-1, perm)
        yield table[heads, queries], table[heads, keys], values[heads, keys], values[heads, queries]


def grad_check(q, k, v, target):
    """tilec's max|g - g64| over its bound (3 x fp32 eager's + 1e-5 x the
    largest |g64|) for dq, dk, dv, with the loss's own upstream gradient:
    within the bound when <= 1."""
    def grads(attend, dtype):
        leaves = [t.detach().to(dtype).requires_grad_() for t in (q, k, v)]
        o = attend(*leaves)
        loss = (o - target.to(dtype)).square().mean()
        return torch.autograd.grad(loss, leaves)
    ref = grads(stable_attention, torch.float64)
    ours = grads(tilec_attention, torch.float32)
    eager = grads(stable_attention, torch.float32)
    scale = max(r.abs().max().item() for r in ref)
    ratios = []
    for g, e, r in zip(ours, eager, ref):
        err = (g.double() - r).abs().max().item()
        bound = 3 * (e.double() - r).abs().max().item() + 1e-5 * scale
        ratios.append(err / bound if bound > 0 else (0.0 if err == 0 else math.inf))
    return ratios


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--seqlen", type=int, default=300, help="pairs per head (S)")
    p.add_argument("--vocab", type=int, default=1024, help="tokens to draw from (>= S)")
    p.add_argument("--cluster", type=int, default=16, help="tokens per cluster (divides --vocab)")
    p.add_argument("--spread", type=float, default=0.15,
                   help="noise of a cluster's tokens around its centre, relative to it")
    p.add_argument("--head-dim", type=int, default=64, choices=[64, 128])
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's rate for W_q, W_k")
    p.add_argument("--lr-scale", type=float, default=0.15, help="Adam's rate for t")
    p.add_argument("--log-scale", type=float, default=math.log(4.0), help="t at step 1")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.vocab < args.seqlen or args.vocab % args.cluster:
        p.error(f"--vocab {args.vocab} must be at least --seqlen {args.seqlen} and a "
                f"multiple of --cluster {args.cluster}")
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, float32, "
          f"{args.steps} steps, B={args.batch} H={args.heads} S={args.seqlen} D={args.head_dim}")

    torch.manual_seed(args.seed)
    H, D = args.heads, args.head_dim
    # Clusters of `cluster` tokens, normalize(centre + spread * noise) with
    # centre and noise N(0, 1)^D: cosine 1 / (1 + spread^2) within a cluster.
    centres = torch.randn(H, args.vocab // args.cluster, 1, D)
    noise = args.spread * torch.randn(H, args.vocab // args.cluster, args.cluster, D)
    table = torch.nn.functional.normalize(centres + noise, dim=-1).reshape(H, args.vocab, D).cuda()
    values = torch.randn(H, args.vocab, D).cuda()
    init = Recall(H, D, args.log_scale).cuda()
    models = {"tilec": init, "naive": Recall(H, D, args.log_scale).cuda()}
    models["naive"].load_state_dict(init.state_dict())
    opts = {n: torch.optim.Adam([{"params": [m.wq, m.wk], "lr": args.lr},
                                 {"params": [m.t], "lr": args.lr_scale}])
            for n, m in models.items()}
    attend = {"tilec": tilec_attention, "naive": naive_attention}

    naive_nan_step, naive_max_logit = None, None
    losses, max_logit, checks_failed, worst = [], 0.0, 0, 0.0
    print(f"{'step':>4} {'max logit':>10} {'tilec loss':>11} {'naive loss':>11}   "
          f"tilec err / (3 x fp32 eager err + 1e-5 max|ref64|): dq dk dv")
    for step, (xq, xk, v, target) in enumerate(batches(args, table, values), 1):
        line = {}
        for name, model in models.items():
            if name == "naive" and naive_nan_step is not None:
                continue
            q, k = model.qk(xq, xk)
            loss = (attend[name](q, k, v) - target).square().mean()
            logit = (q.detach() @ k.detach().transpose(-1, -2)).max().item()
            if name == "tilec":
                ratios = grad_check(q, k, v, target)
                worst = max(worst, *ratios)
                checks_failed += sum(r > 1 for r in ratios)
                max_logit = max(max_logit, logit)
            line[name] = (loss.item(), logit, ratios if name == "tilec" else None)
            if not math.isfinite(loss.item()):
                if name == "naive":
                    naive_nan_step, naive_max_logit = step, logit
                continue
            opts[name].zero_grad(set_to_none=True)
            loss.backward()
            opts[name].step()
        t_loss, t_logit, ratios = line["tilec"]
        losses.append(t_loss)
        n_loss = f"{line['naive'][0]:11.5f}" if "naive" in line else f"{'(stopped)':>11}"
        print(f"{step:4} {t_logit:10.2f} {t_loss:11.5f} {n_loss}   "
              + " ".join(f"{r:5.3f}" for r in ratios))

    finite = all(math.isfinite(x) for x in losses)
    print(f"largest logit {max_logit:.1f} (exp overflows float32 past {EXP_LIMIT:.2f}); "
          f"tilec loss {losses[0]:.5f} -> {losses[-1]:.5f}, finite at every step: {finite}")
    if naive_nan_step is not None:
        print(f"naive softmax: loss non-finite at step {naive_nan_step} "
              f"(largest logit {naive_max_logit:.1f})")
    else:
        print("naive softmax: finite throughout")
    print(f"gradient checks: {3 * len(losses) - checks_failed}/{3 * len(losses)} within bound, "
          f"worst ratio {worst:.3f}")
    problems = []
    if max_logit <= EXP_LIMIT:
        problems.append(f"logits never passed {EXP_LIMIT:.2f} (raise --steps or --lr-scale)")
    if naive_nan_step is None:
        problems.append("the naive softmax never overflowed")
    if not finite:
        problems.append("tilec's loss went non-finite")
    if checks_failed:
        problems.append(f"{checks_failed} gradient checks out of bound")
    if not losses[-1] < losses[0]:
        problems.append("the loss did not go down")
    print("PASS" if not problems else "FAIL: " + "; ".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
