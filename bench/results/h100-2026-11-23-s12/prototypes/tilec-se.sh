#!/usr/bin/env bash
# tilec, then every EVERY-th ex2 on the FMA pipe (degree DEG); name: tilec-se-EVERY-DEG
here="$(cd "$(dirname "$0")" && pwd)"
name="$(basename "$0")"; every="${name#tilec-se-}"; deg="${every#*-}"; every="${every%-*}"
"${TILEC_REAL:-/tmp/tilec-bundle/bin/tilec}" "$@" || exit $?
prev=""; out=""
for a in "$@"; do [[ $prev == -o ]] && out="$a"; prev="$a"; done
[[ -n $out && -f $out.ptx ]] && python3 "$here/softexp.py" "$out.ptx" "$every" "$deg"
exit 0
