#!/usr/bin/env python3
"""A/B timing of tilec variants in one process, interleaved.

Separate benchmark processes on the same H100 differ by up to ~8 % (clocks,
allocation, L2 state), more than most single changes are worth. This script
times several variants (a tilec binary and a configuration each) on the same
inputs, round-robin for --rounds rounds, and reports each variant's median
TFLOP/s over the rounds and its ratio to the first variant.

  python3 bench/compare.py --variant A=/tmp/tilec-old:128,128,8,producer \\
      --variant B=/tmp/tilec-new:128,128,8,producer --head-dim 64 --seqlen 2048 8192

A variant is NAME=TILEC[@KERNEL]:CONFIG[:NAME=VALUE,...]: CONFIG as
attention_fwd.py's --config (BM,BN,NUM_WARPS then schedule fields, e.g.
128,128,8,producer,persistent,l2_group=512,reverse_x), passed to tilec as
schedule flags, or `table` / `table=PATH`: each shape's entry of the config
table (default examples/attention/configs/flash_fwd.ARCH.json); the optional list is passed as -D defines (kernel
parameters); KERNEL, a .tile file in place of examples/attention/flash_fwd.tile,
lets a tilec from before a kernel change run the kernel it understands, and
--legacy-defines NAME passes variant NAME's schedule as the -D parameters of
the kernel before the schedule (NUM_WARPS, TMA_STAGES, PRODUCER, GROUP_MIB,
...). Parity is checked once per variant and shape against the same
reference as attention_fwd.py.
"""
import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention_fwd as af  # noqa: E402


def parse_variant(text):
    name, sep, rest = text.partition("=")
    parts = rest.split(":")
    if not sep or not name or len(parts) not in (2, 3):
        raise ValueError(f"a variant is NAME=TILEC[@KERNEL]:CONFIG[:NAME=VALUE,...], got {text!r}")
    defines = dict(d.split("=", 1) for d in parts[2].split(",")) if len(parts) == 3 and parts[2] else {}
    exe, _, kernel = parts[0].partition("@")
    what, eq, path = parts[1].partition("=")
    if what == "table":  # each shape's entry of a config table
        return name, (exe, kernel or af.TILE), ("table", path if eq else None), defines
    return name, (exe, kernel or af.TILE), af.parse_cfg(parts[1]), defines


def table_path(cfg, arch):
    """The config table of a `table` variant, else None."""
    if isinstance(cfg, tuple) and cfg[0] == "table":
        return cfg[1] or str(af.CONFIGS / f"flash_fwd.{arch}.json")
    return None


def config_for(cfg, s, arch, tables):
    """A variant's config for shape s: its own, or its config table's entry."""
    path = table_path(cfg, arch)
    return af.lookup(tables[path], af.table_keys(s), s["S"]) if path else cfg


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", action="append", required=True,
                   help="NAME=TILEC[@KERNEL]:CONFIG[:NAME=VALUE,...]; CONFIG 'table' or 'table=PATH': "
                   "each shape's config table entry")
    p.add_argument("--dtype", nargs="+", choices=list(af.DTYPES), default=["bf16"])
    p.add_argument("--head-dim", nargs="+", type=int, choices=af.HEAD_DIMS, default=[128])
    p.add_argument("--seqlen", nargs="+", type=int, default=[2048, 8192])
    p.add_argument("--causal", choices=["0", "1", "both"], default="both")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-runs", type=int, default=10)
    p.add_argument("--min-ms", type=float, default=50.0)
    p.add_argument("--warmup-ms", type=float, default=200.0, help="as attention_fwd.py's --warmup-ms (default 200)")
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("--legacy-defines", metavar="NAME", action="append", default=[],
                   help="variant NAME is a tilec (and --variant's @KERNEL) from before the schedule: "
                   "its schedule goes as the old kernel's -D parameters (attention_fwd.legacy_defines)")
    p.add_argument("--time-failing", action="store_true",
                   help="time variants that fail the parity check too (bounds from prototypes that drop work)")
    a = p.parse_args(argv)
    if a.warmup_ms < 0:
        p.error(f"--warmup-ms wants a time >= 0, got {a.warmup_ms}")
    try:
        variants = [parse_variant(v) for v in a.variant]
    except ValueError as e:
        p.error(str(e))
    tables = {}
    try:
        for _, _, cfg, _ in variants:
            path = table_path(cfg, a.arch)
            if path and path not in tables:
                tables[path] = af.load_table(path)
    except ValueError as e:
        p.error(str(e))
    unknown = set(a.legacy_defines) - {name for name, *_ in variants}
    if unknown:
        p.error(f"--legacy-defines names no variant: {', '.join(sorted(unknown))}")
    import torch
    sys.stdout.reconfigure(line_buffering=True)
    print(f"device: {torch.cuda.get_device_name()}")
    work = tempfile.mkdtemp(prefix="tilec-compare-")
    compilers = {}
    for name, (exe, kernel), cfg, defs in variants:
        compilers[name] = af.Tilec(exe, kernel, a.arch, Path(work) / name, extra=defs,
                                   legacy=name in a.legacy_defines)
        (Path(work) / name).mkdir()
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
    for s in af.shapes(a):
        inputs = af.make_inputs(s, l2)
        ref = af.reference(*inputs[0], s["causal"])
        fns, times = {}, {}
        for name, exe, cfg, defs in variants:
            try:
                fn = af.tilec_runner(compilers[name], s, config_for(cfg, s, a.arch, tables))
                o, lse = fn(*inputs[0])
                torch.cuda.synchronize()
                par = af.parity(o, lse, *ref)
                if par["rel_l2"] > af.RTOL:
                    print(f"  {name}: parity FAIL rel_l2 {par['rel_l2']:.3g}"
                          + (" (timed anyway: --time-failing)" if a.time_failing else ""))
                    if not a.time_failing:
                        continue
                fns[name], times[name] = fn, []
            except RuntimeError as e:
                print(f"  {name}: {e}")
        for _ in range(a.rounds):
            for name, fn in fns.items():
                times[name].append(af.time_ms(fn, inputs, a.min_runs, a.min_ms, a.warmup_ms)[0])
        base = None
        line = f"{s['dtype']} D={s['D']} causal={int(s['causal'])} S={s['S']:5d}:"
        for name in fns:
            tf = af.tflops(s, statistics.median(times[name]))
            spread = (max(times[name]) - min(times[name])) / statistics.median(times[name])
            base = base or tf
            line += f"  {name} {tf:6.1f} (x{tf / base:.3f}, spread {100 * spread:.0f}%)"
        print(line)
        del inputs, ref


if __name__ == "__main__":
    main()
