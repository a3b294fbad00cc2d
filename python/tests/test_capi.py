#!/usr/bin/env python3
"""tilec.capi (ctypes over libtilec_c.so) against the fake CUDA driver: no GPU, no torch.

    TILEC_LIB=build/lib/libtilec_c.so TILEC_FAKECUDA_PATH=build/lib/libtile-fakecuda.so \
        python3 python/tests/test_capi.py

The fake driver (test/Unit/FakeCuda.h) is a cc 9.0 device backed by host
memory that records launches; the kernels are compiled for real (the JIT, in
a temporary cache). Checks the ABI as Python sees it (the desc's layout, the
prototypes), the plans' kernel choice, the launches of run() and the error
messages. ctest runs it as tile-python-capi (label unit).
"""
import ctypes
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAKE = os.environ.get("TILEC_FAKECUDA_PATH")
if not FAKE:
    print("skipped: TILEC_FAKECUDA_PATH is not set (the fake driver)")
    sys.exit(77)
os.environ["TILEC_CUDA_DRIVER"] = FAKE
os.environ.setdefault("TILEC_CACHE_DIR", tempfile.mkdtemp(prefix="tilec-capi-"))
os.environ.pop("FAKECUDA_MODE", None)

from tilec import capi  # noqa: E402


class FakeState(ctypes.Structure):
    """The leading fields of FakeCudaState (test/Unit/FakeCuda.h)."""
    _fields_ = [("retains", ctypes.c_int), ("releases", ctypes.c_int),
                ("modulesLoaded", ctypes.c_int), ("modulesUnloaded", ctypes.c_int),
                ("allocs", ctypes.c_int), ("frees", ctypes.c_int),
                ("lastImageKind", ctypes.c_char * 8), ("launches", ctypes.c_int),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("sharedMem", ctypes.c_uint), ("paramCount", ctypes.c_int),
                ("params", ctypes.c_ulonglong * 16)]


fake = ctypes.CDLL(FAKE)  # the same handle the library's dlopen gets
fake.fakecuda_state.restype = ctypes.POINTER(FakeState)
state = fake.fakecuda_state().contents
fake.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t]


def alloc(nbytes):
    p = ctypes.c_ulonglong()
    assert fake.cuMemAlloc_v2(ctypes.byref(p), nbytes) == 0
    return p.value


class CapiTest(unittest.TestCase):
    def test_version_and_desc_layout(self):
        self.assertEqual(capi.lib().tilec_api_version(), capi.API_VERSION)
        self.assertRegex(capi.version(), r"^\d+\.\d+")
        self.assertEqual(ctypes.sizeof(capi.Desc), 76)  # 19 four-byte fields
        self.assertEqual(capi.Desc(head_dim=64).size, 76)

    def test_bad_descs_are_errors(self):
        cases = [(capi.Desc(seqlen=10, head_dim=0), "head dim 0 is outside 1..256"),
                 (capi.Desc(seqlen=10, head_dim=64, dtype=7), "desc.dtype 7"),
                 (capi.Desc(seqlen=-1, head_dim=64), "seqlen (-1) must be >= 0")]
        small = capi.Desc(seqlen=10, head_dim=64)
        small.size = 8
        cases.append((small, "desc.size 8 is smaller than 44"))
        cases.append((capi.Desc(seqlen=10, heads=3, head_dim=64, heads_kv=2),
                      "heads_kv 2 must divide heads 3"))
        for desc, message in cases:
            with self.assertRaises(capi.TilecError) as e:
                capi.ForwardPlan(desc)
            self.assertIn(message, str(e.exception))
            self.assertEqual(capi.last_error(), str(e.exception))
        with self.assertRaises(capi.TilecError) as e:
            capi.BackwardPlan(capi.Desc(seqlen=10, head_dim=64, layout=capi.BSHD))
        self.assertIn("layout bshd is not supported", str(e.exception))
        with self.assertRaises(capi.TilecError) as e:
            capi.BackwardPlan(capi.Desc(seqlen=10, head_dim=80))
        self.assertIn("head dim 80 is not supported", str(e.exception))
        with self.assertRaises(capi.TilecError) as e:
            capi.BackwardPlan(capi.Desc(seqlen=10, head_dim=64, window_left=8))
        self.assertIn("the backward has no variants but GQA", str(e.exception))

    def test_version_1_descs_still_plan(self):
        # A caller built against version 1 passes the 44 bytes it knows.
        desc = capi.Desc(1, 2, 100, 64, capi.BF16, window_left=7)
        desc.size = 44
        plan = capi.ForwardPlan(desc)
        self.assertEqual(plan.kernel_name, "flash_fwd")  # the window is not read

    def test_variant_plans_and_launches(self):
        B, H, HKV, S, SK, D = 1, 4, 2, 100, 150, 64
        plan = capi.ForwardPlan(capi.Desc(B, H, S, D, capi.BF16, causal=True, heads_kv=HKV,
                                          seqlen_k=SK, bottom_right=True, window_left=31,
                                          softcap=30.0, alibi=True, sinks=True))
        self.assertEqual(plan.kernel_name, "flex_fwd")
        q, o = (alloc(B * H * S * D * 2) for _ in range(2))
        k, v = (alloc(B * HKV * SK * D * 2) for _ in range(2))
        lse, slopes, sinks = alloc(B * H * S * 4), alloc(H * 4), alloc(H * 4)
        launches = state.launches
        plan.run_variant(q, k, v, o, lse, slopes, sinks, 0)
        self.assertEqual(state.launches, launches + 1)
        self.assertEqual((state.grid[1], state.grid[2]), (H, B))
        self.assertEqual(state.params[0], q)
        self.assertEqual(state.params[5] & 0xFFFFFFFF, S)
        self.assertEqual(state.params[6] & 0xFFFFFFFF, SK)
        self.assertEqual(state.params[8] & 0xFFFFFFFF, HKV)
        # The plain run() passes no slopes: refused, nothing launched.
        with self.assertRaises(capi.TilecError) as e:
            plan.run(q, k, v, o, lse, 0)
        self.assertIn("alibiSlopes and sinks must be set", str(e.exception))
        self.assertEqual(state.launches, launches + 1)

    def test_forward_plans_and_launches(self):
        B, H, S, D = 1, 2, 100, 64
        plan = capi.ForwardPlan(capi.Desc(B, H, S, D, capi.BF16, causal=True))
        self.assertEqual(plan.kernel_name, "flash_fwd")
        self.assertTrue(plan.plan_line.startswith("attention: flash_fwd ("), plan.plan_line)
        q, k, v, o = (alloc(B * H * S * D * 2) for _ in range(4))
        lse = alloc(B * H * S * 4)
        launches, allocs = state.launches, state.allocs
        plan.run(q, k, v, o, lse, 0)
        self.assertEqual(state.launches, launches + 1)
        self.assertEqual(state.allocs, allocs)  # run() allocates nothing
        self.assertEqual(state.params[0], q)
        self.assertEqual(state.params[4], lse)
        with self.assertRaises(capi.TilecError) as e:
            plan.run(0, k, v, o, lse, 0)
        self.assertIn("q, k, v and o must be set", str(e.exception))
        self.assertEqual(state.launches, launches + 1)

    def test_forced_reference(self):
        flags = capi.FLAG_FORCE_REFERENCE | capi.FLAG_QUIET
        plan = capi.ForwardPlan(capi.Desc(2, 2, 33, 64, capi.F16, flags=flags))
        self.assertEqual(plan.kernel_name, "flash_fwd_ref")
        self.assertIn("forced", plan.plan_line)

    def run_backward(self, plan, B, H, S, D, elem_bytes):
        """Runs `plan` once on fresh fake-driver tensors: three launches, no
        allocation. -> (the eight [B*H, S, D] tensors, the run's arguments)."""
        t = [alloc(B * H * S * D * elem_bytes) for _ in range(8)]
        q, k, v, o, dout, dq, dk, dv = t
        args = (q, k, v, o, alloc(B * H * S * 4), dout, dq, dk, dv)
        launches, allocs = state.launches, state.allocs
        plan.run(*args, 0)
        self.assertEqual(state.launches, launches + 3)
        self.assertEqual(state.allocs, allocs)
        return t, args

    def test_backward_plans_and_launches_three_kernels(self):
        B, H, S, D = 2, 3, 130, 64
        plan = capi.BackwardPlan(capi.Desc(B, H, S, D, capi.F32, causal=True))
        self.assertEqual(plan.kernel_name, "flash_bwd")
        self.assertIn("flash_bwd_dq", plan.plan_line)
        t, (q, k, v, o, lse, dout, dq, dk, dv) = self.run_backward(plan, B, H, S, D, 4)
        self.assertEqual(state.grid[1], B * H)  # the last launch: dQ
        self.assertEqual(state.params[6], dq)
        self.assertEqual(state.params[7] & 0xFFFFFFFF, S)  # an i32 (8 bytes read from a cubin)
        with self.assertRaises(capi.TilecError) as e:
            plan.run(q, k, v, o, lse, dout, dq, dk, 0, 0)
        self.assertIn("must all be set", str(e.exception))

    def test_backward_atomic_dq_flag(self):
        # TILEC_FLAG_ATOMIC_DQ: dQ added by atomics in the dK/dV pass, then
        # flash_bwd_dq_cast (dq_acc, dq, seqlen) instead of flash_bwd_dq.
        B, H, S, D = 1, 2, 70, 64
        plan = capi.BackwardPlan(capi.Desc(B, H, S, D, capi.BF16, flags=capi.FLAG_ATOMIC_DQ))
        self.assertIn("atomic dQ, flash_bwd_dq_cast", plan.plan_line)
        t, (q, k, v, o, lse, dout, dq, dk, dv) = self.run_backward(plan, B, H, S, D, 2)
        self.assertEqual(state.grid[1], B * H)  # the last launch: the cast
        self.assertNotIn(state.params[0], t)    # dq_acc, the plan's workspace
        self.assertEqual(state.params[1], dq)
        self.assertEqual(state.params[2] & 0xFFFFFFFF, S)

    def test_library_search_order(self):
        saved = os.environ.get("TILEC_LIB")
        try:
            os.environ["TILEC_LIB"] = "/no/such/libtilec_c.so"
            self.assertEqual([str(p) for p in capi.candidates()], ["/no/such/libtilec_c.so"])
            del os.environ["TILEC_LIB"]
            names = [str(p) for p in capi.candidates()]
            pkg = Path(capi.__file__).resolve().parent
            self.assertEqual(names[0], str(pkg / "libtilec_c.so.1"))
            self.assertIn(str(pkg.parent.parent / "build" / "lib" / "libtilec_c.so"), names)
        finally:
            if saved is not None:
                os.environ["TILEC_LIB"] = saved


if __name__ == "__main__":
    unittest.main(verbosity=2)
