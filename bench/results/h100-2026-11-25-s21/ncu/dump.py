import sys; sys.path.insert(0,'/tmp/an')
from sass import load
ins = load(sys.argv[1]); lo, hi = int(sys.argv[2]), int(sys.argv[3])
keys = ['wait','long_sb','short_sb','barrier','math','mio','not_selected','selected','dispatch','branch_resolving','membar','no_inst','sleep','lg']
import re
for d in ins[lo:hi+1]:
    src = d['src']
    interesting = re.search(r'HGMMA|WARPGROUP|BAR|SYNCS|MUFU|DEPBAR|BRA|SHFL|STG|LDG|LDS|STS|UTMA|ARRIVE|FENCE|WARPSYNC|NANOSLEEP|ELECT', src)
    if interesting or d['samples'] > 200 or len(sys.argv) > 4:
        top = sorted(((d[k], k) for k in keys if d.get(k)), reverse=True)[:3]
        print(f"{d['i']:5d} {d['exec']:8d} {d['samples']:6d} {src[:70]:70s} {' '.join(f'{k}:{v}' for v,k in top)}")
