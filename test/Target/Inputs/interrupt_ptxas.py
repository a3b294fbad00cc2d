#!/usr/bin/env python3
"""Interrupts tilec while a (slow, fake) ptxas runs: tilec must stop ptxas,
remove its temporary files and fail with "interrupted".

    interrupt_ptxas.py TILEC KERNEL.tile WORKDIR SIGNAL
"""
import os
import signal
import subprocess
import sys
import time

tilec, tile, work, signame = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
tmp = os.path.join(work, "tmp")
os.makedirs(tmp, exist_ok=True)
pidfile = os.path.join(work, "ptxas.pid")
fake = os.path.join(work, "slow-ptxas")
with open(fake, "w") as f:
    f.write(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
os.chmod(fake, 0o755)

env = dict(os.environ, TMPDIR=tmp)
p = subprocess.Popen([tilec, tile, "-emit=cubin", "--ptxas", fake,
                      "-o", os.path.join(work, "out")],
                     env=env, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 30
while not os.path.exists(pidfile) and time.time() < deadline:
    time.sleep(0.05)
time.sleep(0.2)
ptxas = int(open(pidfile).read())
p.send_signal(getattr(signal, signame))
err = p.communicate(timeout=20)[1]
print(f"tilec exit {p.returncode}")
lines = err.strip().splitlines()
print(next((l for l in lines if "error:" in l), lines[-1]) if lines else "(no message)")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (not yet reaped) is dead too.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


for _ in range(100):
    if not alive(ptxas):
        break
    time.sleep(0.05)
print("ptxas running" if alive(ptxas) else "ptxas stopped")
left = sorted(n for n in os.listdir(tmp) if n.startswith("tilec"))
print("temporary files left: " + (" ".join(left) if left else "none"))
