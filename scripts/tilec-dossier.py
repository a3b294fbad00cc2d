#!/usr/bin/env python3
"""tilec-dossier: what a kernel is, how each of its configurations compiles,
and (with a GPU) how it checks and runs here, as dossier.json + dossier.md.

  python3 scripts/tilec-dossier.py KERNEL.tile [--table CONFIGS.json]
      [--arch sm_90a|sm_80] [--tilec PATH] [--ptxas PATH] [--bin DIR]
      [--out DIR] [--max-configs N] [--no-gpu] [--quick]

For each configuration of the kernel's config table (configs/NAME.ARCH.json
beside it: every distinct entry, then the default) it runs
`tilec -emit=ptx` (the compile time) and `ptxas -v` on that PTX (registers,
spills, stack, shared memory, the ptxas time). It records the source's path,
sha256 and git commit, the tilec / LLVM / ptxas versions and, when
nvidia-smi sees a GPU, its name, driver and CUDA version, then runs the
parity test binaries (exit status, their check lines) and a few timed runs
(flash_fwd_jit's median time and TFLOP/s) from --bin (default: beside
tilec). Without a GPU (or with --no-gpu) those parts say "no GPU".
Exit status: 0 when every configuration compiled and every parity run
passed, 1 otherwise, 2 for bad arguments.
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

NO_GPU = "no GPU"


def run(cmd, timeout=900, cwd=None):
    """(exit status, seconds, stdout + stderr) of `cmd`; 127 if missing."""
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, cwd=cwd)
        out, rc = r.stdout.decode(errors="replace"), r.returncode
    except FileNotFoundError:
        out, rc = f"{cmd[0]}: not found", 127
    except subprocess.TimeoutExpired:
        out, rc = f"timed out after {timeout} s", 124
    return rc, round(time.monotonic() - t0, 3), out


def first_line(text, pattern):
    m = re.search(pattern, text, re.M)
    return m.group(0).strip() if m else None


def versions(tilec, ptxas):
    v = {"tilec": None, "llvm": None, "ptxas": None}
    rc, _, out = run([tilec, "--version"], timeout=60)
    m = re.search(r"tilec (\S+) \(LLVM ([^)]+)\)", out)
    if rc == 0 and m:
        v["tilec"], v["llvm"] = m.group(1), m.group(2)
    else:
        v["tilec"] = f"unknown ({out.strip()[:200]})"
    if ptxas:
        rc, _, out = run([ptxas, "--version"], timeout=60)
        v["ptxas"] = (first_line(out, r".*release.*") or out.strip().splitlines()[-1]
                      if rc == 0 and out.strip() else "unknown")
    else:
        v["ptxas"] = "not found"
    return v


def gpu_info(force_off):
    """nvidia-smi's view, or None without a GPU."""
    if force_off or not shutil.which("nvidia-smi"):
        return None
    rc, _, out = run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
                      "--format=csv,noheader"], timeout=60)
    if rc != 0 or not out.strip():
        return None
    name, driver, cc = [x.strip() for x in out.strip().splitlines()[0].split(",")[:3]]
    rc, _, banner = run(["nvidia-smi"], timeout=60)
    cuda = first_line(banner, r"CUDA Version: *[0-9.]+")
    return {"name": name, "driver": driver, "compute_capability": cc,
            "cuda_driver_api": cuda.split(":")[1].strip() if cuda else "unknown"}


def source_info(kernel, bin_dir):
    with open(kernel, "rb") as f:
        data = f.read()
    info = {"path": os.path.abspath(kernel), "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data), "commit": None}
    rc, _, out = run(["git", "-C", os.path.dirname(os.path.abspath(kernel)),
                      "rev-parse", "HEAD"], timeout=60)
    if rc == 0:
        info["commit"] = out.strip()
        rc, _, st = run(["git", "-C", os.path.dirname(os.path.abspath(kernel)), "status",
                         "--porcelain", "--", os.path.abspath(kernel)], timeout=60)
        info["modified_since_commit"] = rc == 0 and bool(st.strip())
    else:  # a bundle: BUILD-INFO's "source:" line names the commit it was built from
        build_info = os.path.join(bin_dir, "..", "BUILD-INFO")
        if os.path.exists(build_info):
            with open(build_info) as f:
                line = next((l for l in f if l.startswith("source:")), None)
            info["commit"] = line.split("(")[-1].rstrip(")\n") if line else None
            info["commit_from"] = "BUILD-INFO"
    return info


def table_configs(table):
    """Distinct (defines, schedule) of the table's entries, then its default."""
    seen, out = set(), []
    for e in table.get("entries", []):
        defines = dict(e.get("match", {}), **e.get("defines", {}))
        c = {"defines": defines, "schedule": e.get("schedule", {}),
             "seqlen": e.get("seqlen"), "table_tflops": e.get("tflops")}
        key = json.dumps([c["defines"], c["schedule"]], sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(c)
    d = table.get("default")
    if d is not None:
        out.append({"defines": d.get("defines", {}), "schedule": d.get("schedule", {}),
                    "seqlen": None, "table_tflops": None, "default": True})
    return out


def define_flags(defines):
    flags = []
    for k, v in sorted(defines.items()):
        v = ("true" if v else "false") if isinstance(v, bool) else v
        flags += ["-D", f"{k}={v}"]
    return flags


def ptxas_stats(text):
    """What `ptxas -v` says of the first kernel."""
    def num(pattern):
        m = re.search(pattern, text)
        return int(m.group(1)) if m else None
    return {"registers": num(r"Used (\d+) registers"),
            "spill_stores_bytes": num(r"(\d+) bytes spill stores"),
            "spill_loads_bytes": num(r"(\d+) bytes spill loads"),
            "stack_frame_bytes": num(r"(\d+) bytes stack frame"),
            "static_smem_bytes": num(r"(\d+) bytes smem")}


def compile_config(i, c, args, tilec, ptxas, work):
    name = f"config{i}"
    sched_path = os.path.join(work, name + ".schedule.json")
    with open(sched_path, "w") as f:
        json.dump(c["schedule"], f)
    out = os.path.join(work, name)
    cmd = [tilec, args.kernel, f"-arch={args.arch}", "-emit=ptx", f"-schedule={sched_path}",
           "-o", out] + define_flags(c["defines"])
    rc, secs, log = run(cmd, timeout=600)
    r = dict(c, flags=" ".join(["-arch=" + args.arch] + define_flags(c["defines"])),
             compile_seconds=secs, compiled=rc == 0,
             warnings=re.findall(r"^.*warning:.*$", log, re.M)[:4])
    if rc != 0:
        r["error"] = first_line(log, r".*error:.*") or log.strip()[-500:]
        return r
    with open(out + ".manifest.json") as f:
        m = json.load(f)
    r.update(schedule_string=m.get("schedule"), block_size=m.get("blockSize"),
             dynamic_smem_bytes=m.get("sharedMemoryBytes"),
             tensor_maps=len(m.get("tensorMaps", [])), grid_args=m.get("gridArgs"),
             requires=[f"{q['text']} ({q['loc']})" for q in m.get("requires", [])])
    if not ptxas:
        r["ptxas"] = "ptxas not found"
        return r
    rc, secs, log = run([ptxas, f"-arch={args.arch}", "-v", out + ".ptx", "-o",
                         out + ".cubin"], timeout=900)
    r["ptxas_seconds"] = secs
    r["ptxas_ok"] = rc == 0
    if rc == 0:
        r.update(ptxas_stats(log))
    else:
        r["ptxas_error"] = first_line(log, r".*(error|fatal).*") or log.strip()[-500:]
    return r


def gpu_runs(args, bin_dir, kernel):
    """(parity, bench) results of flash_fwd's test binaries."""
    jit = os.path.join(bin_dir, "flash_fwd_jit")
    parity_cmds = [
        ("flash_fwd_jit bf16 D=128", [jit, kernel, "--dtype", "bf16", "--seqlen", "1000",
                                      "--batch-heads", "8", "--head-dim", "128"]),
        ("flash_fwd_jit f16 causal D=64", [jit, kernel, "--dtype", "f16", "--causal",
                                           "--seqlen", "777", "--batch-heads", "6",
                                           "--head-dim", "64"]),
        ("flash_fwd_jit f32 D=80", [jit, kernel, "--dtype", "f32", "--seqlen", "300",
                                    "--batch-heads", "4", "--head-dim", "80"]),
        ("tile-gpu-attention-api", [os.path.join(bin_dir, "tile-gpu-attention-api")]),
    ]
    if not args.quick:
        parity_cmds.append(("tile-gpu-tests --quick", [os.path.join(bin_dir, "tile-gpu-tests"),
                                                        "--tile", kernel, "--quick"]))
    parity = []
    for name, cmd in parity_cmds:
        if not os.path.exists(cmd[0]):
            parity.append({"name": name, "result": "binary not found", "command": " ".join(cmd)})
            continue
        rc, secs, out = run(cmd)
        parity.append({"name": name, "command": " ".join(cmd), "exit": rc, "seconds": secs,
                       "result": "PASS" if rc == 0 else "skipped" if rc == 77 else "FAIL",
                       "checks": re.findall(r"^check .*$", out, re.M)[:8],
                       "tail": out.strip().splitlines()[-3:]})
    shapes = [("bf16", 64, False, 4096, 32), ("bf16", 128, False, 4096, 32),
              ("bf16", 128, True, 4096, 32)]
    if not args.quick:
        shapes += [("bf16", 128, False, 16384, 16), ("f16", 64, True, 16384, 16)]
    bench = []
    for dtype, d, causal, s, bh in shapes:
        cmd = [jit, kernel, "--no-check", "--dtype", dtype, "--head-dim", str(d),
               "--seqlen", str(s), "--batch-heads", str(bh), "--iters", "20"]
        cmd += ["--causal"] if causal else []
        if not os.path.exists(jit):
            bench.append({"shape": " ".join(cmd[2:]), "result": "binary not found"})
            continue
        rc, secs, out = run(cmd)
        m = re.search(r"time \w+: ([0-9.]+) ms \(median of (\d+)\), ([0-9.]+) TFLOP/s", out)
        bench.append({"dtype": dtype, "head_dim": d, "causal": causal, "seqlen": s,
                      "batch_heads": bh, "exit": rc,
                      "median_ms": float(m.group(1)) if m else None,
                      "tflops": float(m.group(3)) if m else None,
                      "kernel_line": first_line(out, r"^kernel: .*")})
    return parity, bench


def markdown(d):
    L = [f"# Kernel dossier: {os.path.basename(d['source']['path'])}", "",
         f"Written {d['written']} on {d['host']}.", "",
         "## Source and toolchain", "",
         f"- source: `{d['source']['path']}`, sha256 `{d['source']['sha256']}`",
         f"- commit: {d['source']['commit'] or 'unknown'}",
         f"- tilec {d['versions']['tilec']}, LLVM {d['versions']['llvm']}",
         f"- ptxas: {d['versions']['ptxas']}",
         f"- target: {d['arch']}; config table: `{d['table']}`"]
    g = d["gpu"]
    L.append(f"- GPU: {g}" if isinstance(g, str) else
             f"- GPU: {g['name']} (cc {g['compute_capability']}), driver {g['driver']}, "
             f"CUDA {g['cuda_driver_api']}")
    L += ["", "## Configurations", "",
          "| # | defines | schedule | compile s | regs | spills st/ld B | stack B | smem B | block |",
          "|---|---------|----------|-----------|------|----------------|---------|--------|-------|"]
    for i, c in enumerate(d["configs"]):
        text = lambda v: str(v).lower() if isinstance(v, bool) else str(v)
        defs = " ".join(f"{k}={text(v)}" for k, v in sorted(c["defines"].items()))
        sch = ",".join(f"{k}={text(v)}" for k, v in sorted(c["schedule"].items())) or "defaults"
        if not c["compiled"]:
            L.append(f"| {i} | {defs} | {sch} | {c['compile_seconds']} | error: {c.get('error')} | | | | |")
            continue
        spills = (f"{c.get('spill_stores_bytes')}/{c.get('spill_loads_bytes')}"
                  if c.get("ptxas_ok") else c.get("ptxas_error") or c.get("ptxas", ""))
        L.append(f"| {i} | {defs} | {sch} | {c['compile_seconds']} | {c.get('registers', '')} "
                 f"| {spills} | {c.get('stack_frame_bytes', '')} | {c.get('dynamic_smem_bytes')} "
                 f"| {c.get('block_size')} |")
    # What every launch checks (require(...) in the kernel, language.md).
    reqs = sorted({q for c in d["configs"] for q in c.get("requires", [])})
    L += ["", "## Launch preconditions", ""]
    L += [f"- `{q}`" for q in reqs] if reqs else ["none (the kernel states no require(...))"]
    L += ["", "## Parity", ""]
    if isinstance(d["parity"], str):
        L.append(d["parity"])
    else:
        for p in d["parity"]:
            L.append(f"- {p['name']}: **{p['result']}**" +
                     "".join(f"\n  - `{c}`" for c in p.get("checks", [])))
    L += ["", "## Benchmarks", ""]
    if isinstance(d["bench"], str):
        L.append(d["bench"])
    else:
        L += ["| dtype | D | causal | S | B·H | median ms | TFLOP/s |",
              "|-------|---|--------|---|-----|-----------|---------|"]
        for b in d["bench"]:
            L.append(f"| {b.get('dtype')} | {b.get('head_dim')} | {b.get('causal')} | "
                     f"{b.get('seqlen')} | {b.get('batch_heads')} | {b.get('median_ms')} | "
                     f"{b.get('tflops')} |")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernel")
    ap.add_argument("--table", help="config table (default: configs/NAME.ARCH.json beside the kernel)")
    ap.add_argument("--arch", help="sm_90a or sm_80 (default: the GPU's, else sm_90a)")
    ap.add_argument("--tilec", default=shutil.which("tilec") or "tilec")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or (
        "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None))
    ap.add_argument("--bin", help="where the GPU test binaries are (default: beside tilec)")
    ap.add_argument("--out", default=".", help="directory for dossier.json and dossier.md")
    ap.add_argument("--max-configs", type=int, default=0, help="compile at most N (0: all)")
    ap.add_argument("--no-gpu", action="store_true", help="record 'no GPU' even if one is present")
    ap.add_argument("--quick", action="store_true", help="fewer parity runs and benchmark shapes")
    args = ap.parse_args()
    if not os.path.isfile(args.kernel):
        print(f"tilec-dossier: error: no kernel file '{args.kernel}'", file=sys.stderr)
        return 2
    tilec = shutil.which(args.tilec) or args.tilec
    if not os.access(tilec, os.X_OK):
        print(f"tilec-dossier: error: tilec '{args.tilec}' is not executable", file=sys.stderr)
        return 2
    ptxas = args.ptxas if args.ptxas and os.access(args.ptxas, os.X_OK) else None
    bin_dir = args.bin or os.path.dirname(os.path.abspath(tilec))
    gpu = gpu_info(args.no_gpu)
    if not args.arch:
        cc = gpu["compute_capability"].replace(".", "") if gpu else "90"
        args.arch = "sm_90a" if cc == "90" else f"sm_{cc}"
    stem = os.path.splitext(os.path.basename(args.kernel))[0]
    table_path = args.table or os.path.join(os.path.dirname(os.path.abspath(args.kernel)),
                                            "configs", f"{stem}.{args.arch}.json")
    configs = []
    if os.path.exists(table_path):
        with open(table_path) as f:
            configs = table_configs(json.load(f))
    else:
        table_path = f"none ({table_path} not found): the kernel's defaults"
        configs = [{"defines": {}, "schedule": {}, "seqlen": None, "table_tflops": None}]
    if args.max_configs > 0:
        configs = configs[:args.max_configs]

    os.makedirs(args.out, exist_ok=True)
    d = {"dossier_version": 1,
         "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
         "host": os.uname().nodename, "arch": args.arch, "table": table_path,
         "source": source_info(args.kernel, bin_dir), "versions": versions(tilec, ptxas),
         "gpu": gpu if gpu else NO_GPU}
    with tempfile.TemporaryDirectory(prefix="tilec-dossier.") as work:
        d["configs"] = [compile_config(i, c, args, tilec, ptxas, work)
                        for i, c in enumerate(configs)]
    if gpu:
        d["parity"], d["bench"] = gpu_runs(args, bin_dir, os.path.abspath(args.kernel))
    else:
        d["parity"] = d["bench"] = NO_GPU
    with open(os.path.join(args.out, "dossier.json"), "w") as f:
        json.dump(d, f, indent=2, sort_keys=False)
        f.write("\n")
    with open(os.path.join(args.out, "dossier.md"), "w") as f:
        f.write(markdown(d))
    ok = all(c["compiled"] and c.get("ptxas_ok", True) for c in d["configs"])
    if not isinstance(d["parity"], str):
        ok = ok and all(p["result"] in ("PASS", "skipped") for p in d["parity"])
    print(f"tilec-dossier: {len(d['configs'])} configurations, "
          f"{'GPU ' + gpu['name'] if gpu else NO_GPU}; wrote "
          f"{os.path.join(args.out, 'dossier.json')} and dossier.md: {'ok' if ok else 'FAILURES'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
