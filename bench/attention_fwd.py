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

The code: fwd_config.py (configurations, config tables), fwd_tilec.py (the
compiler driver), fwd_launch.py (driver launches), fwd_providers.py (Triton,
SDPA, FlexAttention), fwd_measure.py (timing, parity, output), fwd_selftest.py;
this file parses the arguments and runs the sweep.

torch, cupy and matplotlib are imported lazily (and libcuda.so.1 is loaded at
the first tilec launch), so --help, --dry-run and --self-test work on a machine
without them.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

# The parts (modules beside this file, on sys.path with it).
from fwd_config import (ALL_HEAD_DIMS, CONFIGS, DTYPES, EXTRA_PROVIDERS, HEAD_DIMS,
                        KERNEL_DEFAULT, PROVIDERS, ROOT, SEQLENS, TABLE_KEYS, TILE,
                        TUNE_CFGS, cfg_str, check_schedule, flops, load_table, lookup,
                        merge_table, parse_cfg, parse_schedule, shape_key, table_entry,
                        finish_shape_args, shapes,
                        table_keys, tune_configs, with_schedule)
from fwd_tilec import Tilec
from fwd_launch import check_tensor_maps, tilec_runner
from fwd_selftest import self_test
from fwd_providers import Unavailable, baseline_runner, root_cause, short_reason
from fwd_measure import (COLS, fmt, interleaved_rounds, make_inputs, measure, print_table,
                         reference, write_outputs)
# Everything else they define, for the other benchmarks (import attention_fwd as fwd).
from fwd_config import *  # noqa: F401,F403
from fwd_tilec import *  # noqa: F401,F403
from fwd_launch import *  # noqa: F401,F403
from fwd_providers import *  # noqa: F401,F403
from fwd_measure import *  # noqa: F401,F403


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
    return finish_shape_args(a)


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

