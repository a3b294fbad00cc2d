import csv, gzip, sys, re
def load(path):
    rows = list(csv.reader(gzip.open(path, 'rt')))
    hdr = rows[1]; data = rows[2:]
    idx = {h: i for i, h in enumerate(hdr)}
    out = []
    for r in data:
        if len(r) < len(hdr): continue
        d = {'addr': int(r[0], 16), 'src': r[1].strip(), 'samples': int(r[idx['Warp Stall Sampling (All Samples)']] or 0),
             'exec': int(r[idx['Instructions Executed']] or 0)}
        for h in hdr:
            if h.startswith('stall_') and '(Not' not in h:
                d[h[6:]] = int(r[idx[h]] or 0)
        out.append(d)
    base = out[0]['addr']
    for i, d in enumerate(out): d['i'] = i; d['off'] = d['addr'] - base
    return out
if __name__ == '__main__':
    ins = load(sys.argv[1])
    tot = sum(d['samples'] for d in ins)
    print('instructions', len(ins), 'samples', tot, 'executed', sum(d['exec'] for d in ins))
    # branches with targets
    for d in ins:
        m = re.search(r'BRA(?:\.\w+)* (0x[0-9a-f]+)', d['src'])
        if m and d['exec'] > 0:
            tgt = int(m.group(1), 16)
            # target index
            ti = next((e['i'] for e in ins if e['addr'] == tgt), None)
            if ti is None:
                ti = next((e['i'] for e in ins if e['off'] == tgt), None)
            print(f"{d['i']:5d} exec {d['exec']:9d} {d['src'][:60]:60s} -> {ti}")
