#!/usr/bin/env python3
"""Prototype: the publisher's share_program without the divergent branch."""
import re, sys
path = sys.argv[1]
text = open(path).read()
pat = re.compile(r"setp\.ne\.b32 p, (%r\d+), 0;\n@!p bra PROG_READ_(\d+);\nPROG_FREE_\2:\n(mbarrier\.try_wait[^\n]*\n@!ok bra PROG_FREE_\2;\n)st\.shared\.b32 ([^\n]*)\n(mbarrier\.arrive[^\n]*)\n")
n = [0]
def rep(m):
    # consumers' copies pass a constant 0 (a register set by mov.b32 0): leave them
    n[0] += 1
    return (f"setp.ne.b32 p, {m.group(1)}, 0;\nPROG_FREE_{m.group(2)}:\n{m.group(3)}"
            f"@p st.shared.b32 {m.group(4)}\n@p {m.group(5)}\n")
text2 = pat.sub(rep, text)
# only where p is not constant-0: the consumers' blocks also match; restore those whose
# register is a plain `mov.b32 %rX, 0;`
zeros = set(re.findall(r"mov\.b32 \t(%r\d+), 0;", text))
out = []
for blk in text2.split("setp.ne.b32 p, "):
    out.append(blk)
text3 = text2
for z in zeros:
    # revert: for blocks using a zero register, put back the branch form
    text3 = re.sub(r"setp\.ne\.b32 p, " + re.escape(z) + r", 0;\nPROG_FREE_(\d+):\n(mbarrier\.try_wait[^\n]*\n@!ok bra PROG_FREE_\1;\n)@p st\.shared\.b32 ([^\n]*)\n@p (mbarrier\.arrive[^\n]*)\n",
                   lambda m: f"setp.ne.b32 p, {z}, 0;\n@!p bra PROG_READ_{m.group(1)};\nPROG_FREE_{m.group(1)}:\n{m.group(2)}st.shared.b32 {m.group(3)}\n{m.group(4)}\n", text3)
open(path, "w").write(text3)
sys.stderr.write(f"progfix: {n[0]} blocks, {len(zeros)} zero regs\n")
