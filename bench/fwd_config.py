"""Configurations of flash_fwd.tile for attention_fwd.py: the sweep's constants, block sizes and
schedules (--config strings), the config tables and FLOP counts."""
import json
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
            "cta_programs": 1, "l2_group": 0, "reverse_x": False, "index_ahead": False,
            "cp_async": False}
# (lo, hi, power of two) of the integer fields, as lib/Runtime/Schedule.cpp checks them.
SCHEDULE_RANGES = {"num_warps": (1, 32, True), "min_blocks": (0, 32, False),
                   "num_stages": (2, 4, False), "cta_programs": (1, 8, False),
                   "l2_group": (0, 1 << 20, False)}
# The short names of the printed config ("BM=128,BN=128,W=8,ST=3,P=1,PS=1");
# W and ST are always printed, the others where they differ from the default.
SHORT = {"W": "num_warps", "MB": "min_blocks", "ST": "num_stages", "TMA": "tma", "TA": "tma_a",
         "TS": "tma_store", "PP": "pingpong", "P": "producer", "PS": "persistent",
         "G": "cta_programs", "L2": "l2_group", "RX": "reverse_x", "IA": "index_ahead",
         "CA": "cp_async"}
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


def finish_shape_args(a, seqlens=SEQLENS):
    """--quick (bf16, seqlens 1k and 4k, fewer and shorter runs) and the
    defaults of --seqlen and --dtype, on parsed arguments `a`."""
    if a.quick:
        a.seqlen = a.seqlen or [1024, 4096]
        a.dtype = a.dtype or ["bf16"]
        a.min_runs, a.min_ms = min(a.min_runs, 10), min(a.min_ms, 50.0)
        a.warmup_ms = min(a.warmup_ms, 50.0)
    a.seqlen = a.seqlen or seqlens
    a.dtype = a.dtype or list(DTYPES)
    return a


def shapes(a):
    """The sweep of parsed arguments `a`: dtype x head dim x causal x seqlen,
    batch = TOKENS / seqlen, heads = HIDDEN / head dim."""
    causals = {"0": [False], "1": [True], "both": [False, True]}[a.causal]
    for dt in a.dtype:
        for D in a.head_dim:
            for c in causals:
                for S in a.seqlen:
                    yield dict(dtype=dt, D=D, causal=c, S=S, B=max(1, TOKENS // S), H=HIDDEN // D)
