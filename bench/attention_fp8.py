#!/usr/bin/env python3
"""FP8 attention forward benchmark: tilec's flash_fwd_fp8.tile (e4m3 Q, K, V)
against tilec's bf16 flash_fwd.tile (its config table's entry) and PyTorch
SDPA (flash, cuDNN) on the same bf16 inputs, side by side in one process.

  python3 bench/attention_fp8.py --tilec PATH/TO/tilec [--seqlen 2048 16384]

The fp8 inputs are the bf16 ones quantized per tensor (descale = amax / 448)
and V transposed ([B, H, D, S], as flash_fwd_fp8.tile takes it); the
quantization and transpose are outside the timing (a serving stack keeps its
cache in that form). Parity: the fp8 output against an fp32 reference of the
dequantized inputs (rel-L2 <= 3e-2), the others against the bf16 inputs'
(<= 1e-2). FLOPs: 4·B·H·S²·D, halved for causal (attention_fwd.py). Every
provider runs after the same 200 ms warm-up (bench/README.md, "Method").
"""
import argparse
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention_fwd as af  # noqa: E402

FP8_TILE = af.ROOT / "examples" / "attention" / "flash_fwd_fp8.tile"
FP8_ARGS = ["q", "k", "vt", "o", "lse", "seqlen", "vt_stride", "sm_scale",
            "q_descale", "k_descale", "v_descale"]
FP8_RTOL = 3e-2
TOKENS, HIDDEN = 16384, 2048  # batch = TOKENS / S, heads = HIDDEN / D
PROVIDERS = ["tilec-fp8", "tilec-bf16", "sdpa-flash", "sdpa-cudnn"]


def fp8_args(tc, D, causal, cfg):
    """tilec's command line for flash_fwd_fp8.tile and a config (a config
    table entry: {"defines": {BM, BN}, "schedule": {...}})."""
    out = [tc.exe, str(FP8_TILE), f"-arch={tc.arch}", "-D", f"D={D}",
           "-D", f"CAUSAL={str(bool(causal)).lower()}"]
    for k, v in cfg["defines"].items():
        out += ["-D", f"{k}={v}"]
    for name, v in af.schedule_of(cfg).items():
        if v != af.SCHEDULE[name]:
            flag = "-" + name.replace("_", "-")
            out.append((flag if v else flag + "=false") if isinstance(v, bool) else f"{flag}={v}")
    return out


def fp8_runner(tc, s, cfg):
    """fn(q8, k8, vt, descales) -> (o, lse) launching flash_fwd_fp8."""
    import json
    import subprocess
    import torch
    prefix = Path(tc.dir) / f"fp8_d{s['D']}_c{int(s['causal'])}_{abs(hash(af.cfg_str(cfg)))}"
    r = subprocess.run(fp8_args(tc, s["D"], s["causal"], cfg) + ["-o", str(prefix)],
                       capture_output=True, text=True, env=tc.env)
    if r.returncode != 0:
        raise RuntimeError("tilec failed: " + (r.stderr.strip().splitlines() or ["?"])[0])
    man = json.loads(Path(f"{prefix}.manifest.json").read_text())
    names = [p["name"] for p in man["params"]][:len(FP8_ARGS)]
    if names != FP8_ARGS:
        raise SystemExit(f"error: flash_fwd_fp8 takes {names}, the bench passes {FP8_ARGS}")
    grid = (math.ceil(s["S"] / int(cfg["defines"]["BM"])), s["B"] * s["H"], 1)
    launch = af.launch_compiled(f"{prefix}.ptx", man, grid)
    scale = s["D"] ** -0.5

    def fn(q8, k8, vt, descales):
        o = torch.empty(q8.shape, device=q8.device, dtype=torch.bfloat16)
        lse = torch.empty(q8.shape[:-1], device=q8.device, dtype=torch.float32)
        launch(q8.data_ptr(), k8.data_ptr(), vt.data_ptr(), o.data_ptr(), lse.data_ptr(),
               s["S"], vt.shape[-1], scale, *descales)
        return o, lse
    return fn


def quantize(q, k, v):
    """(q8, k8, vt8, (q, k, v descales), dequantized fp32 q, k, v)."""
    import torch
    out, deq, scales = [], [], []
    for i, x in enumerate((q, k, v)):
        descale = max(x.abs().max().item(), 1e-12) / 448.0
        x8 = (x.float() / descale).to(torch.float8_e4m3fn)
        deq.append(x8.float() * descale)
        scales.append(descale)
        if i == 2:  # V transposed, rows padded to a multiple of 16 keys
            S = x.shape[2]
            stride = (S + 15) // 16 * 16
            vt = torch.zeros(*x.shape[:2], x.shape[3], stride, device=x.device,
                             dtype=torch.float8_e4m3fn)
            vt[..., :S] = x8.transpose(-1, -2)
            x8 = vt
        out.append(x8.contiguous())
    return out[0], out[1], out[2], tuple(scales), deq


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tilec", default="tilec")
    p.add_argument("--seqlen", nargs="+", type=int, default=[2048, 4096, 8192, 16384])
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--causal", choices=["0", "1", "both"], default="both")
    p.add_argument("--config", help="one flash_fwd_fp8 config instead of the table's "
                   "(attention_fwd.py's form, e.g. 128,128,8,producer,tma_a)")
    p.add_argument("--providers", nargs="+", choices=PROVIDERS, default=PROVIDERS)
    p.add_argument("--min-ms", type=float, default=200.0)
    p.add_argument("--warmup-ms", type=float, default=200.0)
    a = p.parse_args(argv)
    import torch
    arch = "sm_90a" if torch.cuda.get_device_capability() == (9, 0) else "sm_80"
    workdir = tempfile.mkdtemp(prefix="tilec-fp8-bench-")
    tc = af.Tilec(a.tilec, af.TILE, arch, workdir)
    configs = af.ROOT / "examples" / "attention" / "configs"
    table = af.load_table(configs / f"flash_fwd.{arch}.json")
    fp8_table = af.load_table(configs / f"flash_fwd_fp8.{arch}.json")
    print(f"# {torch.cuda.get_device_name()}")
    print(f"{'S':>6} {'causal':>6} {'provider':>11} {'TFLOP/s':>8} {'ms':>8} {'rel-L2':>8} status")
    causals = [False, True] if a.causal == "both" else [a.causal == "1"]
    for S in a.seqlen:
        for causal in causals:
            D = a.head_dim
            s = dict(dtype="bf16", D=D, causal=causal, S=S, B=max(1, TOKENS // S),
                     H=max(1, HIDDEN // D))
            inputs = af.make_inputs(s, 50 << 20)
            ref = af.reference(*inputs[0], causal)
            for prov in a.providers:
                row = dict(provider=prov)
                try:
                    if prov == "tilec-fp8":
                        sets = [quantize(*x) for x in inputs]
                        cfg = (af.parse_cfg(a.config) if a.config else
                               af.lookup(fp8_table, {"D": str(D), "CAUSAL": af.key_text(causal)}, S))
                        row["config"] = af.cfg_str(cfg)
                        fn = fp8_runner(tc, s, cfg)
                        q8, k8, vt, sc, deq = sets[0]
                        o, _ = fn(q8, k8, vt, sc)
                        fref, _ = af.reference(*deq, causal)
                        d = o.float() - fref
                        row["rel_l2"] = (d.norm() / fref.norm()).item()
                        rtol = FP8_RTOL
                        ms, _ = af.time_ms(fn, [x[:4] for x in sets], 10, a.min_ms, a.warmup_ms)
                    else:
                        fn = (af.tilec_runner(tc, s, af.lookup(table, af.table_keys(s), S))
                              if prov == "tilec-bf16" else af.baseline_runner(prov, s))
                        o, _ = fn(*inputs[0])
                        d = o.float() - ref[0]
                        row["rel_l2"] = (d.norm() / ref[0].norm()).item()
                        rtol = af.RTOL
                        ms, _ = af.time_ms(fn, inputs, 10, a.min_ms, a.warmup_ms)
                    row.update(ms=ms, tflops=af.tflops(s, ms),
                               status="PASS" if row["rel_l2"] <= rtol else "FAIL")
                except Exception as e:  # noqa: BLE001 (a provider's failure is a row)
                    row.update(ms=float("nan"), tflops=float("nan"), rel_l2=float("nan"),
                               status=f"ERROR {str(e).splitlines()[0][:80]}")
                print(f"{S:>6} {int(causal):>6} {prov:>11} {row['tflops']:8.1f} {row['ms']:8.3f} "
                      f"{row['rel_l2']:8.2e} {row['status']} {row.get('config', '')}", flush=True)


if __name__ == "__main__":
    main()
