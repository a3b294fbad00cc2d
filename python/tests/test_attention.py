#!/usr/bin/env python3
"""tilec.attention in PyTorch on a GPU: parity, gradients, torch.compile, CUDA graphs.

    PYTHONPATH=python python3 python/tests/test_attention.py     # or via run-gpu.sh

Exits 77 ("skipped: no GPU/torch") where torch or a CUDA GPU is missing (ctest
and run-gpu.sh report it skipped). References are PyTorch SDPA in float64
(the math backend), with SDPA in the input dtype printed beside tilec:
 - forward: rel-L2 of O ≤ 2e-5 (f32) or 1e-2 (bf16, f16), odd seqlens, causal
   or not, head dims 64, 128 and 80 (80: the reference kernel);
 - gradients (also GQA/MQA; head dims 64, 96, 128): rel-L2 of dQ, dK, dV ≤ 1e-4 (f32) or 2e-2 (bf16)
   or 3x SDPA's in the same precision; forward-only variants refuse the
   backward with NotImplementedError; and in f32 a
   central finite difference of sum(O * W) along a random direction agrees
   with <grad, direction> within 5e-3 (gradcheck's test, in f32);
 - torch.compile(fullgraph=True) of a model calling tilec.attention matches
   eager within 1e-5 (forward and gradients, f32);
 - a CUDA graph capturing the forward, replayed on new inputs, is bitwise
   equal to an eager call on them; so is one capturing forward and backward;
 - the forward-only variants (GQA/MQA, cross-attention bottom-right, windows,
   softcap, ALiBi, sinks) against a float64 reference of docs/variants.md.
"""
import math
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"skipped: no GPU/torch ({e})")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no GPU/torch (torch.cuda.is_available() is False)")
    sys.exit(77)

import tilec  # noqa: E402

DEV = "cuda"
SEED = int(os.environ.get("TILEC_TEST_SEED", "1234"))
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def rel_l2(x, ref):
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def inputs(B, H, S, D, dtype, grad=False):
    return [torch.randn(B, H, S, D, device=DEV, dtype=dtype, requires_grad=grad) for _ in range(3)]


def sdpa(q, k, v, causal, dtype=None):
    if dtype is not None:
        q, k, v = (t.to(dtype) for t in (q, k, v))
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


class ForwardTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(SEED)

    def test_parity_with_sdpa(self):
        tols = {torch.bfloat16: 1e-2, torch.float16: 1e-2, torch.float32: 2e-5}
        shapes = [(2, 3, 203, 64), (1, 4, 129, 128), (2, 2, 1, 64), (1, 2, 1000, 128),
                  (2, 2, 77, 80)]
        for dtype, tol in tols.items():
            for B, H, S, D in shapes:
                for causal in (False, True):
                    with self.subTest(dtype=dtype, shape=(B, H, S, D), causal=causal):
                        q, k, v = inputs(B, H, S, D, dtype)
                        ref = sdpa(q, k, v, causal, torch.float64)
                        out = tilec.attention(q, k, v, causal=causal)
                        self.assertEqual(out.shape, q.shape)
                        self.assertEqual(out.dtype, dtype)
                        self.assertTrue(torch.isfinite(out).all().item())
                        err, base = rel_l2(out, ref), rel_l2(sdpa(q, k, v, causal), ref)
                        print(f"fwd {str(dtype):15} {B}x{H}x{S}x{D} causal={int(causal)}: "
                              f"tilec {err:.2e}  sdpa {base:.2e}")
                        self.assertLessEqual(err, tol)

    def test_scale_and_strided_inputs(self):
        # [B, S, H, D] storage seen as [B, H, S, D] (a transpose view).
        x = [torch.randn(2, 150, 4, 64, device=DEV, dtype=torch.bfloat16) for _ in range(3)]
        q, k, v = (t.transpose(1, 2) for t in x)
        out = tilec.attention(q, k, v, scale=0.3)
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), scale=0.3)
        self.assertLessEqual(rel_l2(out, ref), 1e-2)

    def test_bad_inputs_are_errors(self):
        q, k, v = inputs(1, 2, 16, 64, torch.float32)
        with self.assertRaises(ValueError):
            tilec.attention(q, k[:, :, :8], v)
        with self.assertRaises(ValueError):
            tilec.attention(q.double(), k.double(), v.double())
        # The backward needs as many keys as queries (no cross-attention).
        lse = torch.zeros(1, 2, 16, device=DEV)
        with self.assertRaises(ValueError):
            torch.ops.tilec.attention_bwd(q, q, k[:, :, :8], v[:, :, :8], q, lse, False, 0.125)
        # The backward's head dims are 64, 96, 128 and 256: a clear error for 80.
        q, k, v = inputs(1, 2, 16, 80, torch.float32, grad=True)
        with self.assertRaises(RuntimeError) as e:  # TilecError, maybe wrapped by autograd
            tilec.attention(q, k, v).sum().backward()
        self.assertIn("head dim 80 is not supported", str(e.exception))


def variant_reference(q, k, v, causal, scale, window=(-1, -1), bottom_right=False,
                      softcap=0.0, alibi=None, sinks=None):
    """docs/variants.md in float64: GQA by repeating K/V heads, then the
    softcap, the ALiBi bias, the window/causal bounds and the sink logit."""
    q, k, v = q.double(), k.double(), v.double()
    H, HKV, Sq, Sk = q.shape[1], k.shape[1], q.shape[2], k.shape[2]
    k, v = k.repeat_interleave(H // HKV, dim=1), v.repeat_interleave(H // HKV, dim=1)
    s = q @ k.transpose(-1, -2) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(Sq, device=q.device)[:, None]
    j = torch.arange(Sk, device=q.device)[None, :]
    if alibi is not None:
        s = s + alibi.double()[None, :, None, None] * (j - i)
    diag = Sk - Sq if bottom_right else 0
    left, right = window[0], 0 if causal else window[1]
    visible = torch.ones(Sq, Sk, dtype=torch.bool, device=q.device)
    if left >= 0:
        visible &= j >= i + diag - left
    if right >= 0:
        visible &= j <= i + diag + right
    s = s.masked_fill(~visible, -math.inf)
    if sinks is not None:  # one more logit per row, with no value
        sink = sinks.double()[None, :, None, None].expand(*s.shape[:3], 1)
        s = torch.cat([s, sink], dim=-1)
        v = torch.cat([v, v.new_zeros(*v.shape[:2], 1, v.shape[3])], dim=2)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # rows that see nothing: O = 0
    return p @ v


class VariantTest(unittest.TestCase):
    """The forward-only variants against variant_reference."""

    def setUp(self):
        torch.manual_seed(SEED)

    def check(self, dtype, B, H, HKV, S, SK, D, tol=1e-2, **kw):
        q = torch.randn(B, H, S, D, device=DEV, dtype=dtype)
        k, v = (torch.randn(B, HKV, SK, D, device=DEV, dtype=dtype) for _ in range(2))
        scale = 1.0 / math.sqrt(D)
        out = tilec.attention(q, k, v, scale=scale, **kw)
        ref = variant_reference(q, k, v, kw.get("causal", False), scale,
                                kw.get("window", (-1, -1)), kw.get("bottom_right", False),
                                kw.get("softcap", 0.0), kw.get("alibi_slopes"),
                                kw.get("sinks"))
        err = rel_l2(out, ref)
        print(f"variant {str(dtype):15} {B}x{H}/{HKV}x{S}/{SK}x{D} "
              f"{ {k: v for k, v in kw.items() if not torch.is_tensor(v)} }: {err:.2e}")
        self.assertTrue(torch.isfinite(out).all().item())
        self.assertLessEqual(err, tol)

    def test_gqa_window(self):
        self.check(torch.bfloat16, 2, 8, 2, 300, 300, 128, causal=True, window=(63, -1))

    def test_mqa_cross_attention_bottom_right(self):
        self.check(torch.float16, 2, 4, 1, 100, 333, 64, causal=True, bottom_right=True)

    def test_softcap_alibi_sinks(self):
        H = 4
        slopes = torch.tensor([2.0 ** (-8 * (h + 1) / H) for h in range(H)], device=DEV)
        sinks = torch.tensor([-1.0, 0.0, 1.0, 2.0], device=DEV)
        self.check(torch.bfloat16, 2, H, H, 257, 257, 64, softcap=30.0, alibi_slopes=slopes,
                   sinks=sinks)
        self.check(torch.float32, 1, H, 2, 77, 77, 64, tol=2e-5, window=(16, 8),
                   alibi_slopes=slopes)

    def test_no_keys(self):
        q = torch.randn(1, 2, 5, 64, device=DEV, dtype=torch.bfloat16)
        k = torch.randn(1, 2, 0, 64, device=DEV, dtype=torch.bfloat16)
        self.assertEqual(tilec.attention(q, k, k).abs().sum().item(), 0.0)
        o, lse = torch.ops.tilec.attention_variant_fwd(
            q, k, k, False, 0.125, False, -1, -1, 0.0, None,
            torch.tensor([0.5, -1.0], device=DEV))
        self.assertEqual(lse[0, 1, 3].item(), -1.0)

    def test_bad_variants_are_errors(self):
        q = torch.randn(1, 6, 16, 64, device=DEV)
        k = torch.randn(1, 4, 16, 64, device=DEV)
        with self.assertRaises(ValueError):  # 4 does not divide 6
            tilec.attention(q, k, k)
        with self.assertRaises(ValueError):
            tilec.attention(q, q, q, sinks=torch.zeros(5, device=DEV))


class BackwardTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(SEED)

    def grads(self, fn, q, k, v, do):
        q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
        out = fn(q, k, v)
        out.backward(do)
        return out, q.grad, k.grad, v.grad

    def test_gradients_against_sdpa(self):
        cases = [(torch.float32, 1e-4), (torch.bfloat16, 2e-2), (torch.float16, 2e-2)]
        for dtype, tol in cases:
            for B, H, S, D in [(2, 3, 203, 64), (1, 2, 130, 128), (1, 1, 1, 64),
                               (1, 2, 77, 96)]:
                for causal in (False, True):
                    with self.subTest(dtype=dtype, shape=(B, H, S, D), causal=causal):
                        q, k, v = inputs(B, H, S, D, dtype)
                        do = torch.randn_like(q)
                        _, *got = self.grads(lambda a, b, c: tilec.attention(a, b, c, causal=causal),
                                             q, k, v, do)
                        _, *ref = self.grads(lambda a, b, c: sdpa(a, b, c, causal),
                                             q.double(), k.double(), v.double(), do.double())
                        _, *same = self.grads(lambda a, b, c: sdpa(a, b, c, causal), q, k, v, do)
                        # Errors relative to the gradient's own norm, or to dV's where it
                        # is smaller: at S = 1 softmax is constant, dQ and dK are exactly
                        # 0 in fp64, and any rounding is infinitely far "relatively".
                        scale = ref[2].double().norm().item()
                        for name, g, r, s in zip("qkv", got, ref, same):
                            denom = max(r.double().norm().item(), scale, 1e-30)
                            err = (g.double() - r).norm().item() / denom
                            err_sdpa = (s.double() - r).norm().item() / denom
                            print(f"d{name} {str(dtype):15} {B}x{H}x{S}x{D} causal={int(causal)}: "
                                  f"tilec {err:.2e}  sdpa {err_sdpa:.2e}")
                            self.assertTrue(torch.isfinite(g).all().item())
                            # Within the tolerance, or 3x SDPA's error in the same precision.
                            self.assertLessEqual(err, max(tol, 3 * err_sdpa), f"d{name}")

    def test_gqa_gradients_against_sdpa(self):
        # K/V with fewer heads (GQA 4:1, MQA): dK, dV summed over each group's
        # query heads; the reference repeats K/V heads in float64.
        def expand(fn):
            def f(a, b, c):
                g = a.shape[1] // b.shape[1]
                return fn(a, b.repeat_interleave(g, dim=1), c.repeat_interleave(g, dim=1))
            return f

        for dtype, tol in [(torch.float32, 1e-4), (torch.bfloat16, 2e-2)]:
            for B, H, HKV, S, D in [(2, 8, 2, 203, 64), (1, 4, 1, 130, 128)]:
                for causal in (False, True):
                    with self.subTest(dtype=dtype, shape=(B, H, HKV, S, D), causal=causal):
                        q = torch.randn(B, H, S, D, device=DEV, dtype=dtype)
                        k, v = (torch.randn(B, HKV, S, D, device=DEV, dtype=dtype)
                                for _ in range(2))
                        do = torch.randn_like(q)
                        ref_fn = expand(lambda a, b, c: sdpa(a, b, c, causal))
                        _, *got = self.grads(lambda a, b, c: tilec.attention(a, b, c, causal=causal),
                                             q, k, v, do)
                        _, *ref = self.grads(ref_fn, q.double(), k.double(), v.double(),
                                             do.double())
                        _, *same = self.grads(ref_fn, q, k, v, do)
                        for name, g, r, s in zip("qkv", got, ref, same):
                            self.assertEqual(g.shape, r.shape, f"d{name}")
                            err, err_sdpa = rel_l2(g, r), rel_l2(s, r)
                            print(f"GQA d{name} {str(dtype):15} {B}x{H}/{HKV}x{S}x{D} "
                                  f"causal={int(causal)}: tilec {err:.2e}  sdpa {err_sdpa:.2e}")
                            self.assertLessEqual(err, max(tol, 3 * err_sdpa), f"d{name}")

    def test_atomic_dq_matches_the_deterministic_backward(self):
        # attention_bwd(..., deterministic=False): dQ by f32 atomics in the
        # dK/dV pass. dK, dV are the same kernels' (bitwise); dQ within the
        # bound of its reordered f32 sums; a second call (the accumulator
        # zeroed again by the cast) gives the same dQ within it.
        for dtype, tol in [(torch.float32, 1e-5), (torch.bfloat16, 1e-2)]:
            for B, H, S, D, causal in [(2, 3, 203, 64, True), (1, 2, 130, 128, False)]:
                with self.subTest(dtype=dtype, shape=(B, H, S, D), causal=causal):
                    q, k, v = inputs(B, H, S, D, dtype)
                    do = torch.randn_like(q)
                    o, lse = torch.ops.tilec.attention_fwd(q, k, v, causal, D ** -0.5)
                    det = torch.ops.tilec.attention_bwd(do, q, k, v, o, lse, causal, D ** -0.5)
                    for _ in range(2):
                        at = torch.ops.tilec.attention_bwd(do, q, k, v, o, lse, causal,
                                                           D ** -0.5, False)
                        self.assertLessEqual(rel_l2(at[0], det[0]), tol)
                        self.assertTrue(torch.equal(at[1], det[1]))
                        self.assertTrue(torch.equal(at[2], det[2]))

    def test_forward_only_variants_refuse_backward(self):
        q, k, v = inputs(1, 2, 40, 64, torch.float32, grad=True)
        out = tilec.attention(q, k, v, window=(8, 0))  # the forward runs
        self.assertTrue(torch.isfinite(out).all().item())
        with self.assertRaises(NotImplementedError) as e:
            out.sum().backward()
        self.assertIn("window", str(e.exception))

    def test_finite_difference_f32(self):
        B, H, S, D = 1, 2, 37, 64
        for causal in (False, True):
            q, k, v = inputs(B, H, S, D, torch.float32)
            w = torch.randn_like(q)
            f = lambda a, b, c: (tilec.attention(a, b, c, causal=causal).double() * w).sum()  # noqa: E731
            _, *g = self.grads(lambda a, b, c: tilec.attention(a, b, c, causal=causal), q, k, v, w)
            dirs = [torch.randn_like(q) for _ in range(3)]
            eps = 1e-3
            with torch.no_grad():
                plus = f(*(t + eps * d for t, d in zip((q, k, v), dirs)))
                minus = f(*(t - eps * d for t, d in zip((q, k, v), dirs)))
            numeric = ((plus - minus) / (2 * eps)).item()
            analytic = sum((gi.double() * d.double()).sum() for gi, d in zip(g, dirs)).item()
            print(f"finite difference causal={int(causal)}: numeric {numeric:.6f} "
                  f"analytic {analytic:.6f}")
            self.assertLessEqual(abs(numeric - analytic), 5e-3 * max(1.0, abs(analytic)))


class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x):
        B, S, C = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        o = tilec.attention(q, k, v, causal=True)
        return x + self.out(o.transpose(1, 2).reshape(B, S, C))


class CompileAndGraphTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(SEED)

    def test_torch_compile_matches_eager(self):
        model = Block(256, 4).to(DEV)
        x = torch.randn(2, 100, 256, device=DEV)
        eager = model(x)
        eager.square().sum().backward()
        eager_grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        compiled = torch.compile(model, fullgraph=True)
        out = compiled(x)
        out.square().sum().backward()
        self.assertLessEqual(rel_l2(out, eager), 1e-5)
        for p, g in zip(model.parameters(), eager_grads):
            self.assertLessEqual(rel_l2(p.grad, g), 1e-5)

    def test_cuda_graph_replay_is_bitwise_equal(self):
        for dtype in (torch.bfloat16, torch.float32):
            q, k, v = inputs(2, 4, 300, 128, dtype)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm-up: plans made outside the capture
                tilec.attention(q, k, v, causal=True)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = tilec.attention(q, k, v, causal=True)
            for t in (q, k, v):
                t.copy_(torch.randn_like(t))
            graph.replay()
            torch.cuda.synchronize()
            eager = tilec.attention(q, k, v, causal=True)
            self.assertTrue(torch.equal(out, eager), f"{dtype}: replay differs from eager")
            self.assertGreater(out.abs().sum().item(), 0)

    def test_cuda_graph_of_forward_and_backward(self):
        # A training step's attention, both directions in one graph (torch's
        # "whole network capture": warm-up on a side stream, grads set to None).
        q, k, v = inputs(1, 2, 130, 64, torch.bfloat16, grad=True)
        do = torch.randn_like(q)

        def step():
            for t in (q, k, v):
                t.grad = None
            tilec.attention(q, k, v, causal=True).backward(do)

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        grads = [t.grad for t in (q, k, v)]
        with torch.no_grad():
            for t in (q, k, v, do):
                t.copy_(torch.randn_like(t))
        graph.replay()
        torch.cuda.synchronize()
        fresh = [t.detach().clone().requires_grad_() for t in (q, k, v)]
        tilec.attention(*fresh, causal=True).backward(do)
        for name, g, f in zip("qkv", grads, fresh):
            self.assertTrue(torch.equal(g, f.grad), f"d{name}: replay differs from eager")


if __name__ == "__main__":
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, seed {SEED}, "
          f"libtilec_c {tilec.capi.version()}")
    unittest.main(verbosity=2)
