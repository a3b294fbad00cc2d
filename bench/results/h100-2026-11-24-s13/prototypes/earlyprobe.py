#!/usr/bin/env python3
"""Prototype: probe the main loop's TMA barriers for the next iteration at the end of
the current one (mbarrier.test_wait into a predicate carried over the back edge); the
wait at the loop top is skipped when the probe saw the phase complete."""
import os, re, sys
path = sys.argv[1]
L = open(path).read().split("\n")
best = None
for i, l in enumerate(L):
    b = re.match(r"\tbra\.uni \t(\$L__BB\d+_\d+);", l)
    if b:
        j = next((k for k in range(len(L)) if L[k].startswith(b.group(1) + ":")), -1)
        if 0 <= j < i:
            n = sum('ex2.approx' in L[k] for k in range(j, i))
            if n >= 32 and (best is None or i - j < best[1] - best[0]): best = (j, i, n)
j0, j1, _ = best
label = L[j0].rstrip(":")
assert sum(label + ";" in l for l in L) == 1, "loop entered by a branch"
waits = [k for k in range(j0, j1) if re.match(r"mbarrier\.try_wait\.parity\.shared::cta\.b64 done, \[(%\w+)\], (%\w+);", L[k])]
which = os.environ.get("WAITS", "all")
if which != "all": waits = waits[:int(which)]
defre = re.compile(r"^\t[a-z][\w.]*\s+(%\w+),")
def slice_for(k, regs):
    need, out = set(regs), []
    for m in range(k - 1, j0, -1):
        d = defre.match(L[m])
        if d and d.group(1) in need:
            assert not L[m].lstrip().startswith("@"), L[m]
            out.append(L[m]); need.discard(d.group(1))
            for r in re.findall(r"%\w+", L[m].split(",", 1)[1]): need.add(r)
    return out[::-1]
tail, fresh = [], 0
for idx, k in enumerate(waits):
    m = re.search(r"\[(%\w+)\], (%\w+);", L[k]); a, p = m.group(1), m.group(2)
    sl = slice_for(k, [a, p]); ren = {}
    for ins in sl:
        d = defre.match(ins).group(1)
        ren[d] = "%%rq%d" % fresh if d.startswith("%r") and not d.startswith("%rd") else "%%rdq%d" % fresh; fresh += 1
        ins2 = re.sub(r"%\w+", lambda x: ren.get(x.group(0), x.group(0)), ins)
        tail.append(ins2)
    tail.append("\tmbarrier.test_wait.parity.shared::cta.b64 %%pk%d, [%s], %s;" % (idx, ren.get(a, a), ren.get(p, p)))
    lab = re.match(r"(TMA_WAIT_\d+):", L[k - 1]).group(1)
    L[k - 1] = "@%%pk%d bra %s_SKIP;\n%s" % (idx, lab, L[k - 1])
    L[k + 1] = L[k + 1] + "\n%s_SKIP:" % lab
L[j1] = "\n".join(tail) + "\n" + L[j1]
L[j0] = "\n".join("\tsetp.ne.b32 %%pk%d, 0, 0;" % i for i in range(len(waits))) + "\n" + L[j0]
for i, l in enumerate(L):
    if re.match(r"\t\.reg \.pred \t%p<\d+>;", l):
        L[i] = l + "\n\t.reg .pred %%pk<%d>;\n\t.reg .b32 %%rq<%d>;\n\t.reg .b64 %%rdq<%d>;" % (len(waits), fresh + 1, fresh + 1)
        break
open(path, "w").write("\n".join(L))
print("earlyprobe: %d waits, %d sliced instructions" % (len(waits), fresh), file=sys.stderr)
