import csv, sys, collections
lines=[l for l in open(sys.argv[1]) if l.startswith('"')]
rows=list(csv.reader(lines)); hdr=rows[1]; data=rows[2:]
isrc=hdr.index("Source"); iall=hdr.index("Warp Stall Sampling (All Samples)")
stall_cols=[i for i,h in enumerate(hdr) if h.startswith("stall_") or "Stall" in h]
S=lambda r: float(r[iall] or 0)
tot=sum(S(r) for r in data)
regions=[("setup",0,148),("program word (first) + start: addresses, Q load",149,440),("prologue: K0 wait, S0",441,543),
("prologue: softmax 0",544,908),("main loop",909,1324),("epilogue: last P V",1325,1368),("masked tail (diagonal)",1369,2180),
("normalise, store O, LSE",2181,2360),("next program word",2361,2377),("producer",2378,len(data)-1)]
for name,a,b in regions:
    s=sum(S(r) for r in data[a:b+1])
    top=sorted(((S(r),k,r[isrc][:50]) for k,r in enumerate(data[a:b+1],a)),reverse=True)[:3]
    print(f"{name:50s} {s:7.0f} {100*s/tot:5.1f}%   top: " + "; ".join(f"{int(x)} @{k} {t.strip()}" for x,k,t in top))
print("total", tot)
