#!/usr/bin/env python3
"""Prototype: every K-th ex2.approx.ftz.f32 of a PTX file computed on the FMA pipe.
usage: softexp.py FILE.ptx EVERY DEG"""
import math, re, struct, sys

def cheb_coeffs(deg, lo=-0.5, hi=0.5):
    # p(f) = 1 + f*q(f): q interpolates (2^f - 1)/f at Chebyshev nodes (p(0) = 1 exactly)
    n = deg
    xs = [0.5*(lo+hi) + 0.5*(hi-lo)*math.cos(math.pi*(2*i+1)/(2*n)) for i in range(n)]
    # solve Vandermonde
    A = [[x**j for j in range(n)] + [(2.0**x - 1) / x if abs(x) > 1e-9 else math.log(2)] for x in xs]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(A[r][c])); A[c], A[p] = A[p], A[c]
        for r in range(n):
            if r != c:
                f = A[r][c] / A[c][c]
                A[r] = [a - f*b for a, b in zip(A[r], A[c])]
    return [1.0] + [A[i][n] / A[i][i] for i in range(n)]

def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
def hexf(x): return "0f%08X" % struct.unpack('<I', struct.pack('<f', x))[0]

def emulate(x, c):
    xc = min(max(x, -126.0), 128.0) if x == x else x
    t = f32(xc + 12582912.0); j = f32(t - 12582912.0); fr = f32(xc - j)
    p = f32(2 * c[-1])
    for k in range(len(c) - 2, -1, -1):
        p = f32(p * fr + f32(2 * c[k]))
    if t != t:
        return p
    tb = struct.unpack('<I', struct.pack('<f', t))[0]
    eb = ((tb << 23) + 0x3F000000) & 0xffffffff
    e = struct.unpack('<f', struct.pack('<I', eb))[0]
    try:
        r = f32(p * e)
    except OverflowError:
        r = float('inf')
    return 0.0 if abs(r) < 2.0**-126 else r

def block(dst, src, c):
    c = [2 * v for v in c]  # p(f) = 2 * 2^f; the scale is 2^(j-1)
    lines = ["{", ".reg .b32 xc, t, j, f, p, e;",
             f"max.NaN.f32 xc, {src}, {hexf(-126.0)};",
             f"min.NaN.f32 xc, xc, {hexf(128.0)};",
             f"add.rn.f32 t, xc, {hexf(12582912.0)};",
             f"sub.rn.f32 j, t, {hexf(12582912.0)};",
             "sub.rn.f32 f, xc, j;",
             f"fma.rn.f32 p, f, {hexf(c[-1])}, {hexf(c[-2])};"]
    for k in range(len(c) - 3, -1, -1):
        lines.append(f"fma.rn.f32 p, p, f, {hexf(c[k])};")
    lines += ["mad.lo.s32 e, t, 8388608, 1056964608;", f"mul.rn.ftz.f32 {dst}, p, e;", "}"]
    return "\n".join(lines)

def main():
    path, every, deg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    c = cheb_coeffs(deg)
    text = open(path).read()
    pat = re.compile(r"ex2\.approx\.ftz\.f32 (%r\d+), (%r\d+);")
    n = [0]
    def rep(m):
        n[0] += 1
        return block(m.group(1), m.group(2), c) if n[0] % every == 0 else m.group(0)
    open(path, "w").write(pat.sub(rep, text))

if __name__ == "__main__":
    if sys.argv[1] == "--check":
        for deg in (3, 4, 5):
            c = cheb_coeffs(deg)
            worst = 0
            for i in range(-20000, 1):
                x = i / 997.0
                r = emulate(x, c); ref = 2.0 ** x
                worst = max(worst, abs(r - ref) / ref)
            print(deg, [hexf(v) for v in c], "max rel err %.3g" % worst,
                  emulate(float('-inf'), c), emulate(-126.5, c), emulate(127.7, c), 2**127.7, emulate(200, c), emulate(127.9, c), 2**127.9, emulate(128, c), emulate(float('nan'), c), emulate(-125.7, c))
    else:
        main()
