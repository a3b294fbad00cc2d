#!/usr/bin/env python3
"""Attention forward benchmark: tilec's flash_fwd.tile vs Triton, PyTorch SDPA and FlexAttention.

Runs every provider side by side in one process on the same random inputs and
reports TFLOP/s, latency, peak memory and the parity error of the same run
against an fp32 reference. See bench/README.md.

  python3 bench/attention_fwd.py --tilec PATH/TO/tilec            # full sweep
  python3 bench/attention_fwd.py --quick                           # 2 seqlens, bf16
  python3 bench/attention_fwd.py --dry-run --tilec build/bin/tilec # no GPU needed
  python3 bench/attention_fwd.py --self-test                       # launch logic, no GPU

Each shape runs the tilec configuration (block sizes and schedule) that the
config table examples/attention/configs/flash_fwd.ARCH.json gives it
(--config-table, --config); --tune writes such a table.

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
HEAD_DIMS = [64, 128]  # the default sweep
ALL_HEAD_DIMS = [64, 80, 96, 128, 160, 192, 256]  # --head-dim may name any (tile-pad-shapes)
DTYPES = {"bf16": "bf16", "fp16": "f16"}  # benchmark name -> tilec T
PROVIDERS = ["tilec", "triton", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex"]
# tilec-torch (opt-in): torch.ops.tilec.attention_fwd from python/tilec, the path a
# model takes (tile::Attention: the config table's entry, the C++ launcher), beside
# "tilec" (this file's launcher, which also runs --config / --tune candidates).
EXTRA_PROVIDERS = ["tilec-torch"]
CONFIGS = ROOT / "examples" / "attention" / "configs"  # flash_fwd.ARCH.json
TOKENS, HIDDEN = 16384, 2048  # batch = TOKENS / seqlen, heads = HIDDEN / head_dim
RTOL = 1e-2  # relative L2 error bound for 16-bit outputs

# ------------------------------------------------------------- configs ----
# A tilec configuration is what a config table entry holds (include/tile/
# ConfigTable.h, docs/schedule.md): {"defines": {"BM": .., "BN": ..},
# "schedule": {the fields that differ from their defaults}}. The schedule's
# fields and defaults, in tile::Schedule::str()'s order:
SCHEDULE = {"num_warps": 4, "min_blocks": 0, "num_stages": 3, "tma": True, "tma_a": False,
            "tma_store": True, "pingpong": True, "producer": False, "persistent": False,
            "cta_programs": 1, "l2_group": 0, "reverse_x": False}
# (lo, hi, power of two) of the integer fields, as lib/Runtime/Schedule.cpp checks them.
SCHEDULE_RANGES = {"num_warps": (1, 32, True), "min_blocks": (0, 32, False),
                   "num_stages": (2, 4, False), "cta_programs": (1, 8, False),
                   "l2_group": (0, 1 << 20, False)}
# The short names of the printed config ("BM=128,BN=128,W=8,ST=3,P=1,PS=1");
# W and ST are always printed, the others where they differ from the default.
SHORT = {"W": "num_warps", "MB": "min_blocks", "ST": "num_stages", "TMA": "tma", "TA": "tma_a",
         "TS": "tma_store", "PP": "pingpong", "P": "producer", "PS": "persistent",
         "G": "cta_programs", "L2": "l2_group", "RX": "reverse_x"}
# A config given as bare numbers: BM, BN, NUM_WARPS, then (older command lines)
# MIN_BLOCKS, TMA_STAGES, PRODUCER, PERSISTENT, CTA_PROGRAMS.
POSITIONAL = ["BM", "BN", "W", "MB", "ST", "P", "PS", "G"]
TABLE_KEYS = ["T", "D", "CAUSAL"]  # a config table's "keys"; its "size" is "seqlen"


def make_cfg(bm, bn, **schedule):
    """A config: block sizes and the schedule fields that differ from their defaults."""
    for k in schedule:
        if k not in SCHEDULE:
            raise ValueError(f"unknown schedule field {k!r} (known: {', '.join(SCHEDULE)})")
    return {"defines": {"BM": bm, "BN": bn},
            "schedule": {k: schedule[k] for k in SCHEDULE if k in schedule and schedule[k] != SCHEDULE[k]}}


def schedule_of(cfg):
    """Every schedule field of a config (defaults filled in)."""
    return dict(SCHEDULE, **cfg.get("schedule", {}))


def with_schedule(cfg, fields):
    """cfg with the schedule fields `fields` set (--schedule over every config)."""
    if not fields:
        return cfg
    s = dict(cfg.get("schedule", {}), **fields)
    return {"defines": dict(cfg["defines"]),
            "schedule": {k: s[k] for k in SCHEDULE if k in s and s[k] != SCHEDULE[k]}}


def l2_group(bm, D):
    """Programs per L2 group for causal flash_fwd: the query blocks of the heads
    whose K and V (2 x 2 bytes x D per key) fill about 16 MiB."""
    return (16 << 20) // (bm * 4 * D)


# flash_fwd as written: its own BM and BN and the default schedule (the
# compile-time target of the issue is about this one; what a config table
# without a "default" gives, as in C++).
KERNEL_DEFAULT = make_cfg(64, 64)
# The --tune candidates. min_blocks > 0 asks ptxas to fit that many programs
# per SM (.minnctapersm: caps registers). num_stages 2: a CTA barrier per
# copy; 3 lets two warpgroups of 8 warps take turns (ping-pong) at D = 128.
# producer: a producer warpgroup issues the copies. persistent: as many
# programs as are resident loop over the grid (the rings carry on from one
# query block to the next). cta_programs G > 1 (with both): each CTA runs G
# query blocks of a head on the producer's shared K/V copies (non-causal
# only: causal programs of a CTA would need different key ranges). For causal
# shapes tune_configs() adds the program order (l2_group, reverse_x).
TUNE_CFGS = [make_cfg(64, 64, num_stages=2), make_cfg(128, 64, num_warps=8, num_stages=2),
             make_cfg(64, 64, min_blocks=4), make_cfg(128, 128, num_warps=8),
             make_cfg(128, 128, num_warps=8, producer=True), make_cfg(64, 32, num_stages=2),
             make_cfg(64, 128),
             make_cfg(128, 64, num_warps=8, min_blocks=2, num_stages=2, persistent=True),
             make_cfg(128, 128, num_warps=8, persistent=True),
             make_cfg(128, 64, num_warps=8, producer=True),
             make_cfg(64, 64, min_blocks=2, producer=True),
             make_cfg(128, 128, num_warps=8, producer=True, persistent=True),
             make_cfg(64, 128, num_stages=4, producer=True, persistent=True, cta_programs=3)]


def tune_configs(s):
    """The --tune candidates for shape s: causal ones take the longest query
    blocks first, heads grouped for L2 (l2_group, reverse_x), and leave out
    cta_programs > 1."""
    if not s["causal"]:
        return TUNE_CFGS
    return [with_schedule(c, dict(l2_group=l2_group(c["defines"]["BM"], s["D"]), reverse_x=True))
            for c in TUNE_CFGS if schedule_of(c)["cta_programs"] == 1]


def shape_key(s):
    return f"{s['dtype']}/d{s['D']}/causal{int(s['causal'])}/s{s['S']}"


def cfg_str(cfg):
    """'BM=128,BN=128,W=8,ST=3,P=1,PS=1': the block sizes, W and ST, the other
    schedule fields that differ from their defaults (booleans as 0/1), then
    any other defines."""
    defs, sched = cfg["defines"], schedule_of(cfg)
    out = [f"BM={defs['BM']}", f"BN={defs['BN']}"]
    for short, name in SHORT.items():
        v = sched[name]
        if short in ("W", "ST") or v != SCHEDULE[name]:
            out.append(f"{short}={int(v)}")
    out += [f"{k}={v}" for k, v in defs.items() if k not in ("BM", "BN")]
    return ",".join(out)


def schedule_value(name, text):
    """A schedule field's value from text (integers; booleans as true/false/1/0),
    range-checked as tile::Schedule::set does."""
    if isinstance(SCHEDULE[name], bool):
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise ValueError(f"{name} expects true or false, got {text!r}")
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{name} expects an integer, got {text!r}") from None
    lo, hi, pow2 = SCHEDULE_RANGES[name]
    if not lo <= v <= hi or (pow2 and v & (v - 1)):
        raise ValueError(f"{name} must be {'a power of two' if pow2 else 'an integer'} in "
                         f"[{lo}, {hi}], got {v}")
    return v


def check_schedule(sched):
    """tile::Schedule::validate()'s rules across fields; raises ValueError."""
    s = dict(SCHEDULE, **sched)
    warps = s["cta_programs"] * s["num_warps"] + (4 if s["producer"] else 0)
    if warps > 32:
        raise ValueError(f"cta_programs = {s['cta_programs']} with num_warps = {s['num_warps']}"
                         f"{' and a producer warpgroup' if s['producer'] else ''} needs {warps} "
                         f"warps; a CTA has at most 32")
    if s["cta_programs"] > 1 and not s["persistent"]:
        raise ValueError("cta_programs > 1 needs persistent = true")
    if s["cta_programs"] > 1 and not s["producer"]:
        raise ValueError("cta_programs > 1 needs producer = true")


def parse_schedule(text):
    """'name=value,name,...' (a bare name: a flag turned on), as tilec
    -schedule= takes it -> {field: value}."""
    out = {}
    for item in filter(None, text.split(",")):
        name, eq, val = item.partition("=")
        name = SHORT.get(name, name)
        if name not in SCHEDULE:
            raise ValueError(f"unknown schedule field {name!r} (known: {', '.join(SCHEDULE)})")
        out[name] = schedule_value(name, val if eq else "true")
    return out


def parse_cfg(text):
    """A config from the command line: comma-separated items, each
      a number       BM, BN, NUM_WARPS in turn (older lines go on with
                     MIN_BLOCKS, TMA_STAGES, PRODUCER, PERSISTENT, CTA_PROGRAMS),
      KEY=VALUE      BM, BN, a short name of cfg_str (W, ST, P, ...) or a
                     schedule field (num_warps, l2_group, ...),
      a bare name    a boolean schedule field turned on (producer, reverse_x).
    '128,128,8,producer,persistent' == 'BM=128,BN=128,W=8,P=1,PS=1'."""
    defs, sched = {}, {}
    for i, part in enumerate(text.split(",")):
        key, eq, val = part.partition("=")
        if not eq:
            try:
                int(part)
                key, val = (POSITIONAL[i] if i < len(POSITIONAL) else "?"), part
            except ValueError:
                key, val = part, "true"
        key = SHORT.get(key, key)
        if key in ("BM", "BN"):
            try:
                defs[key] = int(val)
            except ValueError:
                raise ValueError(f"{key} expects an integer, got {val!r} in {text!r}") from None
        elif key in SCHEDULE:
            sched[key] = schedule_value(key, val)
        else:
            raise ValueError(f"a config is BM,BN,NUM_WARPS then schedule fields (NAME=VALUE, or a bare "
                             f"name for true; {', '.join(SCHEDULE)}), not {text!r}")
    if "BM" not in defs or "BN" not in defs or "num_warps" not in sched:
        raise ValueError(f"a config needs BM, BN and NUM_WARPS: {text!r}")
    check_schedule(sched)
    return make_cfg(defs["BM"], defs["BN"], **sched)


# --------------------------------------------------------- config table ----
def key_text(v):
    """A match value or launch key as the C++ table compares it: JSON booleans
    as true/false, numbers and strings as written."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def load_table(path):
    """A config table (include/tile/ConfigTable.h), checked as ConfigTable::parse
    does; raises ValueError('PATH: ...'). Entries keep their JSON, plus
    "_match" (the match as text) and "_cfg" (their config)."""
    def fail(what):
        raise ValueError(f"{path}: {what}")

    def config(v, where):
        if not isinstance(v, dict):
            fail(f"{where}: expected an object")
        defs, sched = v.get("defines", {}), v.get("schedule", {})
        if not isinstance(defs, dict) or not isinstance(sched, dict):
            fail(f"{where}: defines and schedule must be objects")
        fields = {}
        for k, x in sched.items():
            if k not in SCHEDULE:
                fail(f"{where}.schedule: unknown schedule field '{k}' (known: {', '.join(SCHEDULE)})")
            try:
                fields[k] = schedule_value(k, key_text(x))
            except ValueError as e:
                fail(f"{where}.schedule: {e}")
        try:
            check_schedule(fields)
        except ValueError as e:
            fail(f"{where}.schedule: {e}")
        cfg = {"defines": dict(defs),
               "schedule": {k: fields[k] for k in SCHEDULE if k in fields and fields[k] != SCHEDULE[k]}}
        if not all(isinstance(defs.get(k), int) for k in ("BM", "BN")):
            fail(f"{where}.defines: the benchmark needs BM and BN (integers)")
        return cfg

    try:
        t = json.loads(Path(path).read_text())
    except OSError as e:
        fail(f"cannot read config table: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(str(e))
    if not isinstance(t, dict):
        fail("expected an object")
    for k in ("kernel", "arch", "size"):
        if not isinstance(t.get(k), str):
            fail(f'"{k}" must be a string')
    if not isinstance(t.get("keys"), list) or not all(isinstance(k, str) for k in t["keys"]):
        fail('"keys" must be an array of names')
    if not isinstance(t.get("entries"), list):
        fail('"entries" must be an array')
    t["_default"] = config(t["default"], "default") if "default" in t else KERNEL_DEFAULT
    for i, e in enumerate(t["entries"]):
        where = f"entries[{i}]"
        e["_cfg"] = config(e, where)
        if not isinstance(e.get("match"), dict):
            fail(f'{where}: no "match" object')
        e["_match"] = {k: key_text(v) for k, v in e["match"].items()}
        for k in t["keys"]:
            if k not in e["_match"]:
                fail(f'{where}.match: no value for key "{k}"')
        size = e.get(t["size"])
        if not isinstance(size, (int, float)) or isinstance(size, bool):
            fail(f'{where}: "{t["size"]}" must be a number')
    return t


def lookup(table, keys, size):
    """ConfigTable::lookup: among the entries whose match equals `keys` (name ->
    text), the one with the largest size at or below `size`, else the smallest;
    without a match the table's default."""
    e = lookup_entry(table, keys, size)
    return e["_cfg"] if e else table["_default"]


def lookup_entry(table, keys, size):
    """The entry lookup() takes (its JSON, "_cfg" its config), or None where
    it takes the table's default."""
    below = smallest = None
    for e in table["entries"]:
        if any(keys.get(k) != e["_match"][k] for k in table["keys"]):
            continue
        n = int(e[table["size"]])
        if n <= size and (below is None or n > int(below[table["size"]])):
            below = e
        if smallest is None or n < int(smallest[table["size"]]):
            smallest = e
    return below or smallest


def table_keys(s):
    """The launch keys of shape s, as lookup() compares them."""
    return {"T": DTYPES[s["dtype"]], "D": str(s["D"]), "CAUSAL": key_text(bool(s["causal"]))}


def table_entry(s, cfg, tf):
    """A config table entry for shape s (its measured TFLOP/s as "tflops", which
    the C++ reader ignores)."""
    return {"match": {"T": DTYPES[s["dtype"]], "D": s["D"], "CAUSAL": bool(s["causal"])},
            "seqlen": s["S"], "defines": dict(cfg["defines"]), "schedule": dict(cfg["schedule"]),
            "tflops": round(tf, 1)}


def merge_table(base, arch, tuned):
    """The table --tune writes: `base`'s default and entries (if any), each
    shape tuned now replacing its entry or added after them."""
    clean = lambda e: {k: v for k, v in e.items() if not k.startswith("_")}
    entries = [clean(e) for e in base["entries"]] if base else []
    ident = lambda e: (tuple(key_text(e["match"].get(k)) for k in TABLE_KEYS), int(e["seqlen"]))
    where = {ident(e): i for i, e in enumerate(entries)}
    for e in tuned:
        if ident(e) in where:
            entries[where[ident(e)]] = e
        else:
            entries.append(e)
    default = clean(base["default"]) if base and "default" in base else KERNEL_DEFAULT
    return {"kernel": "flash_fwd", "arch": arch, "keys": TABLE_KEYS, "size": "seqlen",
            "default": default, "entries": entries}


def format_table(t):
    """A config table as text: one entry per two lines (the layout of
    examples/attention/configs/*.json)."""
    d = lambda o: json.dumps(o, separators=(", ", ": "))
    lines = [f'{{"kernel": {d(t["kernel"])}, "arch": {d(t["arch"])},',
             f' "keys": {d(t["keys"])}, "size": {d(t["size"])},',
             f' "default": {d(t["default"])},',
             ' "entries": [' + ("" if t["entries"] else "]}")]
    for i, e in enumerate(t["entries"]):
        rest = {k: v for k, v in e.items() if k not in ("match", "seqlen", "defines", "schedule")}
        tail = "".join(f", {d(k)}: {d(v)}" for k, v in rest.items())
        lines.append(f'  {{"match": {d(e["match"])}, "seqlen": {e["seqlen"]},')
        lines.append(f'   "defines": {d(e["defines"])}, "schedule": {d(e.get("schedule", {}))}{tail}}}'
                     + ("," if i + 1 < len(t["entries"]) else ""))
    if t["entries"]:
        lines.append(" ]}")
    return "\n".join(lines) + "\n"


def flops(s):
    f = 4.0 * s["B"] * s["H"] * s["S"] * s["S"] * s["D"]
    return f / 2 if s["causal"] else f


def tflops(s, ms):
    """TFLOP/s of shape `s` done in `ms` milliseconds."""
    return flops(s) / (ms * 1e-3) / 1e12


# ---------------------------------------------------------------- tilec ----
def legacy_defines(cfg, D, causal):
    """The schedule as the -D parameters of flash_fwd.tile before the schedule
    existed (git show ff125b4:examples/attention/flash_fwd.tile), for A/B runs
    against a tilec of that time. Its causal programs took the longest query
    blocks first, heads grouped so that their K/V fill GROUP_MIB MiB (default
    16): l2_group and reverse_x together, or neither."""
    s = schedule_of(cfg)
    defs = dict(NUM_WARPS=s["num_warps"], MIN_BLOCKS=s["min_blocks"], TMA_STAGES=s["num_stages"])
    for name, param in [("tma", "TMA"), ("tma_a", "TMA_A"), ("tma_store", "TMA_STORE"),
                        ("pingpong", "PINGPONG"), ("producer", "PRODUCER"),
                        ("persistent", "PERSISTENT")]:
        if s[name] != SCHEDULE[name]:
            defs[param] = str(s[name]).lower()
    if s["cta_programs"] > 1:
        defs["CTA_PROGRAMS"] = s["cta_programs"]
    if causal and s["cta_programs"] == 1:
        if s["reverse_x"] != (s["l2_group"] > 0):
            raise RuntimeError(f"{cfg_str(cfg)}: the kernel before the schedule orders causal programs "
                               "by l2_group and reverse_x together, or neither")
        mib = s["l2_group"] * int(cfg["defines"]["BM"]) * 4 * D / 2**20
        if mib != int(mib):
            raise RuntimeError(f"{cfg_str(cfg)}: l2_group {s['l2_group']} is {mib:g} MiB of K/V per "
                               f"group at D = {D}, not a whole number of MiB (GROUP_MIB)")
        if mib != 16:
            defs["GROUP_MIB"] = int(mib)
    return defs


class Tilec:
    """Compiles flash_fwd.tile variants (cached) and times the compiler."""

    def __init__(self, exe, tile, arch, workdir, extra=None, legacy=False):
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
        # A tilec and kernel from before the schedule (issue 29) take it as
        # the kernel's -D parameters: see legacy_defines.
        self.legacy = legacy

    def defines(self, T, D, causal, cfg):
        """The -D values of a variant: the config's, then --define, then the shape's."""
        defs = dict(cfg["defines"])
        if self.legacy:
            defs.update(legacy_defines(cfg, D, causal))
        defs.update(self.extra)  # --define wins over the config
        defs.update(T=T, D=D, CAUSAL=str(bool(causal)).lower())
        return defs

    def args(self, T, D, causal, cfg):
        """tilec's command line: -D for the kernel's parameters, one flag per
        schedule field that differs from its default (-num-warps=8 -producer
        -tma=false ...; docs/schedule.md)."""
        out = [self.exe, self.tile, f"-arch={self.arch}"]
        for k, v in self.defines(T, D, causal, cfg).items():
            out += ["-D", f"{k}={v}"]
        for name, v in schedule_of(cfg).items():
            if self.legacy or v == SCHEDULE[name]:
                continue
            flag = "-" + name.replace("_", "-")
            out.append((flag if v else flag + "=false") if isinstance(v, bool) else f"{flag}={v}")
        return out

    def compile(self, T, D, causal, cfg):
        """Returns (ptx_path, manifest) or raises RuntimeError."""
        key = (T, D, bool(causal), cfg_str(cfg))
        if key not in self.cache:
            prefix = self.dir / ("ff_%s_d%d_c%d_%d" % (T, D, causal, len(self.cache)))
            r = subprocess.run(self.args(T, D, causal, cfg) + ["-o", str(prefix)],
                               capture_output=True, text=True, env=self.env)
            if r.returncode != 0:
                lines = r.stderr.strip().splitlines() or ["?"]
                msg = next((ln for ln in lines if "error" in ln), lines[0])  # not a warning before it
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
        if t["elemBytes"] != 2:
            bad(f'"elemBytes" must be 2, got {t["elemBytes"]}')
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
        if t["rowStride"] * t["elemBytes"] % 16:
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
        if stride < max(t["rowElems"], t["boxElems"]):
            raise RuntimeError(f"tensor map of argument {t['arg']} '{self.params[t['arg']]['name']}': rows "
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
    bm = int(tc.defines(DTYPES[s["dtype"]], s["D"], s["causal"], cfg)["BM"])
    grid = (math.ceil(s["S"] / bm), s["B"] * s["H"], 1)
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
    # A run-time row stride (flex_fwd, flash_fwd_bshd): rowElems 0 (rows as
    # long as the stride), the stride rowStride x the "strideArgs" arguments.
    sman = dict(man, params=params[:5] + [{"name": "k_row", "type": "i32"}, params[6]],
                tensorMaps=[dict(kv, arg=1, rowElems=0, strideArgs=[5])])
    assert len(check_tensor_maps(sman)) == 1
    for change, text in [(dict(strideArgs=[6]), '"strideArgs" names \'sm_scale\' of type f32, not an integer'),
                         (dict(strideArgs=[9]), '"strideArgs" holds 9, not a parameter index'),
                         (dict(strideArgs=5), '"strideArgs" must be an array'),
                         (dict(strideArgs=[], rowStride=32), '"rowStride" 32 is less than "boxElems" 64')]:
        raises(lambda: check_tensor_maps(dict(sman, tensorMaps=[dict(sman["tensorMaps"][0], **change)])), text)
    slaunch = KernelLauncher(sman, 0, (1, 1, 1), (128, 1, 1), 0, 0)
    slaunch.pack(1 << 40, 1 << 40, 0, 0, 0, 8, 0.125)  # [B, S, 8, 128]: rows 8 x 128 apart
    assert slaunch.row_stride(0) == 1024
    assert tensor_map_rows(sman["tensorMaps"][0], 1 << 40, 1 << 40, 2048 * 10, "map", 1024) == 10
    slaunch.pack(1 << 40, 1 << 40, 0, 0, 0, 0, 0.125)
    raises(lambda: slaunch.row_stride(0), "row stride 128 x 'k_row' = 0 is not a positive stride")

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
    # gridArgs: after the user's arguments, before the maps; a grid y over
    # 65535 is two launches, the second starting at y = 65535.
    gman = dict(man, gridArgs=["offset_y", "size_y"])
    launch = KernelLauncher(gman, 0, (2, 70000, 1), (128, 1, 1), 0, 0)
    assert launch.launches == [((2, 65535, 1), [0, 70000]), ((2, 4465, 1), [65535, 70000])], launch.launches
    kp = launch.kernel_params
    assert len(kp) == 11 and kp[7] == C.addressof(launch.grid_arg_slots[0]) and kp[9] == C.addressof(launch.maps[0][1])
    assert KernelLauncher(dict(man, gridArgs=[]), 0, (1, 1, 70000), (128, 1, 1), 0, 0).launches == \
        [((1, 1, 65535), []), ((1, 1, 4465), [])]
    raises(lambda: KernelLauncher(man, 0, (1, 70000, 1), (128, 1, 1), 0, 0), "has no \"gridArgs\"")
    # Configurations: the printed form, the command-line forms, tilec's flags.
    c = parse_cfg("128,64,8,2,2,0,1")  # an older positional line
    assert c == make_cfg(128, 64, num_warps=8, min_blocks=2, num_stages=2, persistent=True), c
    assert cfg_str(c) == "BM=128,BN=64,W=8,MB=2,ST=2,PS=1"
    assert parse_cfg("BM=128,BN=128,W=8,ST=3,P=1,PS=1") == parse_cfg("128,128,8,producer,persistent")
    assert parse_cfg("128,128,num_warps=8,producer=true,l2_group=256,reverse_x") == \
        make_cfg(128, 128, num_warps=8, producer=True, l2_group=256, reverse_x=True)
    assert cfg_str(parse_cfg("64,64,4")) == "BM=64,BN=64,W=4,ST=3" == cfg_str(KERNEL_DEFAULT)
    assert cfg_str(TUNE_CFGS[-1]) == "BM=64,BN=128,W=4,ST=4,P=1,PS=1,G=3"
    assert cfg_str(parse_cfg("64,64,4,tma=false,TA=1,TS=0,PP=0,L2=512,RX=1")) == \
        "BM=64,BN=64,W=4,ST=3,TMA=0,TA=1,TS=0,PP=0,L2=512,RX=1"
    assert all(parse_cfg(cfg_str(c)) == c for c in TUNE_CFGS)
    for text, why in [("1,2", "a config needs BM, BN and NUM_WARPS: '1,2'"),
                      ("64,64,3", "num_warps must be a power of two in [1, 32], got 3"),
                      ("64,64,4,num_stages=5", "num_stages must be an integer in [2, 4], got 5"),
                      ("64,64,4,G=3", "cta_programs > 1 needs persistent = true"),
                      ("64,64,8,G=4,P=1,PS=1", "needs 36 warps; a CTA has at most 32"),
                      ("64,64,4,warps=4", "a config is BM,BN,NUM_WARPS then schedule fields"),
                      ("64,64,4,producer=yes", "producer expects true or false, got 'yes'")]:
        try:
            parse_cfg(text)
            raise AssertionError(f"parse_cfg({text!r}) passed, expected {why!r}")
        except ValueError as e:
            assert why in str(e), (text, str(e))
    tc = Tilec.__new__(Tilec)
    tc.exe, tc.tile, tc.arch, tc.extra, tc.legacy = "tilec", "k.tile", "sm_90a", {"BN": 32}, False
    assert tc.args("bf16", 64, True, parse_cfg("128,128,8,P=1,TMA=0,L2=512,RX=1")) == [
        "tilec", "k.tile", "-arch=sm_90a", "-D", "BM=128", "-D", "BN=32", "-D", "T=bf16", "-D", "D=64",
        "-D", "CAUSAL=true", "-num-warps=8", "-tma=false", "-producer", "-l2-group=512", "-reverse-x"]
    assert tc.args("f16", 128, False, KERNEL_DEFAULT)[-1] == "CAUSAL=false"  # no schedule flags
    # A tilec from before the schedule: the schedule as the old kernel's -D.
    tc.legacy, tc.extra = True, {}
    assert tc.args("bf16", 64, True, parse_cfg("128,128,8,P=1,PS=1,L2=512,RX=1"))[3:] == [
        "-D", "BM=128", "-D", "BN=128", "-D", "NUM_WARPS=8", "-D", "MIN_BLOCKS=0", "-D", "TMA_STAGES=3",
        "-D", "PRODUCER=true", "-D", "PERSISTENT=true", "-D", "T=bf16", "-D", "D=64", "-D", "CAUSAL=true"]
    assert legacy_defines(parse_cfg("64,128,4,ST=4,P=1,PS=1,G=3,TMA=0"), 64, False) == dict(
        NUM_WARPS=4, MIN_BLOCKS=0, TMA_STAGES=4, TMA="false", PRODUCER="true", PERSISTENT="true",
        CTA_PROGRAMS=3)
    assert legacy_defines(parse_cfg("64,64,4"), 64, True)["GROUP_MIB"] == 0
    assert legacy_defines(parse_cfg("64,64,4,L2=512,RX=1"), 64, True)["GROUP_MIB"] == 8
    raises(lambda: legacy_defines(parse_cfg("64,64,4,L2=512"), 64, True), "or neither")
    # Causal candidates of --tune: grouped for L2, longest first, one program per CTA.
    causal = tune_configs(dict(causal=True, D=64))
    assert len(causal) == len(TUNE_CFGS) - 1
    assert all(schedule_of(c)["reverse_x"] and schedule_of(c)["cta_programs"] == 1 for c in causal)
    assert [schedule_of(c)["l2_group"] for c in causal[:2]] == [1024, 512]
    assert tune_configs(dict(causal=False, D=64)) is TUNE_CFGS
    # The config tables: lookup as ConfigTable::lookup; --tune's merge and layout.
    for path in sorted(CONFIGS.glob("flash_fwd.*.json")):
        t = load_table(path)
        assert format_table(merge_table(t, t["arch"], [])) == path.read_text(), f"{path}: layout"
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.json"
        e = lambda T, D, c, S, bm: dict(match=dict(T=T, D=D, CAUSAL=c), seqlen=S,
                                        defines=dict(BM=bm, BN=64), schedule={})
        table = dict(kernel="flash_fwd", arch="sm_90a", keys=TABLE_KEYS, size="seqlen",
                     default=dict(defines=dict(BM=16, BN=16), schedule=dict(num_warps=8)),
                     entries=[e("bf16", 64, False, 2048, 1), e("bf16", 64, False, 512, 2),
                              e("bf16", 64, True, 1024, 3), e("f16", 64, False, 4096, 4)])
        path.write_text(json.dumps(table))
        t = load_table(path)
        bm = lambda dt, D, c, S: lookup(t, table_keys(dict(dtype=dt, D=D, causal=c)), S)["defines"]["BM"]
        assert [bm("bf16", 64, False, S) for S in (256, 512, 1024, 2048, 16384)] == [2, 2, 2, 1, 1]
        assert bm("bf16", 64, True, 512) == 3 and bm("fp16", 64, False, 512) == 4
        assert bm("bf16", 128, False, 2048) == 16 and bm("fp16", 64, True, 2048) == 16
        assert lookup(t, {}, 0) == make_cfg(16, 16, num_warps=8)
        s = dict(dtype="bf16", D=64, causal=False, S=512)
        merged = merge_table(t, "sm_90a", [table_entry(s, make_cfg(128, 64), 1.0),
                                          table_entry(dict(s, D=128), make_cfg(64, 64), 2.0)])
        assert [x["defines"]["BM"] for x in merged["entries"]] == [1, 128, 3, 4, 64]
        path.write_text(format_table(merged))
        assert lookup(load_table(path), table_keys(s), 600)["defines"]["BM"] == 128
        for change, why in [(dict(default=dict(defines=dict(BM=64, BN=64), schedule=dict(warps=8))),
                             "default.schedule: unknown schedule field 'warps'"),
                            (dict(entries=[dict(e("bf16", 64, False, 1, 1), match=dict(T="bf16"))]),
                             'entries[0].match: no value for key "D"'),
                            (dict(entries=[dict(e("bf16", 64, False, 1, 1), schedule=dict(cta_programs=2))]),
                             "entries[0].schedule: cta_programs > 1 needs persistent = true"),
                            (dict(keys="T"), '"keys" must be an array of names')]:
            path.write_text(json.dumps(dict(table, **change)))
            try:
                load_table(path)
                raise AssertionError(f"no error, expected {why!r}")
            except ValueError as err:
                assert why in str(err), (why, str(err))
    # flex's 'unavailable: REASON' statuses: the innermost cause, one short line.
    try:
        try:
            raise ModuleNotFoundError("No module named 'triton'\nmore")
        except ImportError as inner:
            raise RuntimeError("backend='inductor' raised:") from inner
    except RuntimeError as outer:
        assert short_reason(root_cause(outer)) == "ModuleNotFoundError: No module named 'triton'"
        assert short_reason(outer) == "RuntimeError: backend='inductor' raised:"
    assert short_reason(Unavailable("compile failed: X")) == "compile failed: X"
    assert short_reason(ValueError("\n\n" + "x" * 300), 20) == "ValueError: xxxxx..."
    assert short_reason(KeyError()) == "KeyError" and "flex" in PROVIDERS
    print("self-test: ok")
    return 0


def baseline_runner(name, s):
    """fn(q, k, v) -> (o, lse or None) of a provider other than tilec."""
    if name == "triton":
        from triton_fwd import triton_runner  # bench/triton_fwd.py (needs triton)
        return triton_runner(s)
    if name == "flex":
        return flex_runner(s)
    if name == "tilec-torch":
        return tilec_torch_runner(s)
    return sdpa_runner(name, s)


def tilec_torch_runner(s):
    """The python/tilec package: plans on the first call (outside the timing)."""
    import torch
    sys.path.insert(0, str(ROOT / "python"))
    import tilec  # noqa: F401  (registers torch.ops.tilec)
    scale = s["D"] ** -0.5

    def fn(q, k, v):
        return torch.ops.tilec.attention_fwd(q, k, v, bool(s["causal"]), scale)
    return fn


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


class Unavailable(RuntimeError):
    """A provider that cannot run here; its row's status is 'unavailable: ' + the message."""


def root_cause(e):
    """The innermost exception of e's __cause__ (or dynamo's inner_exception)
    chain: dynamo and inductor wrap the error that stopped them
    (BackendCompilerFailed, InductorError, ...)."""
    seen = {id(e)}
    while True:
        inner = e.__cause__ or getattr(e, "inner_exception", None)
        if not isinstance(inner, BaseException) or id(inner) in seen:
            return e
        e = inner
        seen.add(id(e))


def short_reason(e, limit=100):
    """'ExcType: first line of the message' of e (an Unavailable: its message),
    at most `limit` characters: what an 'unavailable: ...' status says."""
    first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
    text = first if isinstance(e, Unavailable) else (
        f"{type(e).__name__}: {first}" if first else type(e).__name__)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def causal_mask(b, h, q_idx, kv_idx):
    """FlexAttention mask_mod of causal attention (one function object, so that
    the compiled flex_attention's guards on it hold across shapes)."""
    return q_idx >= kv_idx


FLEX = {}  # flex_compiled()'s state: the compiled function, or why there is none


def flex_compiled():
    """(torch.compile(flex_attention, dynamic=False), create_block_mask, the
    LSE request) -- compiled once per process (each shape of the sweep is a
    graph of its own); raises Unavailable where torch has no FlexAttention or
    cannot compile it."""
    if "why" in FLEX:
        raise Unavailable(FLEX["why"])
    if "fn" in FLEX:
        return FLEX["fn"], FLEX["create_block_mask"], FLEX["aux"]
    import torch
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except Exception as e:  # ImportError; anything else the module raises on import
        FLEX["why"] = f"torch {torch.__version__} has no flex_attention ({type(e).__name__})"
        raise Unavailable(FLEX["why"]) from e
    try:  # PyTorch >= 2.9: return_aux=AuxRequest(lse=True); before: return_lse=True
        from torch.nn.attention.flex_attention import AuxRequest
        aux = AuxRequest(lse=True)
    except Exception:
        aux = None
    # dynamic=False compiles one graph per shape (dtype, D, causal, S: up to 48
    # in a sweep), more than dynamo's recompile limit (8), past which it would
    # quietly run flex_attention eagerly: unfused, materializing S x S scores.
    # Raise the limits; where the limit can be made an error, make it one.
    try:
        import torch._dynamo
        cfg = torch._dynamo.config
        for name in ("recompile_limit", "cache_size_limit",
                     "accumulated_recompile_limit", "accumulated_cache_size_limit"):
            if hasattr(cfg, name):
                setattr(cfg, name, max(int(getattr(cfg, name)), 1024))
        if hasattr(cfg, "fail_on_recompile_limit_hit"):
            cfg.fail_on_recompile_limit_hit = True
    except Exception as e:
        print(f"  warning: flex: cannot raise dynamo's recompile limit: {short_reason(e)}",
              file=sys.stderr)
    try:
        fn = torch.compile(flex_attention, dynamic=False)
    except Exception as e:  # e.g. torch.compile not supported on this Python
        FLEX["why"] = f"torch.compile: {short_reason(root_cause(e), 80)}"
        raise Unavailable(FLEX["why"]) from e
    FLEX.update(fn=fn, create_block_mask=create_block_mask, aux=aux)
    return fn, create_block_mask, aux


def flex_runner(s):
    """fn(q, k, v) -> (o, lse) of PyTorch FlexAttention, compiled
    (flex_compiled()) on [B, H, S, D] inputs with scale D^-1/2: causal through
    a block mask of causal_mask built here, once per shape; non-causal with
    block_mask=None. Compiles for the shape first (a call on inputs of the
    shape), so that the measurement's first call runs the compiled kernel.
    Raises Unavailable (with a short reason) where that fails."""
    import torch
    flex, create_block_mask, aux = flex_compiled()
    S = s["S"]
    block_mask = None
    if s["causal"]:
        try:
            block_mask = create_block_mask(causal_mask, None, None, S, S, device="cuda")
        except Exception as e:
            raise Unavailable(f"create_block_mask: {short_reason(root_cause(e), 80)}") from e
    kwargs = dict(block_mask=block_mask, scale=s["D"] ** -0.5)
    if aux is not None:
        kwargs["return_aux"] = aux
    else:
        kwargs["return_lse"] = True

    def fn(q, k, v):
        o, extra = flex(q, k, v, **kwargs)
        return o, (extra.lse if aux is not None else extra)

    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[s["dtype"]]
    try:
        warm = [torch.randn((s["B"], s["H"], S, s["D"]), device="cuda", dtype=dt) for _ in range(3)]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*warm)
        torch.cuda.synchronize()
        del warm, out
    except Exception as e:
        dynamo_exc = getattr(getattr(torch, "_dynamo", None), "exc", None)
        compiling = dynamo_exc is not None and isinstance(
            e, getattr(dynamo_exc, "TorchDynamoException", ()))
        cause = root_cause(e)
        if isinstance(cause, ImportError):  # e.g. no Triton: no shape can compile
            FLEX["why"] = f"compile failed: {short_reason(cause, 80)}"
        raise Unavailable(f"{'compile' if compiling else 'first call'} failed: "
                          f"{short_reason(cause, 80)}") from e
    print(f"  flex: compiled {shape_key(s)} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
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


# ----------------------------------------------------------------- main ----
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tilec", default="tilec", help="tilec binary (default: tilec on PATH)")
    p.add_argument("--tile", default=str(TILE), help="flash_fwd.tile path")
    p.add_argument("--arch", help="sm_90a or sm_80 (default: from the GPU; sm_90a for --dry-run)")
    p.add_argument("--dtype", nargs="+", choices=list(DTYPES), help="default: bf16 fp16")
    p.add_argument("--head-dim", nargs="+", type=int, choices=ALL_HEAD_DIMS, default=HEAD_DIMS)
    p.add_argument("--seqlen", nargs="+", type=int, help=f"default: {SEQLENS}")
    p.add_argument("--causal", choices=["0", "1", "both"], default="both")
    p.add_argument("--providers", nargs="+", choices=PROVIDERS + EXTRA_PROVIDERS,
                   default=PROVIDERS)
    p.add_argument("--config", help="one tilec config for every shape instead of the config table: "
                   "BM,BN,NUM_WARPS then schedule fields, NAME=VALUE or a bare name for true "
                   "(e.g. 128,128,8,producer,persistent or BM=128,BN=128,W=8,P=1,PS=1)")
    p.add_argument("--config-table", metavar="PATH",
                   help="config table whose entry for each shape is run (looked up as the C++ "
                   "ConfigTable::lookup does; default examples/attention/configs/flash_fwd.ARCH.json, "
                   "ARCH sm_90a on H100/H200; 'none': flash_fwd as written, BM=BN=64 and the default "
                   "schedule); --tune starts its table from it")
    p.add_argument("--schedule", metavar="NAME=VALUE,...", default="",
                   help="schedule fields set in every config, e.g. tma=false (register prefetch "
                   "instead of TMA loads on sm_90a); a bare name is true")
    p.add_argument("--define", metavar="NAME=VALUE", action="append", default=[],
                   help="extra tilec -D (a kernel parameter) for every variant")
    p.add_argument("--legacy-defines", action="store_true",
                   help="pass the schedule as the -D parameters of flash_fwd.tile before issue 29 "
                   "(NUM_WARPS, TMA_STAGES, PRODUCER, GROUP_MIB, ...): for a --tilec and --tile "
                   "from before the schedule")
    p.add_argument("--tune", action="store_true",
                   help=f"try {len(TUNE_CFGS)} tilec configs per shape (causal: "
                   f"{len(tune_configs(dict(causal=True, D=64)))}), keep the best passing one and write "
                   "the config table flash_fwd.ARCH.json in --out")
    p.add_argument("--quick", action="store_true", help="seqlens 1k and 4k, bf16, fewer runs")
    p.add_argument("--rounds", type=int, default=1,
                   help="time every provider of a shape N times, in turn, and keep the median (default 1)")
    p.add_argument("--min-runs", type=int, default=30)
    p.add_argument("--min-ms", type=float, default=300.0, help="time at least this long per measurement")
    p.add_argument("--warmup-ms", type=float, default=200.0,
                   help="untimed calls for this long right before each measurement's timed ones, "
                   "so that the GPU's clock settles at the load of the kernel timed (default 200; "
                   "0: no warm-up, the timed calls start right after the spin kernel)")
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
    try:
        a.schedule = parse_schedule(a.schedule)
        a.config = parse_cfg(a.config) if a.config else None
        if a.config:
            check_schedule(with_schedule(a.config, a.schedule)["schedule"])
    except ValueError as e:
        p.error(str(e))
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


def load_config_table(a, arch):
    """The --config-table (default: flash_fwd.ARCH.json beside the kernel), or
    None for 'none' and where neither --tune nor a lookup needs it."""
    if a.config_table == "none" or (a.config and not a.tune):
        return None
    path = a.config_table or str(CONFIGS / f"flash_fwd.{arch}.json")
    if a.tune and not a.config_table and not Path(path).exists():
        return None
    try:
        table = load_table(path)
    except ValueError as e:
        sys.exit(f"error: {e}")
    if table["arch"] != arch:
        print(f"warning: {path} is a table for {table['arch']}, the run is for {arch}", file=sys.stderr)
    table["_path"] = path
    if table["keys"] != TABLE_KEYS or table["size"] != "seqlen":
        sys.exit(f"error: {path}: the benchmark looks up keys {TABLE_KEYS} and size seqlen, "
                 f"the table has {table['keys']} and {table['size']}")
    return table


def configs_for(a, s, table):
    """The tilec configs to run on shape s: --tune's candidates, --config, the
    table's entry for s, or flash_fwd as written (--config-table none); with
    --schedule's fields set in each."""
    if a.tune:
        cfgs = tune_configs(s)
    elif a.config:
        cfgs = [a.config]
    elif table:
        cfgs = [lookup(table, table_keys(s), s["S"])]
    else:
        cfgs = [KERNEL_DEFAULT]
    return [with_schedule(c, a.schedule) for c in cfgs]


def compile_speed(tc, a, shape_list, table):
    """Times the compiler on each configuration the run uses, after the kernel's
    own defaults (KERNEL_DEFAULT: flash_fwd as written, the issue's < 300 ms
    target) for each dtype, head dim and causality of the run."""
    def compile_key(s, cfg):
        return (DTYPES[s["dtype"]], s["D"], s["causal"], cfg)
    own = with_schedule(KERNEL_DEFAULT, a.schedule)
    todo = ([(compile_key(s, own), True) for s in shape_list] +
            [(compile_key(s, cfg), False) for s in shape_list for cfg in configs_for(a, s, table)])
    rows, seen = [], set()
    for key, default in todo:
        if key[:3] + (cfg_str(key[3]),) in seen:
            continue
        seen.add(key[:3] + (cfg_str(key[3]),))
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
    shape_list = list(shapes(a))
    workdir = tempfile.mkdtemp(prefix="tilec-bench-")
    need_tilec = "tilec" in a.providers

    if a.dry_run:
        arch = a.arch or "sm_90a"
        table = load_config_table(a, arch)
        print(f"dry run: {len(shape_list)} shapes x {a.providers}, arch {arch}")
        for s in shape_list:
            cfgs = configs_for(a, s, table) if need_tilec else []
            print(f"  {shape_key(s):28s} B={s['B']:<3d} H={s['H']:<3d} {flops(s)/1e12:7.2f} TFLOP  tilec {', '.join(map(cfg_str, cfgs))}")
        if need_tilec:
            tc = Tilec(a.tilec, a.tile, arch, workdir, a.define, a.legacy_defines)
            print("tilec -emit=ptx compile time (wall, median of %d; target < 300 ms):" % a.compile_runs)
            rows = compile_speed(tc, a, shape_list, table)
            return 1 if any("error" in r for r in rows) else 0
        return 0

    import torch
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA device (use --dry-run on a machine without a GPU)")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is true fp32
    torch.set_float32_matmul_precision("highest")
    cap = torch.cuda.get_device_capability()
    arch = a.arch or ("sm_90a" if cap == (9, 0) else "sm_80")
    table = load_config_table(a, arch)
    props = torch.cuda.get_device_properties(0)
    meta = {"device": torch.cuda.get_device_name(), "capability": list(cap), "arch": arch,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "argv": sys.argv[1:],
            "warmup_ms": a.warmup_ms, "config_table": table["_path"] if table else None,
            "l2_mib": getattr(props, "L2_cache_size", 50 << 20) / 2**20}
    if need_tilec:
        import cupy
        meta["cupy"] = cupy.__version__
    print(f"device: {meta['device']} (sm_{cap[0]}{cap[1]}, L2 {meta['l2_mib']:.0f} MiB)  "
          f"torch {meta['torch']} (CUDA {meta['cuda']})  cupy {meta.get('cupy', '-')}  arch {arch}")

    compile_rows, tc = [], None
    if need_tilec:
        tc = Tilec(a.tilec, a.tile, arch, workdir, a.define, a.legacy_defines)
        meta["tilec"] = tc.exe
        print("tilec -emit=ptx compile time (wall, median of %d; target < 300 ms):" % a.compile_runs)
        compile_rows = compile_speed(tc, a, shape_list, table)

    rows, tuned_entries = [], []
    print("  ".join(COLS))
    for s in shape_list:
        shape_rows = []  # (best row, its runner) per provider, for --rounds
        inputs = make_inputs(s, meta["l2_mib"] * 2**20)
        ref = reference(*inputs[0], s["causal"])
        base = {k: int(s[k]) if k == "causal" else s[k] for k in ("dtype", "D", "causal", "S", "B", "H")}
        for p in a.providers:
            cands = configs_for(a, s, table) if p == "tilec" else [None]
            best, passed, runners, cfgs = None, [], {}, {}
            for cfg in cands:
                row = dict(base, provider=p, config=cfg_str(cfg) if cfg else "")
                cfgs[id(row)] = cfg
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
                    if p == "flex":  # no FlexAttention, or compiling / running it failed
                        row["status"] = "unavailable: " + short_reason(
                            e if isinstance(e, Unavailable) else root_cause(e))
                    else:
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
                    tuned_entries.append(table_entry(s, cfgs[id(best)], best["tflops"]))
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
    tuned = merge_table(table, arch, tuned_entries) if tuned_entries else None
    write_outputs(out, meta, compile_rows, rows, tuned)
    print(f"\nwrote {out}/results.json, results.csv, attention_fwd.png"
          + (f", flash_fwd.{arch}.json (the config table: best config per tuned shape)" if tuned else ""))
    bad = [r for r in rows if r["status"] in ("FAIL", "error")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
