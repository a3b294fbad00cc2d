"""The tilec compiler driver of attention_fwd.py: compile flash_fwd.tile for a
configuration (cached per process) and time the compiler."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from fwd_config import SCHEDULE, cfg_str, schedule_of

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


