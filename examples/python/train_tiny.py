#!/usr/bin/env python3
"""Train a tiny language model with tilec.attention under torch.compile, and the
same model on PyTorch SDPA from the same seed; their losses must agree.

    PYTHONPATH=python python3 examples/python/train_tiny.py [--steps 100] [--dtype float32]

The model: token embedding + learned positions -> 2 pre-norm blocks (causal
self-attention, MLP) -> LM head, cross-entropy on the next token. The data is
synthetic: each sequence counts from a random token in steps of a random
stride (1 to 8, modulo the vocabulary), so the next token follows from the
last two, which attention has to find. Both runs see the same batches and start from the same
weights; only the attention call differs. Prints both loss curves at a few
steps and asserts |loss_tilec - loss_sdpa| <= 1e-2 at the end (and that the
loss went down). Exit 77 without torch or a GPU.
"""
import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"skipped: no GPU/torch ({e})")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no GPU/torch (torch.cuda.is_available() is False)")
    sys.exit(77)

import tilec  # noqa: E402


class Block(nn.Module):
    def __init__(self, dim, heads, attend):
        super().__init__()
        self.heads, self.attend = heads, attend
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        B, S, C = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, S, 3, self.heads, C // self.heads).unbind(2)
        o = self.attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))  # [B, H, S, D]
        x = x + self.proj(o.transpose(1, 2).reshape(B, S, C))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, heads, layers, seqlen, attend):
        super().__init__()
        self.embed, self.pos = nn.Embedding(vocab, dim), nn.Parameter(torch.zeros(seqlen, dim))
        self.blocks = nn.ModuleList(Block(dim, heads, attend) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def tilec_attention(q, k, v):
    return tilec.attention(q, k, v, causal=True)


def sdpa_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def batches(args):
    g = torch.Generator(device="cuda").manual_seed(args.seed + 1)
    pos = torch.arange(args.seqlen, device="cuda")
    for _ in range(args.steps):
        start = torch.randint(0, args.vocab, (args.batch, 1), device="cuda", generator=g)
        stride = torch.randint(1, 9, (args.batch, 1), device="cuda", generator=g)
        yield (start + stride * pos) % args.vocab


def train(args, attend, name):
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    model = TinyLM(args.vocab, args.dim, args.heads, 2, args.seqlen, attend).cuda().to(dtype)
    step_fn = torch.compile(model) if not args.eager else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    losses = []
    for tokens in batches(args):
        logits = step_fn(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, args.vocab), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    marks = [0, len(losses) // 4, len(losses) // 2, 3 * len(losses) // 4, len(losses) - 1]
    print(f"{name:6} loss " + "  ".join(f"step {i + 1}: {losses[i]:.4f}" for i in marks))
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seqlen", type=int, default=201, help="tokens per sequence (S = seqlen - 1)")
    p.add_argument("--vocab", type=int, default=128)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--heads", type=int, default=4, help="head dim = dim / heads (64 or 128)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=1e-2)
    p.add_argument("--eager", action="store_true", help="no torch.compile")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.dtype}, "
          f"{'eager' if args.eager else 'torch.compile'}, {args.steps} steps, "
          f"B={args.batch} S={args.seqlen - 1} H={args.heads} D={args.dim // args.heads}")
    ours = train(args, tilec_attention, "tilec")
    theirs = train(args, sdpa_attention, "sdpa")
    diff = abs(ours[-1] - theirs[-1])
    print(f"final loss: tilec {ours[-1]:.5f}, sdpa {theirs[-1]:.5f}, |diff| {diff:.2e} "
          f"(limit {args.tolerance:g}); start {ours[0]:.4f} (ln vocab {math.log(args.vocab):.4f})")
    ok = diff <= args.tolerance and ours[-1] < 0.9 * ours[0]
    print("PASS" if ok else "FAIL: " + ("losses differ" if diff > args.tolerance
                                        else "the loss did not go down"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
