#!/usr/bin/env python3
"""Attention forward benchmark: tilec's flash_fwd.tile vs PyTorch SDPA backends.

Runs every provider side by side in one process on the same random inputs and
reports TFLOP/s, latency, peak memory and the parity error of the same run
against an fp32 reference. See bench/README.md.

  python3 bench/attention_fwd.py --tilec PATH/TO/tilec            # full sweep
  python3 bench/attention_fwd.py --quick                           # 2 seqlens, bf16
  python3 bench/attention_fwd.py --dry-run --tilec build/bin/tilec # no GPU needed
  python3 bench/attention_fwd.py --self-test                       # launch logic, no GPU

torch, cupy and matplotlib are imported lazily (and libcuda.so.1 is loaded at
the first tilec launch), so --help, --dry-run and --self-test work on a machine
without them.
"""
import argparse
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TILE = ROOT / "examples" / "attention" / "flash_fwd.tile"
SEQLENS = [512, 1024, 2048, 4096, 8192, 16384]
HEAD_DIMS = [64, 128]
DTYPES = {"bf16": "bf16", "fp16": "f16"}  # benchmark name -> tilec T
PROVIDERS = ["tilec", "triton", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient"]
# (BM, BN, NUM_WARPS, MIN_BLOCKS, TMA_STAGES, PRODUCER, PERSISTENT, CTA_PROGRAMS): the default per
# head dim and the --tune candidates. MIN_BLOCKS > 0 asks ptxas to fit that
# many programs per SM (.minnctapersm: caps registers); 0 leaves registers to
# ptxas. TMA_STAGES 3: rings without CTA barriers and, with 8 warps at
# D = 128, two warpgroups taking turns (ping-pong); 2: CTA barrier per copy.
# PRODUCER 1: a producer warpgroup issues the copies (warp specialization).
# PERSISTENT 1: as many programs as are resident loop over the grid (the
# rings carry on from one query block to the next). CTA_PROGRAMS G > 1 (with
# both): each CTA runs G query blocks of a head sharing the producer's K/V
# copies (causal ones read the keys of the CTA's longest query block).
DEFAULT_CFG = {64: (64, 64, 4, 0, 3, 0, 0, 1), 128: (64, 64, 4, 0, 3, 0, 0, 1)}
TUNE_CFGS = [(64, 64, 4, 0, 2, 0, 0, 1), (128, 64, 8, 0, 2, 0, 0, 1), (64, 64, 4, 4, 3, 0, 0, 1),
             (128, 128, 8, 0, 3, 0, 0, 1), (128, 128, 8, 0, 3, 1, 0, 1), (64, 32, 4, 0, 2, 0, 0, 1),
             (64, 128, 4, 0, 3, 0, 0, 1), (128, 64, 8, 2, 2, 0, 1, 1), (128, 128, 8, 0, 3, 0, 1, 1),
             (128, 64, 8, 0, 3, 1, 0, 1), (64, 64, 4, 2, 3, 1, 0, 1), (128, 128, 8, 0, 3, 1, 1, 1),
             (64, 128, 4, 0, 4, 1, 1, 3)]
TOKENS, HIDDEN = 16384, 2048  # batch = TOKENS / seqlen, heads = HIDDEN / head_dim
RTOL = 1e-2  # relative L2 error bound for 16-bit outputs


def shape_key(s):
    return f"{s['dtype']}/d{s['D']}/causal{int(s['causal'])}/s{s['S']}"


def cfg_str(cfg):
    bm, bn, w, mb, st, p, ps, g = cfg
    return ("BM=%d,BN=%d,W=%d" % (bm, bn, w) + (",MB=%d" % mb if mb else "") + ",ST=%d" % st
            + (",P=1" if p else "") + (",PS=1" if ps else "") + (",G=%d" % g if g > 1 else ""))


CFG_KEYS = ["BM", "BN", "W", "MB", "ST", "P", "PS", "G"]
# The same fields in tuned.json, with the defaults of entries that lack them.
TUNED_FIELDS = [("BM", None), ("BN", None), ("NUM_WARPS", None), ("MIN_BLOCKS", 0),
                ("TMA_STAGES", 2), ("PRODUCER", 0), ("PERSISTENT", 0), ("CTA_PROGRAMS", 1)]


def cfg_from_tuned(t):
    """A tuned.json entry -> the config tuple."""
    return tuple(int(t[k] if d is None else t.get(k, d)) for k, d in TUNED_FIELDS)


def cfg_to_tuned(cfg):
    """The config tuple -> a tuned.json entry (without its tflops)."""
    return {k: v for (k, _), v in zip(TUNED_FIELDS, cfg)}


def parse_cfg(text):
    """'BM=64,BN=64,W=4[,MB=4][,ST=2][,P=1][,PS=1][,G=3]' or '64,64,4[,MB[,ST[,P[,PS[,G]]]]]' -> the 8-tuple."""
    cfg = dict(MB=0, ST=3, P=0, PS=0, G=1)
    for i, part in enumerate(text.split(",")):
        key, eq, val = part.rpartition("=")
        key = key if eq else (CFG_KEYS[i] if i < len(CFG_KEYS) else "?")
        if key not in CFG_KEYS:
            raise ValueError(f"a config is BM,BN,NUM_WARPS[,MIN_BLOCKS[,TMA_STAGES[,PRODUCER[,PERSISTENT[,CTA_PROGRAMS]]]]], "
                             f"not {text!r}")
        cfg[key] = int(val)
    if not all(k in cfg for k in ("BM", "BN", "W")):
        raise ValueError(f"a config needs BM, BN and NUM_WARPS: {text!r}")
    return tuple(cfg[k] for k in CFG_KEYS)


def flops(s):
    f = 4.0 * s["B"] * s["H"] * s["S"] * s["S"] * s["D"]
    return f / 2 if s["causal"] else f


def tflops(s, ms):
    """TFLOP/s of shape `s` done in `ms` milliseconds."""
    return flops(s) / (ms * 1e-3) / 1e12


# ---------------------------------------------------------------- tilec ----
class Tilec:
    """Compiles flash_fwd.tile variants (cached) and times the compiler."""

    def __init__(self, exe, tile, arch, workdir, extra=None):
        found = shutil.which(exe) or (exe if os.path.exists(exe) else None)
        if not found:
            sys.exit(f"error: tilec not found: {exe} (pass --tilec PATH)")
        self.exe, self.tile, self.arch = os.path.abspath(found), str(tile), arch
        self.dir = Path(workdir)
        self.env = dict(os.environ)
        lib = Path(self.exe).parent.parent / "lib"  # bundle layout: bin/ + lib/
        if lib.is_dir():
            self.env["LD_LIBRARY_PATH"] = f"{lib}:{self.env.get('LD_LIBRARY_PATH', '')}"
        self.cache = {}
        self.extra = dict(extra or {})  # --define NAME=VALUE for every variant

    def args(self, T, D, causal, cfg):
        bm, bn, w, mb, st, p, ps, g = cfg
        defs = dict(BM=bm, BN=bn, NUM_WARPS=w, MIN_BLOCKS=mb, TMA_STAGES=st)
        if p:  # kernels without the parameters still take the other configs
            defs["PRODUCER"] = "true"
        if ps:
            defs["PERSISTENT"] = "true"
        if g > 1:
            defs["CTA_PROGRAMS"] = g
        defs.update(self.extra)  # --define wins over the config
        defs.update(T=T, D=D, CAUSAL=str(bool(causal)).lower())
        out = [self.exe, self.tile, f"-arch={self.arch}"]
        for k, v in defs.items():
            out += ["-D", f"{k}={v}"]
        return out

    def compile(self, T, D, causal, cfg):
        """Returns (ptx_path, manifest) or raises RuntimeError."""
        key = (T, D, bool(causal), cfg)
        if key not in self.cache:
            prefix = self.dir / ("ff_%s_d%d_c%d_%d_%d_%d_%d_%d_%d_%d_%d" % (T, D, causal, *cfg))
            r = subprocess.run(self.args(T, D, causal, cfg) + ["-o", str(prefix)],
                               capture_output=True, text=True, env=self.env)
            if r.returncode != 0:
                msg = (r.stderr.strip().splitlines() or ["?"])[0]
                self.cache[key] = RuntimeError(f"tilec failed: {msg}")
            else:
                manifest = json.loads(Path(f"{prefix}.manifest.json").read_text())
                self.cache[key] = (f"{prefix}.ptx", manifest)
        if isinstance(self.cache[key], Exception):
            raise self.cache[key]
        return self.cache[key]

    def compile_time_ms(self, T, D, causal, cfg, runs):
        """Wall time of `tilec flash_fwd.tile -emit=ptx ...` (median of runs)."""
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            r = subprocess.run(self.args(T, D, causal, cfg) + ["-emit=ptx"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
            ts.append((time.perf_counter() - t0) * 1e3)
            if r.returncode != 0:
                raise RuntimeError("tilec -emit=ptx failed")
        return statistics.median(ts)


# ------------------------------------------------------ driver launches ----
# tilec kernels are launched through the driver (cuLaunchKernel via ctypes):
# sm_90a TMA kernels take one 128-byte CUtensorMap per manifest "tensorMaps"
# entry BY VALUE after the user's arguments, which CuPy's RawKernel cannot
# pass reliably. Every tilec launch takes this one path. The maps are encoded
# on the host at each launch with the rules of lib/Runtime/Launch.cpp.
TMA_DATA_TYPE_UINT16 = 1    # CU_TENSOR_MAP_DATA_TYPE_UINT16 (f16/bf16 bits)
TMA_INTERLEAVE_NONE = 0     # CU_TENSOR_MAP_INTERLEAVE_NONE
TMA_SWIZZLE_128B = 3        # CU_TENSOR_MAP_SWIZZLE_128B
TMA_L2_PROMOTION = 2        # CU_TENSOR_MAP_L2_PROMOTION_L2_128B (kTensorMapL2Promotion)
TMA_OOB_FILL_NONE = 0       # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
TMA_MAX_ROWS = 2**31 - 1
TENSOR_MAP_KEYS = ("arg", "elemBytes", "rowElems", "rowStride", "boxElems", "boxRows")

_libcuda = None


def libcuda():
    """libcuda.so.1 with argtypes/restype set for every function used."""
    global _libcuda
    if _libcuda is None:
        import ctypes as C
        try:
            lib = C.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError(f"cannot load libcuda.so.1: {e}") from None
        u64p, u32p = C.POINTER(C.c_uint64), C.POINTER(C.c_uint32)
        sigs = {
            "cuGetErrorString": [C.c_int, C.POINTER(C.c_char_p)],
            "cuMemGetAddressRange_v2": [u64p, C.POINTER(C.c_size_t), C.c_uint64],
            # (map, dataType, rank, globalAddress, globalDim, globalStrides,
            #  boxDim, elementStrides, interleave, swizzle, l2Promotion, oobFill)
            "cuTensorMapEncodeTiled": [C.c_void_p, C.c_int, C.c_uint32, C.c_void_p, u64p, u64p,
                                       u32p, u32p, C.c_int, C.c_int, C.c_int, C.c_int],
            # (f, gridXYZ, blockXYZ, sharedMemBytes, stream, kernelParams, extra)
            "cuLaunchKernel": [C.c_void_p] + [C.c_uint] * 6 + [C.c_uint, C.c_void_p,
                                                               C.POINTER(C.c_void_p), C.c_void_p],
            # (numBlocks, f, blockSize, dynamicSMemSize)
            "cuOccupancyMaxActiveBlocksPerMultiprocessor": [C.POINTER(C.c_int), C.c_void_p, C.c_int,
                                                            C.c_size_t],
        }
        for name, argtypes in sigs.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise RuntimeError(f"libcuda.so.1 has no {name} (a CUDA 12+ driver is needed)") from None
            fn.argtypes, fn.restype = argtypes, C.c_int  # CUresult
        _libcuda = lib
    return _libcuda


def cu_error(res):
    """The driver's message for a CUresult (cuGetErrorString)."""
    import ctypes as C
    s = C.c_char_p()
    if libcuda().cuGetErrorString(res, C.byref(s)) != 0 or not s.value:
        return f"unknown CUresult {res}"
    return f"{s.value.decode(errors='replace')} (CUresult {res})"


def check_tensor_maps(man):
    """The manifest's "tensorMaps" (absent: none), checked like the runtime's
    manifest parser does; raises RuntimeError('invalid manifest: ...')."""
    maps, params = man.get("tensorMaps", []), man.get("params", [])
    if not isinstance(maps, list):
        raise RuntimeError('invalid manifest: "tensorMaps" must be an array')
    for i, t in enumerate(maps):
        def bad(msg):
            raise RuntimeError(f'invalid manifest: "tensorMaps"[{i}] {msg}')
        if not isinstance(t, dict):
            bad("must be an object")
        for k in t:
            if k not in TENSOR_MAP_KEYS:
                bad(f'unknown key "{k}"')
        for k in TENSOR_MAP_KEYS:
            if k not in t:
                bad(f'missing key "{k}"')
            if not isinstance(t[k], int) or isinstance(t[k], bool) or not 0 <= t[k] <= TMA_MAX_ROWS:
                bad(f'"{k}" must be an integer in 0..2^31-1, got {t[k]!r}')
        if t["arg"] >= len(params):
            bad(f'"arg" {t["arg"]} is not a parameter (the kernel has {len(params)})')
        p = params[t["arg"]]
        if not p["type"].startswith("ptr<"):
            bad(f'"arg" {t["arg"]} is \'{p["name"]}\' of type {p["type"]}, not a pointer')
        if t["elemBytes"] != 2:
            bad(f'"elemBytes" must be 2, got {t["elemBytes"]}')
        for k in ("rowElems", "rowStride", "boxElems", "boxRows"):
            if t[k] <= 0:
                bad(f'"{k}" must be positive, got {t[k]}')
        if t["rowStride"] < t["rowElems"]:
            bad(f'"rowStride" {t["rowStride"]} is less than "rowElems" {t["rowElems"]}')
        if t["rowStride"] * t["elemBytes"] % 16:
            bad(f'"rowStride" {t["rowStride"]} of {t["elemBytes"]}-byte elements is '
                f'{t["rowStride"] * t["elemBytes"]} bytes, not a multiple of 16')
        if t["boxElems"] > t["rowElems"]:
            bad(f'"boxElems" {t["boxElems"]} is more than "rowElems" {t["rowElems"]}')
        box_bytes = t["boxElems"] * t["elemBytes"]
        if box_bytes > 128 or box_bytes % 16:
            bad(f'"boxElems" {t["boxElems"]} of {t["elemBytes"]}-byte elements is {box_bytes} '
                f'bytes; the 128-byte swizzle needs a multiple of 16 up to 128')
        if t["boxRows"] > 256:
            bad(f'"boxRows" must be at most 256, got {t["boxRows"]}')
    return maps


def tensor_map_rows(t, p, base, size, where):
    """Rows of map `t` at pointer p inside the allocation [base, base+size):
    row r is mapped iff p + r*rowBytes + rowElems*elemBytes <= base + size
    (TMA zero-fills the rows past them: no read outside the allocation)."""
    avail = base + size - p if base <= p < base + size else 0
    row_bytes, need = t["rowStride"] * t["elemBytes"], t["rowElems"] * t["elemBytes"]
    if avail < need:
        raise RuntimeError(f"{where}: pointer {p:#x} has {avail} bytes of its allocation ({base:#x}, "
                           f"{size} bytes) from there, less than one row ({need} bytes)")
    return min((avail - need) // row_bytes + 1, TMA_MAX_ROWS)


class KernelLauncher:
    """cuLaunchKernel for one tilec kernel with fixed grid, block, shared
    memory and stream. The ctypes argument slots, the map buffers and the
    kernelParams array are built once and live as long as the launcher (the
    driver copies the argument bytes during cuLaunchKernel, so reusing them
    from one launch to the next, on one thread, is safe)."""
    SCALARS = {"i32": "c_int32", "i64": "c_int64", "f32": "c_float"}

    def __init__(self, man, func_ptr, grid, block, smem, stream, keep=(), resident=None):
        import ctypes as C
        self.man, self.func_ptr, self.keep = man, func_ptr, keep  # keep: the module/function objects
        self.grid, self.block, self.smem, self.stream = tuple(grid), tuple(block), int(smem), stream
        # A persistent kernel (manifest "persistent"): `resident` programs (or
        # fewer) loop over `grid`, which they get after the user's arguments.
        self.grid_slots = []
        if man.get("persistent"):
            programs = self.grid[0] * self.grid[1] * self.grid[2]
            if not resident or resident < 1:
                raise RuntimeError(f"{man['kernelName']} is persistent: the launch needs the resident program count")
            if programs > 2**30:  # the kernel counts programs in i32
                raise RuntimeError(f"{man['kernelName']}: {programs} programs, more than a persistent kernel counts")
            self.grid_slots = [C.c_uint32(g) for g in self.grid]
            self.grid = (min(programs, resident), 1, 1)
        self.params = man["params"]
        self.slots = []
        for p in self.params:
            ty = p["type"]
            if ty.startswith("ptr<"):
                self.slots.append(C.c_uint64())
            elif ty in self.SCALARS:
                self.slots.append(getattr(C, self.SCALARS[ty])())
            else:
                raise RuntimeError(f"kernel parameter '{p['name']}' has type {ty}: the bench cannot pass it")
        self.maps = []  # (entry, CUtensorMap bytes, globalDim, globalStrides, boxDim, elementStrides)
        for t in check_tensor_maps(man):
            self.maps.append((t, (C.c_uint64 * 16)(),
                              (C.c_uint64 * 2)(t["rowElems"], 0),
                              (C.c_uint64 * 1)(t["rowStride"] * t["elemBytes"]),
                              (C.c_uint32 * 2)(t["boxElems"], t["boxRows"]),
                              (C.c_uint32 * 2)(1, 1)))
        objs = self.slots + self.grid_slots + [m[1] for m in self.maps]
        self.kernel_params = (C.c_void_p * len(objs))(*(C.addressof(o) for o in objs))

    def pack(self, *values):
        """Stores the user's arguments (in params order: pointers as ints)."""
        if len(values) != len(self.slots):
            raise RuntimeError(f"{self.man['kernelName']} takes {len(self.slots)} arguments, got {len(values)}")
        for slot, v in zip(self.slots, values):
            slot.value = v

    def encode(self, i):
        """Encodes tensor map i for the pointer now in its argument's slot."""
        import ctypes as C
        t, buf, dims, strides, box, elem_strides = self.maps[i]
        p = self.slots[t["arg"]].value
        where = f"tensor map of argument {t['arg']} '{self.params[t['arg']]['name']}'"
        if p == 0:
            raise RuntimeError(f"{where}: null pointer (TMA needs device memory)")
        if p % 16:
            raise RuntimeError(f"{where}: pointer {p:#x} is not 16-byte aligned (TMA needs it)")
        cuda = libcuda()
        base, size = C.c_uint64(), C.c_size_t()
        res = cuda.cuMemGetAddressRange_v2(C.byref(base), C.byref(size), p)
        if res:
            raise RuntimeError(f"{where}: pointer {p:#x} is not device memory: "
                               f"cuMemGetAddressRange failed: {cu_error(res)}")
        dims[1] = tensor_map_rows(t, p, base.value, size.value, where)
        res = cuda.cuTensorMapEncodeTiled(C.addressof(buf), TMA_DATA_TYPE_UINT16, 2, p, dims, strides,
                                          box, elem_strides, TMA_INTERLEAVE_NONE, TMA_SWIZZLE_128B,
                                          TMA_L2_PROMOTION, TMA_OOB_FILL_NONE)
        if res:
            raise RuntimeError(
                f"{where}: cuTensorMapEncodeTiled failed: {cu_error(res)} (pointer {p:#x}, "
                f"{dims[0]} x {dims[1]} elements of {t['elemBytes']} bytes, rows {strides[0]} bytes "
                f"apart, box {box[0]} x {box[1]})")

    def __call__(self, *values):
        self.pack(*values)
        for i in range(len(self.maps)):
            self.encode(i)
        res = libcuda().cuLaunchKernel(self.func_ptr, *self.grid, *self.block, self.smem,
                                       self.stream, self.kernel_params, None)
        if res:
            raise RuntimeError(f"cuLaunchKernel({self.man['kernelName']}) failed: {cu_error(res)}")


def resident_programs(func_ptr, block, smem):
    """Programs of a kernel the current device runs at once (SMs times the
    driver's occupancy), as lib/Runtime/Module.cpp computes for persistent
    kernels."""
    import ctypes as C
    import torch
    n = C.c_int()
    res = libcuda().cuOccupancyMaxActiveBlocksPerMultiprocessor(C.byref(n), func_ptr, block, smem)
    if res:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed: {cu_error(res)}")
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    if n.value < 1:
        raise RuntimeError(f"no program of the kernel fits on an SM ({n.value} per SM)")
    return n.value * sms


def tilec_runner(tc, s, cfg):
    """Returns fn(q, k, v) -> (o, lse) launching the compiled kernel."""
    import cupy
    import torch

    ptx, man = tc.compile(DTYPES[s["dtype"]], s["D"], s["causal"], cfg)
    module = cupy.RawModule(path=ptx)
    func = module.get_function(man["kernelName"])
    smem = int(man.get("sharedMemoryBytes", 0))
    if smem > 48 * 1024:
        func.max_dynamic_shared_size_bytes = smem  # cuFuncSetAttribute(..., 8, smem)
    grid = (math.ceil(s["S"] / cfg[0]), s["B"] * s["H"], 1)
    block = (int(man["blockSize"]), 1, 1)
    # The CUfunction: RawModule.get_function gives a RawKernel (CuPy 14) whose
    # .kernel is the cupy.cuda.function.Function, or that Function itself.
    cufunc = func.kernel if hasattr(func, "kernel") else func
    # Launched on torch's current stream (the one time_ms records its events on).
    resident = resident_programs(cufunc.ptr, block[0], smem) if man.get("persistent") else None
    launch = KernelLauncher(man, cufunc.ptr, grid, block, smem,
                            torch.cuda.current_stream().cuda_stream, keep=(module, func, cufunc),
                            resident=resident)
    seqlen, scale = s["S"], s["D"] ** -0.5  # i32, f32 slots

    def fn(q, k, v):
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:-1], device=q.device, dtype=torch.float32)
        # The tensor maps depend on these pointers (the inputs rotate): encoded per call.
        launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), seqlen, scale)
        return o, lse
    return fn


def self_test():
    """--self-test: the pure-Python launch logic (manifest checks, tensor map
    rows, argument packing, the alignment check), no GPU or libcuda needed."""
    import ctypes as C
    import struct
    params = [{"name": n, "type": "ptr<bf16>"} for n in "qkvo"] + [
        {"name": "lse", "type": "ptr<f32>"}, {"name": "seqlen", "type": "i32"},
        {"name": "sm_scale", "type": "f32"}]
    kv = dict(elemBytes=2, rowElems=128, rowStride=128, boxElems=64, boxRows=64)
    man = {"kernelName": "flash_fwd", "params": params,
           "tensorMaps": [dict(arg=1, **kv), dict(arg=2, **kv)]}

    def raises(fn, text):
        try:
            fn()
        except RuntimeError as e:
            assert text in str(e), f"expected {text!r} in {str(e)!r}"
            return
        raise AssertionError(f"no error, expected {text!r}")

    # Manifest checks.
    assert check_tensor_maps({"params": params}) == []  # older manifests: no key, no maps
    assert len(check_tensor_maps(man)) == 2
    for change, text in [(dict(arg=5), '"tensorMaps"[0] "arg" 5 is \'seqlen\' of type i32, not a pointer'),
                         (dict(arg=7), '"arg" 7 is not a parameter (the kernel has 7)'),
                         (dict(elemBytes=4), '"elemBytes" must be 2'),
                         (dict(boxRows=0), '"boxRows" must be positive'),
                         (dict(rowStride=100), '"rowStride" 100 is less than "rowElems" 128'),
                         (dict(rowElems=100, rowStride=100, boxElems=32), 'not a multiple of 16'),
                         (dict(boxElems=72), '"boxElems" 72 of 2-byte elements is 144 bytes'),
                         (dict(boxRows=257), '"boxRows" must be at most 256'),
                         (dict(extra=1), 'unknown key "extra"')]:
        bad = dict(man, tensorMaps=[dict(man["tensorMaps"][0], **change)])
        raises(lambda: check_tensor_maps(bad), text)
    raises(lambda: check_tensor_maps(dict(man, tensorMaps=[{"arg": 1}])), 'missing key "elemBytes"')

    # Rows: every whole row that fits in the allocation from the pointer on.
    t, base = man["tensorMaps"][0], 1 << 40
    rows = lambda p, size: tensor_map_rows(t, p, base, size, "map")
    assert rows(base, 256 * 1024) == 1024          # exactly 1024 rows of 256 bytes
    assert rows(base, 256 * 1024 + 255) == 1024    # a partial row is not mapped
    assert rows(base + 256, 256 * 1024) == 1023    # pointer one row in
    assert rows(base, 256) == 1                    # one row exactly
    t2 = dict(t, rowElems=64)                      # rows narrower than their stride
    assert tensor_map_rows(t2, base, base, 256 + 128, "map") == 2  # the last row needs 128 bytes only
    assert tensor_map_rows(t, base, base, 1 << 50, "map") == TMA_MAX_ROWS
    raises(lambda: rows(base, 255), "map: pointer 0x10000000000 has 255 bytes of its allocation "
                                    "(0x10000000000, 255 bytes) from there, less than one row (256 bytes)")
    raises(lambda: rows(base + 4096, 4096), "less than one row")

    # Argument packing: kernelParams[i] points at argument i's bytes, then at each map.
    launch = KernelLauncher(man, 0, (2, 3, 1), (128, 1, 1), 0, 0)
    vals = (0x7F0000000000, 0x7F0000010000, 0x7F0000020000, 0x7F0000030000, 0x7F0000040000, 4096, 0.125)
    launch.pack(*vals)
    want = [struct.pack("<Q", v) for v in vals[:5]] + [struct.pack("<i", 4096), struct.pack("<f", 0.125)]
    kp = launch.kernel_params
    assert len(kp) == 9
    for i, w in enumerate(want):
        assert C.string_at(kp[i], len(w)) == w, f"argument {i}"
    for j, m in enumerate(launch.maps):
        assert kp[7 + j] == C.addressof(m[1]) and C.sizeof(m[1]) == 128
        assert list(m[2]) == [128, 0] and list(m[3]) == [256] and list(m[4]) == [64, 64] and list(m[5]) == [1, 1]
    launch.pack(*vals[:5], 512, 2.0 ** -0.5)
    assert C.string_at(kp[6], 4) == struct.pack("<f", 2.0 ** -0.5)
    raises(lambda: launch.pack(*vals[:6]), "flash_fwd takes 7 arguments, got 6")
    # The alignment check comes before any driver call.
    launch.pack(vals[0], vals[1] + 8, *vals[2:])
    raises(lambda: launch.encode(0), "tensor map of argument 1 'k': pointer 0x7f0000010008 is not 16-byte aligned (TMA needs it)")
    launch.pack(vals[0], 0, *vals[2:])
    raises(lambda: launch.encode(0), "tensor map of argument 1 'k': null pointer (TMA needs device memory)")
    raises(lambda: KernelLauncher(dict(man, params=params + [{"name": "h", "type": "f16"}]), 0, (1, 1, 1),
                                  (1, 1, 1), 0, 0), "'h' has type f16")
    # Persistent: the resident programs (or fewer) along x, the logical grid
    # after the arguments and before the maps.
    pman = dict(man, persistent=True)
    raises(lambda: KernelLauncher(pman, 0, (2, 3, 1), (128, 1, 1), 0, 0), "needs the resident program count")
    raises(lambda: KernelLauncher(pman, 0, (2**29 + 1, 2, 1), (128, 1, 1), 0, 0, resident=264),
           "more than a persistent kernel counts")
    launch = KernelLauncher(pman, 0, (16, 128, 1), (128, 1, 1), 0, 0, resident=264)
    assert launch.grid == (264, 1, 1), launch.grid
    kp = launch.kernel_params
    assert len(kp) == 12
    assert [C.string_at(kp[7 + i], 4) for i in range(3)] == [struct.pack("<I", g) for g in (16, 128, 1)]
    assert kp[10] == C.addressof(launch.maps[0][1]) and kp[11] == C.addressof(launch.maps[1][1])
    assert KernelLauncher(pman, 0, (3, 2, 5), (128, 1, 1), 0, 0, resident=264).grid == (30, 1, 1)
    assert KernelLauncher(man, 0, (16, 128, 1), (128, 1, 1), 0, 0, resident=264).grid == (16, 128, 1)
    # Configurations: PS=1 is PERSISTENT = true.
    assert parse_cfg("128,64,8,2,2,0,1") == (128, 64, 8, 2, 2, 0, 1, 1)
    assert parse_cfg("BM=128,BN=128,W=8,ST=3,P=1,PS=1") == (128, 128, 8, 0, 3, 1, 1, 1)
    assert parse_cfg("BM=64,BN=128,W=4,ST=4,P=1,PS=1,G=3") == (64, 128, 4, 0, 4, 1, 1, 3)
    assert cfg_str((128, 64, 8, 2, 2, 0, 1, 1)) == "BM=128,BN=64,W=8,MB=2,ST=2,PS=1"
    assert cfg_str((64, 128, 4, 0, 4, 1, 1, 3)) == "BM=64,BN=128,W=4,ST=4,P=1,PS=1,G=3"
    assert parse_cfg(cfg_str(TUNE_CFGS[-1])) == TUNE_CFGS[-1]
    assert all(cfg_from_tuned(cfg_to_tuned(c)) == c for c in TUNE_CFGS)
    assert cfg_from_tuned({"BM": 64, "BN": 64, "NUM_WARPS": 4}) == (64, 64, 4, 0, 2, 0, 0, 1)
    print("self-test: ok")
    return 0


def baseline_runner(name, s):
    """fn(q, k, v) -> (o, lse or None) of a provider other than tilec."""
    if name == "triton":
        from triton_fwd import triton_runner  # bench/triton_fwd.py (needs triton)
        return triton_runner(s)
    return sdpa_runner(name, s)


def sdpa_runner(name, s):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
               "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
               "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}[name]
    scale = s["D"] ** -0.5

    def fn(q, k, v):
        with sdpa_kernel([backend]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return F.scaled_dot_product_attention(q, k, v, is_causal=s["causal"], scale=scale), None
    return fn


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
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"meta": meta, "compile": compile_rows, "results": rows, "tuned": tuned}, indent=1))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS + ["runs", "error"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    if tuned:
        (out / "tuned.json").write_text(json.dumps(tuned, indent=1))
    plot([r for r in rows if r.get("tflops")], out / "attention_fwd.png")


# ----------------------------------------------------------------- main ----
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tilec", default="tilec", help="tilec binary (default: tilec on PATH)")
    p.add_argument("--tile", default=str(TILE), help="flash_fwd.tile path")
    p.add_argument("--arch", help="sm_90a or sm_80 (default: from the GPU; sm_90a for --dry-run)")
    p.add_argument("--dtype", nargs="+", choices=list(DTYPES), help="default: bf16 fp16")
    p.add_argument("--head-dim", nargs="+", type=int, choices=HEAD_DIMS, default=HEAD_DIMS)
    p.add_argument("--seqlen", nargs="+", type=int, help=f"default: {SEQLENS}")
    p.add_argument("--causal", choices=["0", "1", "both"], default="both")
    p.add_argument("--providers", nargs="+", choices=PROVIDERS, default=PROVIDERS)
    p.add_argument("--config", help="tilec BM,BN,NUM_WARPS[,MIN_BLOCKS[,TMA_STAGES]] for every shape "
                   "(e.g. 128,128,8,0,3; defaults 0 and 3)")
    p.add_argument("--tuned", help="tuned.json from an earlier --tune: use its configs")
    p.add_argument("--define", metavar="NAME=VALUE", action="append", default=[],
                   help="extra tilec -D for every variant, e.g. TMA=true (sm_90a TMA loads)")
    p.add_argument("--tune", action="store_true", help=f"try {len(TUNE_CFGS)} tilec configs per shape, keep the best passing one")
    p.add_argument("--quick", action="store_true", help="seqlens 1k and 4k, bf16, fewer runs")
    p.add_argument("--rounds", type=int, default=1,
                   help="time every provider of a shape N times, in turn, and keep the median (default 1)")
    p.add_argument("--min-runs", type=int, default=30)
    p.add_argument("--min-ms", type=float, default=300.0, help="time at least this long per measurement")
    p.add_argument("--warmup-ms", type=float, default=200.0,
                   help="untimed calls for this long right before each measurement's timed ones, "
                   "so that the GPU's clock settles at the load of the kernel timed (default 200; "
                   "0 is the method of sessions 1-22)")
    p.add_argument("--compile-runs", type=int, default=5)
    p.add_argument("--out", default=str(ROOT / "bench" / "results"))
    p.add_argument("--dry-run", action="store_true", help="compile with tilec, time the compiler, print the plan; no GPU")
    p.add_argument("--self-test", action="store_true", help="check the launch logic (tensor maps, arguments) in Python; no GPU")
    a = p.parse_args(argv)
    defines = {}
    for d in a.define:
        name, eq, value = d.partition("=")
        if not eq or not name:
            p.error(f"--define wants NAME=VALUE, got {d!r}")
        defines[name] = value
    a.define = defines
    if a.rounds < 1:
        p.error(f"--rounds wants a count >= 1, got {a.rounds}")
    if a.warmup_ms < 0:
        p.error(f"--warmup-ms wants a time >= 0, got {a.warmup_ms}")
    if a.quick:
        a.seqlen = a.seqlen or [1024, 4096]
        a.dtype = a.dtype or ["bf16"]
        a.min_runs, a.min_ms = min(a.min_runs, 10), min(a.min_ms, 50.0)
        a.warmup_ms = min(a.warmup_ms, 50.0)
    a.seqlen = a.seqlen or SEQLENS
    a.dtype = a.dtype or list(DTYPES)
    return a


def shapes(a):
    causals = {"0": [False], "1": [True], "both": [False, True]}[a.causal]
    for dt in a.dtype:
        for D in a.head_dim:
            for c in causals:
                for S in a.seqlen:
                    yield dict(dtype=dt, D=D, causal=c, S=S, B=max(1, TOKENS // S), H=HIDDEN // D)


def configs_for(a, s, tuned):
    if a.tune:
        return TUNE_CFGS
    if a.config:
        return [parse_cfg(a.config)]
    if shape_key(s) in tuned:
        return [cfg_from_tuned(tuned[shape_key(s)])]
    return [DEFAULT_CFG[s["D"]]]


def compile_speed(tc, a, shape_list, tuned):
    """Times the compiler on each configuration the run uses, after the kernel's
    own defaults (DEFAULT_CFG: flash_fwd as written, the issue's < 300 ms
    target) for each dtype, head dim and causality of the run."""
    def compile_key(s, cfg):
        return (DTYPES[s["dtype"]], s["D"], s["causal"], cfg)
    todo = ([(compile_key(s, DEFAULT_CFG[s["D"]]), True) for s in shape_list] +
            [(compile_key(s, cfg), False) for s in shape_list for cfg in configs_for(a, s, tuned)])
    rows, seen = [], set()
    for key, default in todo:
        if key in seen:
            continue
        seen.add(key)
        cfg = key[3]
        row = {"T": key[0], "D": key[1], "causal": int(key[2]), "config": cfg_str(cfg),
               "default": default}
        try:
            man = tc.compile(*key)[1]
            row.update(blockSize=man["blockSize"], smem=man["sharedMemoryBytes"],
                       tensor_maps=len(check_tensor_maps(man)),
                       compile_ms=tc.compile_time_ms(*key, a.compile_runs))
            row["under_300ms"] = row["compile_ms"] < 300
            msg = "%4.0f ms %s  (block %d, smem %d%s)" % (
                row["compile_ms"], "ok  " if row["under_300ms"] else "SLOW", row["blockSize"], row["smem"],
                ", %d tensor maps" % row["tensor_maps"] if row["tensor_maps"] else "")
        except RuntimeError as e:
            row["error"] = msg = str(e)
        rows.append(row)
        label = "default" if default else "run"
        print(f"  {label:7s} T={key[0]:4s} D={key[1]:<3d} CAUSAL={int(key[2])} {cfg_str(cfg):17s} {msg}",
              flush=True)
    return rows


def main(argv=None):
    a = parse_args(argv)
    # Line by line even into a file: a run cut off by a time limit (or a
    # kernel that hangs) keeps every row printed so far.
    sys.stdout.reconfigure(line_buffering=True)
    if a.self_test:
        return self_test()
    tuned = json.loads(Path(a.tuned).read_text()) if a.tuned else {}
    shape_list = list(shapes(a))
    workdir = tempfile.mkdtemp(prefix="tilec-bench-")
    need_tilec = "tilec" in a.providers

    if a.dry_run:
        arch = a.arch or "sm_90a"
        print(f"dry run: {len(shape_list)} shapes x {a.providers}, arch {arch}")
        for s in shape_list:
            cfgs = configs_for(a, s, tuned) if need_tilec else []
            print(f"  {shape_key(s):28s} B={s['B']:<3d} H={s['H']:<3d} {flops(s)/1e12:7.2f} TFLOP  tilec {', '.join(map(cfg_str, cfgs))}")
        if need_tilec:
            tc = Tilec(a.tilec, a.tile, arch, workdir, a.define)
            print("tilec -emit=ptx compile time (wall, median of %d; target < 300 ms):" % a.compile_runs)
            rows = compile_speed(tc, a, shape_list, tuned)
            return 1 if any("error" in r for r in rows) else 0
        return 0

    import torch
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA device (use --dry-run on a machine without a GPU)")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is true fp32
    torch.set_float32_matmul_precision("highest")
    cap = torch.cuda.get_device_capability()
    arch = a.arch or ("sm_90a" if cap == (9, 0) else "sm_80")
    props = torch.cuda.get_device_properties(0)
    meta = {"device": torch.cuda.get_device_name(), "capability": list(cap), "arch": arch,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "argv": sys.argv[1:],
            "warmup_ms": a.warmup_ms,
            "l2_mib": getattr(props, "L2_cache_size", 50 << 20) / 2**20}
    if need_tilec:
        import cupy
        meta["cupy"] = cupy.__version__
    print(f"device: {meta['device']} (sm_{cap[0]}{cap[1]}, L2 {meta['l2_mib']:.0f} MiB)  "
          f"torch {meta['torch']} (CUDA {meta['cuda']})  cupy {meta.get('cupy', '-')}  arch {arch}")

    compile_rows, tc = [], None
    if need_tilec:
        tc = Tilec(a.tilec, a.tile, arch, workdir, a.define)
        meta["tilec"] = tc.exe
        print("tilec -emit=ptx compile time (wall, median of %d; target < 300 ms):" % a.compile_runs)
        compile_rows = compile_speed(tc, a, shape_list, tuned)

    rows, new_tuned = [], {}
    print("  ".join(COLS))
    for s in shape_list:
        shape_rows = []  # (best row, its runner) per provider, for --rounds
        inputs = make_inputs(s, meta["l2_mib"] * 2**20)
        ref = reference(*inputs[0], s["causal"])
        base = {k: int(s[k]) if k == "causal" else s[k] for k in ("dtype", "D", "causal", "S", "B", "H")}
        for p in a.providers:
            cands = configs_for(a, s, tuned) if p == "tilec" else [None]
            best, passed, runners = None, [], {}
            for cfg in cands:
                row = dict(base, provider=p, config=cfg_str(cfg) if cfg else "")
                try:
                    fn = tilec_runner(tc, s, cfg) if cfg else baseline_runner(p, s)
                    runners[id(row)] = fn
                    quick = a.tune and len(cands) > 1
                    row.update(measure(fn, inputs, ref, s, 10 if quick else a.min_runs,
                                       100 if quick else a.min_ms, a.warmup_ms))
                except Exception as e:  # SDPA refusing a shape, tilec failing
                    msg = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
                    refused = ((p.startswith("sdpa") and "No available kernel" in str(e)) or
                               (p == "triton" and isinstance(e, ImportError)))
                    row["status"] = "unsupported" if refused else "error"
                    row["error"] = msg
                if cfg and len(cands) > 1:
                    print(f"  tune {shape_key(s)} {row['config']}: {fmt(row.get('tflops'))} TFLOP/s {row['status']}")
                    if row["status"] == "PASS":
                        passed.append(row)
                else:
                    best = row
            if p == "tilec" and len(cands) > 1:
                if not passed:  # nothing passed: report the last candidate
                    best = row
                else:  # re-time the two fastest with the full run count, keep the faster
                    for row in sorted(passed, key=lambda r: -r["tflops"])[:2]:
                        row.update(measure(runners[id(row)], inputs, ref, s, a.min_runs, a.min_ms,
                                           a.warmup_ms))
                        print(f"  re-time {shape_key(s)} {row['config']}: {fmt(row.get('tflops'))} TFLOP/s {row['status']}")
                        if row["status"] == "PASS" and (best is None or row["tflops"] > best["tflops"]):
                            best = row
                    best = best or passed[0]
                    new_tuned[shape_key(s)] = dict(cfg_to_tuned(parse_cfg(best["config"])),
                                                   tflops=best["tflops"])
            rows.append(best)
            shape_rows.append((best, runners.get(id(best))))
            print("  ".join(fmt(best.get(c)) for c in COLS) + ("  " + best["error"] if "error" in best else ""), flush=True)
        if a.rounds > 1:
            interleaved_rounds(a, s, inputs, shape_rows)
        del inputs, ref
        torch.cuda.empty_cache()

    print()
    print_table(rows)
    out = Path(a.out)
    write_outputs(out, meta, compile_rows, rows, new_tuned)
    print(f"\nwrote {out}/results.json, results.csv, attention_fwd.png" + (", tuned.json" if new_tuned else ""))
    bad = [r for r in rows if r["status"] in ("FAIL", "error")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
