import subprocess,time,statistics,os,sys
OLD='/tmp/tilec-old'; NEW='/tmp/tilec-new'
env=dict(os.environ, LD_LIBRARY_PATH='/tmp/oldb/tilec-bundle/lib')
cfgs={'d64':[], 'd128':['-D','D=128'],
 't64c':'-D BM=128 -D BN=128 -D NUM_WARPS=8 -D TMA_STAGES=3 -D PRODUCER=true -D PERSISTENT=true -D D=64 -D CAUSAL=true'.split(),
 't128c':'-D BM=128 -D BN=128 -D NUM_WARPS=8 -D TMA_STAGES=3 -D PRODUCER=true -D PERSISTENT=true -D D=128 -D CAUSAL=true'.split()}
res={}
for r in range(int(sys.argv[1])):
  for name,a in cfgs.items():
    for b,exe in (('old',OLD),('new',NEW)) if r%2==0 else (('new',NEW),('old',OLD)):
      t=time.perf_counter(); subprocess.run([exe,'examples/attention/flash_fwd.tile','-arch=sm_90a','-emit=ptx',*a,'-o','/tmp/ct-out'],env=env,check=True,capture_output=True); res.setdefault((name,b),[]).append(time.perf_counter()-t)
for name in cfgs:
  o=statistics.median(res[(name,'old')]); w=statistics.median(res[(name,'new')])
  print(f"{name:6s} old {o*1e3:.0f} ms  new {w*1e3:.0f} ms  x{w/o:.2f}")
