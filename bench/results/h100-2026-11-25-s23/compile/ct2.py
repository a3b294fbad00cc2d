import subprocess,time,statistics,os,sys
OLD=sys.argv[2]; NEW=sys.argv[3]
cfgs={'d64':[], 'd128':['-D','D=128'],
 't128c':'-D BM=128 -D BN=128 -D NUM_WARPS=8 -D TMA_STAGES=3 -D PRODUCER=true -D PERSISTENT=true -D D=128 -D CAUSAL=true'.split()}
vars_={'old':(OLD,{}),'pop30':(NEW,{}),'lazy30':(NEW,{'TILEC_PF_LAZY':'1'}),'pop12':(NEW,{'TILEC_PF_MB':'12'}),'lazy12':(NEW,{'TILEC_PF_MB':'12','TILEC_PF_LAZY':'1'})}
res={}
names=list(vars_)
for r in range(int(sys.argv[1])):
  for name,a in cfgs.items():
    for v in (names if r%2==0 else names[::-1]):
      exe,env=vars_[v]; e=dict(os.environ,**env)
      t=time.perf_counter(); subprocess.run([exe,'examples/attention/flash_fwd.tile','-arch=sm_90a','-emit=ptx',*a,'-o','/tmp/ct-out'],env=e,check=True,capture_output=True); res.setdefault((name,v),[]).append(time.perf_counter()-t)
for name in cfgs:
  o=statistics.median(res[(name,'old')])
  print(name.ljust(6), '  '.join(f"{v} {statistics.median(res[(name,v)])*1e3:.0f} (x{statistics.median(res[(name,v)])/o:.2f})" for v in names))
