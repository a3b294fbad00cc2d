"""Checks the fields of a dossier.json written without a GPU (dossier.test):
check-dossier.py DOSSIER.json CONFIGS [--ptxas]; prints 'dossier ok'."""
import json
import re
import sys

d = json.load(open(sys.argv[1]))
want_configs, with_ptxas = int(sys.argv[2]), "--ptxas" in sys.argv


def need(cond, what):
    if not cond:
        sys.exit(f"dossier: {what}")


need(d["dossier_version"] == 1, "dossier_version")
need(d["gpu"] == "no GPU" and d["parity"] == "no GPU" and d["bench"] == "no GPU",
     "the GPU parts must say 'no GPU'")
need(re.fullmatch(r"[0-9a-f]{64}", d["source"]["sha256"]), "source sha256")
need(d["source"]["path"].endswith("flash_fwd.tile"), "source path")
need("commit" in d["source"], "source commit key")
need(re.fullmatch(r"\d+\.\d+\.\d+", d["versions"]["tilec"] or ""), "tilec version")
need(re.fullmatch(r"\d+\.\d+\.\d+.*", d["versions"]["llvm"] or ""), "LLVM version")
need(d["arch"] == "sm_90a" and d["table"].endswith("flash_fwd.sm_90a.json"), "arch and table")
need(len(d["configs"]) == want_configs, f"{want_configs} configurations")
for c in d["configs"]:
    need(c["compiled"], f"configuration {c['flags']} compiled")
    need(c["compile_seconds"] > 0 and c["block_size"] >= 128, "compile time and block")
    need("-D D=" in c["flags"] and "num_warps=" in c["schedule_string"], "flags and schedule")
    need(c["dynamic_smem_bytes"] > 0 and isinstance(c["grid_args"], list), "manifest fields")
    need(c["requires"] == ["sm_scale > 0.0 (flash_fwd.tile:17:11)"],
         "flash_fwd's require(...)")
    if with_ptxas:
        need(c["ptxas_ok"] and 0 < c["registers"] <= 255, "ptxas registers")
        need(c["spill_stores_bytes"] >= 0 and c["ptxas_seconds"] > 0, "ptxas spills and time")
    else:
        need(c["ptxas"] == "ptxas not found" and d["versions"]["ptxas"] == "not found",
             "no ptxas recorded")
md = open(sys.argv[1].replace(".json", ".md")).read()
need("## Configurations" in md and "no GPU" in md, "dossier.md")
need("## Launch preconditions\n\n- `sm_scale > 0.0 (flash_fwd.tile:17:11)`" in md,
     "dossier.md: preconditions")
print("dossier ok")
