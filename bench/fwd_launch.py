"""tilec kernels launched through the CUDA driver (cuLaunchKernel via ctypes) for the
benchmarks: tensor maps encoded by the rules of lib/Runtime/Launch.cpp, persistent grids."""
import math
from fwd_config import DTYPES

# ------------------------------------------------------ driver launches ----
# tilec kernels are launched through the driver (cuLaunchKernel via ctypes):
# sm_90a TMA kernels take one 128-byte CUtensorMap per manifest "tensorMaps"
# entry BY VALUE after the user's arguments, which CuPy's RawKernel cannot
# pass reliably. Every tilec launch takes this one path. The maps are encoded
# on the host at each launch with the rules of lib/Runtime/Launch.cpp.
TMA_DATA_TYPE_UINT8 = 0     # CU_TENSOR_MAP_DATA_TYPE_UINT8 (fp8 bits)
TMA_DATA_TYPE_UINT16 = 1    # CU_TENSOR_MAP_DATA_TYPE_UINT16 (f16/bf16 bits)
TMA_INTERLEAVE_NONE = 0     # CU_TENSOR_MAP_INTERLEAVE_NONE
TMA_SWIZZLE_128B = 3        # CU_TENSOR_MAP_SWIZZLE_128B
TMA_L2_PROMOTION = 2        # CU_TENSOR_MAP_L2_PROMOTION_L2_128B (kTensorMapL2Promotion)
TMA_OOB_FILL_NONE = 0       # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
TMA_MAX_ROWS = 2**31 - 1
TENSOR_MAP_KEYS = ("arg", "elemBytes", "rowElems", "rowStride", "boxElems", "boxRows")
# Optional: "strideArgs", the integer parameters whose values times rowStride
# are the row stride (a run-time stride: [B, S, H, D] rows heads * D apart).

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
    manifest parser does (lib/Runtime/Manifest.cpp); raises
    RuntimeError('invalid manifest: ...'). rowElems 0: rows as long as their
    stride; "strideArgs": integer parameters the stride is multiplied by."""
    maps, params = man.get("tensorMaps", []), man.get("params", [])
    if not isinstance(maps, list):
        raise RuntimeError('invalid manifest: "tensorMaps" must be an array')
    for i, t in enumerate(maps):
        def bad(msg):
            raise RuntimeError(f'invalid manifest: "tensorMaps"[{i}] {msg}')
        if not isinstance(t, dict):
            bad("must be an object")
        for k in t:
            if k not in TENSOR_MAP_KEYS + ("strideArgs",):
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
        if t["elemBytes"] not in (1, 2):
            bad(f'"elemBytes" must be 1 or 2, got {t["elemBytes"]}')
        stride_args = t.get("strideArgs", [])
        if not isinstance(stride_args, list):
            bad('"strideArgs" must be an array of parameter indices')
        for a in stride_args:
            if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < len(params):
                bad(f'"strideArgs" holds {a!r}, not a parameter index')
            if params[a]["type"] not in ("i32", "i64"):
                bad(f'"strideArgs" names \'{params[a]["name"]}\' of type {params[a]["type"]}, not an integer')
        for k in ("rowStride", "boxElems", "boxRows"):
            if t[k] <= 0:
                bad(f'"{k}" must be positive, got {t[k]}')
        if t["rowElems"] == 0 and not stride_args and t["rowStride"] < t["boxElems"]:
            bad(f'"rowStride" {t["rowStride"]} is less than "boxElems" {t["boxElems"]}')
        if t["rowElems"] and not stride_args and t["rowStride"] < t["rowElems"]:
            bad(f'"rowStride" {t["rowStride"]} is less than "rowElems" {t["rowElems"]}')
        if not stride_args and t["rowStride"] * t["elemBytes"] % 16:
            bad(f'"rowStride" {t["rowStride"]} of {t["elemBytes"]}-byte elements is '
                f'{t["rowStride"] * t["elemBytes"]} bytes, not a multiple of 16')
        if t["rowElems"] and t["boxElems"] > t["rowElems"]:
            bad(f'"boxElems" {t["boxElems"]} is more than "rowElems" {t["rowElems"]}')
        box_bytes = t["boxElems"] * t["elemBytes"]
        if box_bytes > 128 or box_bytes % 16:
            bad(f'"boxElems" {t["boxElems"]} of {t["elemBytes"]}-byte elements is {box_bytes} '
                f'bytes; the 128-byte swizzle needs a multiple of 16 up to 128')
        if t["boxRows"] > 256:
            bad(f'"boxRows" must be at most 256, got {t["boxRows"]}')
    return maps


def tensor_map_rows(t, p, base, size, where, stride=None):
    """Rows of map `t` at pointer p inside the allocation [base, base+size):
    row r is mapped iff p + r*rowBytes + rowElems*elemBytes <= base + size
    (TMA zero-fills the rows past them: no read outside the allocation).
    `stride`: the row stride in elements (default rowStride; with strideArgs
    the launch's); rowElems 0 means rows as long as the stride."""
    avail = base + size - p if base <= p < base + size else 0
    stride = stride or t["rowStride"]
    row_bytes, need = stride * t["elemBytes"], (t["rowElems"] or stride) * t["elemBytes"]
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
        # Manifest "gridArgs" (tile-grid-offsets): u32s after the persistent
        # grid saying where each launch starts along y/z and the whole grid's
        # size; a grid over 65535 there is several launches (as
        # lib/Runtime/Launch.cpp splits it). Absent (an older tilec): none.
        names = [] if man.get("persistent") else man.get("gridArgs")
        if names is None and max(self.grid[1:]) > 65535:
            raise RuntimeError(f"{man['kernelName']}: grid {self.grid} over 65535 along y or z, and the "
                               "manifest has no \"gridArgs\" (compile it again)")
        self.grid_arg_slots = [C.c_uint32() for _ in names or []]
        self.launches = []  # (grid, gridArgs values)
        gx, gy, gz = self.grid
        for z0 in range(0, gz, 65535):
            for y0 in range(0, gy, 65535):
                vals = {"offset_y": y0, "offset_z": z0, "size_y": gy, "size_z": gz}
                self.launches.append(((gx, min(65535, gy - y0), min(65535, gz - z0)),
                                      [vals[n] for n in names or []]))
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
        objs = self.slots + self.grid_slots + self.grid_arg_slots + [m[1] for m in self.maps]
        self.kernel_params = (C.c_void_p * len(objs))(*(C.addressof(o) for o in objs))

    def pack(self, *values):
        """Stores the user's arguments (in params order: pointers as ints)."""
        if len(values) != len(self.slots):
            raise RuntimeError(f"{self.man['kernelName']} takes {len(self.slots)} arguments, got {len(values)}")
        for slot, v in zip(self.slots, values):
            slot.value = v

    def row_stride(self, i):
        """Map i's row stride in elements: rowStride times the values now in
        its "strideArgs" slots (lib/Runtime/Launch.cpp's checks)."""
        t = self.maps[i][0]
        stride = t["rowStride"]
        for a in t.get("strideArgs", []):
            v = self.slots[a].value
            if v <= 0 or stride > (1 << 40) // v:
                raise RuntimeError(f"tensor map of argument {t['arg']} '{self.params[t['arg']]['name']}': "
                                   f"row stride {t['rowStride']} x '{self.params[a]['name']}' = {v} is not "
                                   "a positive stride below 2^40 elements")
            stride *= v
        where = f"tensor map of argument {t['arg']} '{self.params[t['arg']]['name']}'"
        if stride * t["elemBytes"] % 16:
            raise RuntimeError(f"{where}: rows {stride} elements of {t['elemBytes']} bytes apart are "
                               "not a multiple of 16 bytes apart (TMA needs it)")
        # Whole rows (rowElems 0) may be shorter than a box: TMA reads the
        # columns past a row as zero.
        if stride < t["rowElems"] or (t["rowElems"] and t["rowElems"] < t["boxElems"]):
            raise RuntimeError(f"{where}: rows "
                               f"{stride} elements apart are shorter than its box "
                               f"({max(t['rowElems'], t['boxElems'])} elements)")
        return stride

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
        stride = self.row_stride(i)
        dims[0], strides[0] = t["rowElems"] or stride, stride * t["elemBytes"]
        dims[1] = tensor_map_rows(t, p, base.value, size.value, where, stride)
        dtype = TMA_DATA_TYPE_UINT8 if t["elemBytes"] == 1 else TMA_DATA_TYPE_UINT16
        res = cuda.cuTensorMapEncodeTiled(C.addressof(buf), dtype, 2, p, dims, strides,
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
        for grid, vals in self.launches:
            for slot, v in zip(self.grid_arg_slots, vals):
                slot.value = v
            res = libcuda().cuLaunchKernel(self.func_ptr, *grid, *self.block, self.smem,
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


def launch_compiled(ptx, man, grid):
    """A KernelLauncher of the kernel in `ptx` (its manifest `man`) over
    `grid`, on torch's current stream (the one time_ms records its events
    on): the module loaded by CuPy, the dynamic shared memory allowed, and a
    persistent kernel given the driver's resident program count."""
    import cupy
    import torch
    module = cupy.RawModule(path=ptx)
    func = module.get_function(man["kernelName"])
    smem = int(man.get("sharedMemoryBytes", 0))
    if smem > 48 * 1024:
        func.max_dynamic_shared_size_bytes = smem  # cuFuncSetAttribute(..., 8, smem)
    block = (int(man["blockSize"]), 1, 1)
    # The CUfunction: RawModule.get_function gives a RawKernel (CuPy 14) whose
    # .kernel is the cupy.cuda.function.Function, or that Function itself.
    cufunc = func.kernel if hasattr(func, "kernel") else func
    resident = resident_programs(cufunc.ptr, block[0], smem) if man.get("persistent") else None
    return KernelLauncher(man, cufunc.ptr, grid, block, smem,
                          torch.cuda.current_stream().cuda_stream, keep=(module, func, cufunc),
                          resident=resident)


def tilec_runner(tc, s, cfg):
    """Returns fn(q, k, v) -> (o, lse) launching the compiled kernel."""
    import torch

    ptx, man = tc.compile(DTYPES[s["dtype"]], s["D"], s["causal"], cfg)
    bm = int(tc.defines(DTYPES[s["dtype"]], s["D"], s["causal"], cfg)["BM"])
    launch = launch_compiled(ptx, man, (math.ceil(s["S"] / bm), s["B"] * s["H"], 1))
    seqlen, scale = s["S"], s["D"] ** -0.5  # i32, f32 slots

    def fn(q, k, v):
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:-1], device=q.device, dtype=torch.float32)
        # The tensor maps depend on these pointers (the inputs rotate): encoded per call.
        launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), seqlen, scale)
        return o, lse
    return fn


