import sys; sys.path.insert(0,'/tmp/an')
from sass import load
ins = load(sys.argv[1]); tot = sum(d['samples'] for d in ins)
def reg(name, lo, hi):
    s = sum(d['samples'] for d in ins[lo:hi+1]); n = hi-lo+1
    ex = max(d['exec'] for d in ins[lo:hi+1])
    print(f"{name:42s} [{lo:4d},{hi:4d}] {n:4d} instrs  samples {s:6d} {100*s/tot:5.1f}%  max exec {ex}")
for a in sys.argv[2:]:
    name, lo, hi = a.rsplit(':', 2); reg(name, int(lo), int(hi))
print('total', tot)
