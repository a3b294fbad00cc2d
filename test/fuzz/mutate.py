#!/usr/bin/env python3
"""Mutation fuzzing of the .tile frontend.

For every examples/**/*.tile, generates seeded mutants (truncations, token
deletions, byte flips, byte insertions, token duplications and swaps), runs
`tilec MUTANT -emit=tile` on each and fails when any run
  - dies from a signal or exits with status >= 128 (crash, assert, abort),
  - does not finish within the timeout (hang), or
  - fails (non-zero status) without printing a `file:line:col: error:` line.
Prints the counts per outcome; failing mutants are kept in --keep DIR.
With --write DIR it runs nothing: it writes the mutants into DIR, for a
libFuzzer build to replay (scripts/sanitize.sh). --examples may repeat.

  mutate.py --tilec build/bin/tilec --examples examples --mutants 200 --seed 1
  mutate.py --write /tmp/mutants --examples examples --examples test --mutants 20
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

DIAG = re.compile(rb":\d+:\d+: error:")
TOKEN = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?|\S")
INTERESTING = [b"{", b"}", b"(", b")", b"[", b"]", b"<", b">", b",", b";",
               b":", b"?", b"=", b"/*", b"*/", b"//", b"None", b"let", b"var",
               b"for", b"fn", b"kernel", b"return", b"if", b"else", b"-",
               b"!", b"&&", b"9999999999999999999999", b"1e", b"0.5", b"\x00",
               b"\xff", b"\n", b"inf", b"[:, None]", b"x", b"range(0, 1)"]


def mutants(src, count, rng):
    """Yields (kind, bytes) mutants of `src`."""
    toks = [m.span() for m in TOKEN.finditer(src)]
    n = len(src)
    for i in range(count):
        yield "truncate", src[: (i * n) // count]
    for _ in range(count):
        a, b = rng.choice(toks)
        yield "delete-token", src[:a] + src[b:]
    for _ in range(count // 2):
        i = rng.randrange(len(toks))
        j = min(len(toks) - 1, i + rng.randrange(1, 8))
        yield "delete-span", src[: toks[i][0]] + src[toks[j][1]:]
    for _ in range(count):
        buf = bytearray(src)
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(n)] = rng.randrange(256)
        yield "flip-bytes", bytes(buf)
    for _ in range(count):
        at = rng.randrange(n + 1)
        if rng.random() < 0.5:
            ins = rng.choice(INTERESTING)
        else:
            ins = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
        yield "insert", src[:at] + ins + src[at:]
    for _ in range(count // 2):
        a, b = rng.choice(toks)
        c, _ = rng.choice(toks)
        yield "duplicate-token", src[:c] + src[a:b] + b" " + src[c:]
    for _ in range(count // 2):
        (a, b), (c, d) = sorted(rng.sample(toks, 2))
        yield "swap-tokens", src[:a] + src[c:d] + src[b:c] + src[a:b] + src[d:]


def run(tilec, path, timeout):
    """Returns (outcome, detail)."""
    try:
        r = subprocess.run([tilec, path, "-emit=tile"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", b""
    if r.returncode < 0 or r.returncode >= 128:
        return "crash", r.stderr[-2000:]
    if r.returncode == 0:
        return "accepted", b""
    if DIAG.search(r.stderr):
        return "error", b""
    return "no-diagnostic", r.stderr[-2000:]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilec")
    ap.add_argument("--examples", required=True, action="append",
                    help="folder searched for *.tile (may repeat)")
    ap.add_argument("--mutants", type=int, default=100,
                    help="mutants per strategy and file (about 5x this per file)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", help="folder for failing mutants")
    ap.add_argument("--write", metavar="DIR",
                    help="write the mutants into DIR and run nothing")
    args = ap.parse_args()
    if not args.tilec and not args.write:
        ap.error("one of --tilec and --write is required")

    files = sorted(os.path.join(d, f) for root in args.examples
                   for d, _, fs in os.walk(root)
                   for f in fs if f.endswith(".tile"))
    if not files:
        print("mutate.py: no .tile files under", " ".join(args.examples))
        return 1
    if args.write:
        os.makedirs(args.write, exist_ok=True)
        n = 0
        for fi, path in enumerate(files):
            rng = random.Random(args.seed * 1000003 + fi)
            src = open(path, "rb").read()
            stem = path.replace(os.sep, "_")[:-5]
            for mi, (kind, data) in enumerate(mutants(src, args.mutants, rng)):
                with open(os.path.join(args.write, "%s.%d.%s.tile" % (stem, mi, kind)),
                          "wb") as f:
                    f.write(data)
                n += 1
        print("mutate.py: wrote %d mutants of %d files to %s" % (n, len(files), args.write))
        return 0
    tilec = shutil.which(args.tilec) or args.tilec
    counts, failures = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for fi, path in enumerate(files):
            rng = random.Random(args.seed * 1000003 + fi)
            src = open(path, "rb").read()
            for mi, (kind, data) in enumerate(mutants(src, args.mutants, rng)):
                name = "%s.%d.%s.tile" % (os.path.basename(path)[:-5], mi, kind)
                mpath = os.path.join(tmp, name)
                with open(mpath, "wb") as f:
                    f.write(data)
                jobs.append((path, kind, mpath))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(lambda j: run(tilec, j[2], args.timeout), jobs)
            for (path, kind, mpath), (outcome, detail) in zip(jobs, results):
                counts[outcome] = counts.get(outcome, 0) + 1
                if outcome in ("crash", "timeout", "no-diagnostic"):
                    failures.append((path, kind, mpath, outcome, detail))
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        shutil.copy(mpath, args.keep)
    total = sum(counts.values())
    print("mutate.py: %d mutants of %d files: %s" % (
        total, len(files), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    for path, kind, mpath, outcome, detail in failures[:20]:
        print("FAIL %s: %s mutant of %s (%s)" % (outcome, kind, path,
                                                 os.path.basename(mpath)))
        sys.stdout.write(detail.decode("utf-8", "replace"))
    if failures:
        print("mutate.py: %d failures%s" % (
            len(failures), " (kept in %s)" % args.keep if args.keep else ""))
        return 1
    print("mutate.py: no crash, hang or silent failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
