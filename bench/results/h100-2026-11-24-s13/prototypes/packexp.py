#!/usr/bin/env python3
"""Prototype: two exponentials per MUFU. For each 16-bit pack of two ex2 results
(cvt.rn.bf16x2.f32 D, H, L), the pair's inputs are packed to bf16x2 (f16x2) and one
ex2.approx.ftz.bf16x2 (ex2.approx.f16x2) gives both; H and L are unpacked to f32 for
their other readers (row sums); the pack itself stays (exact)."""
import re, sys
path = sys.argv[1]
L = open(path).read().split("\n")
ex2 = re.compile(r"^\tex2\.approx\.ftz\.f32 (%r\d+), (%r\d+);$")
fma = re.compile(r"^\tfma\.rn\.f32 \t(%r\d+),")
pairs = {}
kind = None
for l in L:
    m = re.match(r"^\tcvt\.rn\.(bf16x2|f16x2)\.f32 \t(%r\d+), (%r\d+), (%r\d+);", l)
    if m:
        kind = kind or m.group(1)
        pairs[m.group(3)] = (m.group(3), m.group(4)); pairs[m.group(4)] = (m.group(3), m.group(4))
defs = {}
for i, l in enumerate(L):
    m = ex2.match(l)
    if m: defs.setdefault(m.group(1), []).append(i)
fresh = 0; done = set(); n = 0
def find_fma(reg, near):
    for k in range(near, max(near - 8, 0), -1):
        m = fma.match(L[k])
        if m and m.group(1) == reg: return k
    return -1
for i in range(len(L)):
    m = ex2.match(L[i])
    if not m or i in done or m.group(1) not in pairs: continue
    h, lo = pairs[m.group(1)]
    other = lo if m.group(1) == h else h
    # the other's ex2 in the same straight-line run, after this one
    j = next((k for k in defs.get(other, []) if k > i and k - i < 40 and k not in done
              and not any(L[t].startswith("$L") or "bra" in L[t] for t in range(i, k))), -1)
    if j < 0: continue
    xo = ex2.match(L[j]).group(2); xi = m.group(2)
    f = find_fma(xo, j - 1)
    if f < 0: continue
    xh, xl = (xi, xo) if m.group(1) == h else (xo, xi)
    q = "%%rpx%d" % fresh; q2 = "%%rpx%d" % (fresh + 1); fresh += 2
    if kind == "bf16x2":
        body = ["\tcvt.rn.bf16x2.f32 %s, %s, %s;" % (q, xh, xl), "\tex2.approx.ftz.bf16x2 %s, %s;" % (q2, q),
                "\tshl.b32 %s, %s, 16;" % (lo, q2), "\tand.b32 %s, %s, -65536;" % (h, q2)]
    else:
        body = ["\tcvt.rn.f16x2.f32 %s, %s, %s;" % (q, xh, xl), "\tex2.approx.f16x2 %s, %s;" % (q2, q),
                "\t{ .reg .b16 a, b; mov.b32 {a, b}, %s; cvt.f32.f16 %s, a; cvt.f32.f16 %s, b; }" % (q2, lo, h)]
    L[i] = L[f] + "\n" + "\n".join(body)
    L[f] = ""; L[j] = ""; done.update({i, j}); n += 1
for i, l in enumerate(L):
    if re.match(r"\t\.reg \.b32 \t%r<\d+>;", l):
        L[i] = l + "\n\t.reg .b32 %%rpx<%d>;" % (fresh + 1); break
open(path, "w").write("\n".join(L))
print("packexp: %d pairs (%s)" % (n, kind), file=sys.stderr)
