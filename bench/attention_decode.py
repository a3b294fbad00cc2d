#!/usr/bin/env python3
"""Decode benchmark: tilec's decode.tile (paged and contiguous, split-KV) vs PyTorch SDPA.

One query token per sequence against a KV cache of `kv` tokens, reported as
GB/s of K and V read (the bytes a decode step must read: 2 * B * kv * Hkv * D
* 2) and as a fraction of a device-to-device copy measured in the same run
(read + write bytes of a 1 GiB clone), side by side with SDPA's flash and
cuDNN backends on the contiguous cache. See bench/README.md and
docs/serving.md.

  python3 bench/attention_decode.py --tilec PATH/TO/tilec          # full sweep
  python3 bench/attention_decode.py --quick                         # batch 16, kv 16k
  python3 bench/attention_decode.py --dry-run --tilec build/bin/tilec  # compile only, no GPU
"""
import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention_fwd as fwd  # noqa: E402  (launcher, timing, SDPA runners)

ROOT = Path(__file__).resolve().parent.parent
DECODE = ROOT / "examples" / "attention" / "decode.tile"
COMBINE = ROOT / "examples" / "attention" / "decode_combine.tile"
BATCHES, KVLENS, HEADS, PAGES = [1, 16, 64, 128], [1024, 4096, 16384, 65536], [(32, 8), (64, 8)], [16, 128]
BN = 128  # keys per decode iteration (decode.tile's BN)


def num_splits(programs, blocks, sms, per_sm, max_splits=128, paged=False):
    """tile::decodeSplits (lib/Attention/Decode.cpp, docs/serving.md): on a
    contiguous cache with at most half as many programs as SMs, as many
    splits as give every SM one program; otherwise (and always when
    `paged`) FlashDecoding's rule, the fewest splits whose
    waves of `programs * splits` over the `sms * per_sm` resident slots are
    at least 85 % as full as the best count's; each split keeps >= 1 key
    block."""
    if programs <= 0 or sms <= 0:
        return 1
    limit = max(1, min(max_splits, blocks))
    if not paged and 2 * programs <= sms:
        return min(limit, sms // programs)
    slots = sms * max(1, per_sm)
    eff = []
    for s in range(1, limit + 1):
        waves = programs * s / slots
        eff.append(waves / math.ceil(waves))
    best = max(eff)
    return next(s for s, e in enumerate(eff, 1) if e >= 0.85 * best)


def self_test():
    """num_splits against tile::decodeSplits's unit test
    (test/Unit/DecodeSplitsTest.cpp): 132 SMs, two programs per SM."""
    cases = {(8, 512): 16, (64, 512): 2, (1, 100000): 128, (128, 512): 2,
             (512, 512): 1, (100, 512): 5, (8, 2): 2, (8, 1): 1, (0, 10): 1}
    for (programs, blocks), want in cases.items():
        got = num_splits(programs, blocks, 132, 2)
        assert got == want, f"num_splits({programs}, {blocks}, 132, 2) = {got}, want {want}"
    assert num_splits(1, 100000, 132, 2, 16) == 16
    assert num_splits(8, 512, 132, 2, paged=True) == 29  # FlashDecoding's waves
    print("self-test: ok")


def schedule_tag(schedule):
    """A file- and column-friendly name for a schedule string (`cp_async=1,num_stages=2`)."""
    return "".join(ch if ch.isalnum() else "_" for ch in schedule)


def compile_kernel(exe, tile, arch, defines, out, flags=()):
    args = [exe, str(tile), f"-arch={arch}", "-o", out, *flags]
    for k, v in defines.items():
        args += ["-D", f"{k}={v}"]
    env = dict(os.environ)
    lib = Path(exe).resolve().parent.parent / "lib"
    if lib.is_dir():
        env["LD_LIBRARY_PATH"] = f"{lib}:{env.get('LD_LIBRARY_PATH', '')}"
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"tilec failed: {r.stderr.strip()}")
    return f"{out}.ptx", json.loads(Path(f"{out}.manifest.json").read_text())


class Decode:
    """decode.tile + decode_combine.tile for one (dtype, D, G, page)."""

    def __init__(self, a, T, D, G, page, workdir, warps=4, ahead=False, bn=None, schedule=""):
        bn = bn or a.bn[0]
        tag = f"{T}_d{D}_g{G}_p{page}_w{warps}_ia{int(ahead)}_bn{bn}_s{schedule_tag(schedule)}"
        defs = dict(BN=bn, PAGE=page, D=D, G=G, T=T)
        flags = [f"-num-warps={warps}", f"-index-ahead={str(ahead).lower()}"]
        if schedule:
            flags.append(f"-schedule={schedule}")
        self.ptx, self.man = compile_kernel(a.tilec, DECODE, a.arch, defs, f"{workdir}/dec_{tag}", flags)
        self.cptx, self.cman = compile_kernel(a.tilec, COMBINE, a.arch, dict(D=D, T=T),
                                              f"{workdir}/comb_{tag}")
        self.page, self.bn = page, bn

    def runner(self, s, splits_override=None):
        import cupy
        import torch
        mod, cmod = cupy.RawModule(path=self.ptx), cupy.RawModule(path=self.cptx)
        f, cf = mod.get_function(self.man["kernelName"]), cmod.get_function(self.cman["kernelName"])
        f, cf = (getattr(x, "kernel", x) for x in (f, cf))
        block, cblock = int(self.man["blockSize"]), int(self.cman["blockSize"])
        B, hkv, kv = s["B"], s["Hkv"], s["kv"]
        slots = fwd.resident_programs(f.ptr, block, int(self.man.get("sharedMemoryBytes", 0)))
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        splits = splits_override or num_splits(B * hkv, math.ceil(kv / self.bn), sms, slots // sms,
                                               paged=self.page > 0)
        s["splits"] = splits
        stream = torch.cuda.current_stream().cuda_stream
        keep = (mod, cmod, f, cf)
        launch = fwd.KernelLauncher(self.man, f.ptr, (B, hkv, splits), (block, 1, 1),
                                    int(self.man.get("sharedMemoryBytes", 0)), stream, keep=keep)
        rows = B * s["Hq"]
        combine = fwd.KernelLauncher(self.cman, cf.ptr, (rows, 1, 1), (cblock, 1, 1),
                                     int(self.cman.get("sharedMemoryBytes", 0)), stream, keep=keep)
        dev = "cuda"
        o_part = torch.empty(rows * splits * s["D"], device=dev, dtype=torch.float32)
        lse_part = torch.empty(rows * splits, device=dev, dtype=torch.float32)
        lse = torch.empty(rows, device=dev, dtype=torch.float32)
        max_blocks = s["max_blocks"] if self.page else kv
        scale = s["D"] ** -0.5

        def fn(q, kc, vc, table, lens):
            o = torch.empty_like(q)
            launch(q.data_ptr(), kc.data_ptr(), vc.data_ptr(), table.data_ptr(), lens.data_ptr(),
                   o.data_ptr(), lse.data_ptr(), o_part.data_ptr(), lse_part.data_ptr(),
                   hkv, max_blocks, splits, scale)
            if splits > 1:
                combine(o_part.data_ptr(), lse_part.data_ptr(), o.data_ptr(), lse.data_ptr(), rows, splits)
            return o
        return fn


def make_cache(s, dtype):
    """q [B, 1, Hq, D] and the contiguous cache K, V [B, kv, Hkv, D]."""
    import torch
    B, hq, hkv, D, kv = s["B"], s["Hq"], s["Hkv"], s["D"], s["kv"]
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, 1, hq, D, device="cuda", dtype=dtype, generator=g)
    k = torch.randn(B, kv, hkv, D, device="cuda", dtype=dtype, generator=g)
    v = torch.randn(B, kv, hkv, D, device="cuda", dtype=dtype, generator=g)
    return q, k, v


def paged(s, page, k, v, order="shuffled"):
    """The same cache as pages of `page` tokens ([num_pages, page, Hkv, D],
    NHD) handed out in shuffled order (or in order: `order` "sequential"),
    and its block table [B, pages]."""
    import torch
    B, kv = s["B"], s["kv"]
    per = math.ceil(kv / page)
    s["max_blocks"] = per
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = (torch.randperm(B * per, device="cuda", generator=g) if order == "shuffled"
           else torch.arange(B * per, device="cuda"))
    table = ids.to(torch.int32).view(B, per)
    pools = []
    for c in (k, v):
        pool = torch.empty(B * per, page, *c.shape[2:], device="cuda", dtype=c.dtype)
        flat = pool.view(B * per, page, -1)
        src = torch.nn.functional.pad(c.view(B, kv, -1), (0, 0, 0, per * page - kv))
        flat[table.view(-1).long()] = src.view(B * per, page, -1)
        pools.append(pool)
    return pools[0], pools[1], table.contiguous()


def sdpa(name):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}[name]

    def fn(q, k, v):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return fn


def copy_gbps():
    """Read + write GB/s of a 1 GiB device-to-device clone (the HBM figure
    every provider is compared with)."""
    import torch
    x = torch.empty(1 << 29, device="cuda", dtype=torch.int16)
    y = torch.empty_like(x)
    ms, _ = fwd.time_ms(lambda a: y.copy_(a), [(x,)], 20, 200.0, warmup_ms=200.0)
    return 2 * x.numel() * 2 / ms / 1e6


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tilec", default="tilec")
    p.add_argument("--arch", default=None, help="default: from the GPU (sm_90a for --dry-run)")
    p.add_argument("--batch", nargs="+", type=int, default=BATCHES)
    p.add_argument("--kv", nargs="+", type=int, default=KVLENS)
    p.add_argument("--heads", nargs="+", default=[f"{a}/{b}" for a, b in HEADS], help="Hq/Hkv pairs")
    p.add_argument("--page", nargs="+", type=int, default=PAGES, help="0: the contiguous cache")
    p.add_argument("--bn", type=int, nargs="+", default=[BN],
                   help=f"keys per decode iteration (default {BN}; several: one provider each)")
    p.add_argument("--schedule", nargs="+", default=[""],
                   help="schedule fields for decode.tile as name=value pairs (e.g. cp_async=1,num_stages=2); "
                        "each a provider; \"\": the kernel's own")
    p.add_argument("--warps", nargs="+", type=int, default=[4], help="decode.tile's num_warps (each a provider)")
    p.add_argument("--index-ahead", nargs="+", choices=["off", "on"], default=["off"],
                   help="paged: page ids loaded a block further ahead (the schedule's index_ahead), "
                   "each a provider (default off, as tile::Decode runs)")
    p.add_argument("--page-order", choices=["shuffled", "sequential"], default="shuffled",
                   help="the order pages are handed out in (default shuffled; sequential: the paged "
                   "cost without the scatter)")
    p.add_argument("--splits", type=int, nargs="+", default=[0],
                   help="split counts to time, each a row (0: the heuristic, the default)")
    p.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    p.add_argument("--max-gib", type=float, default=None,
                   help="skip shapes whose K+V exceed this (default: 40 %% of the GPU's memory: the "
                   "paged copy is made next to the contiguous cache)")
    p.add_argument("--quick", action="store_true", help="batch 16, kv 16k, Hq/Hkv 32/8")
    p.add_argument("--min-ms", type=float, default=200.0)
    p.add_argument("--warmup-ms", type=float, default=200.0)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--self-test", action="store_true", help="check the split rule; no GPU")
    p.add_argument("--out", default=None, help="write results.json here")
    a = p.parse_args(argv)
    if a.quick:
        a.batch, a.kv, a.heads = [16], [16384], ["32/8"]
    a.heads = [tuple(int(x) for x in h.split("/")) for h in a.heads]
    for hq, hkv in a.heads:
        if hq % hkv:
            p.error(f"--heads {hq}/{hkv}: Hq must be a multiple of Hkv")
    if 0 not in a.page:
        a.page = [0] + a.page  # the contiguous decode is the baseline of the paged ones
    return a


def main(argv=None):
    a = parse_args(argv)
    if a.self_test:
        self_test()
        return 0
    T = {"bf16": "bf16", "fp16": "f16"}[a.dtype]
    work = tempfile.mkdtemp(prefix="tilec-decode-")
    if a.dry_run:
        a.arch = a.arch or "sm_90a"
        for hq, hkv in a.heads:
            for page in a.page:
                for w, ahead, bn, sched in itertools.product(
                        a.warps, (False, True) if page else (False,), a.bn, a.schedule):
                    d = Decode(a, T, 128, hq // hkv, page, work, w, ahead, bn, sched)
                    print(f"compiled decode G={hq // hkv} page={page} warps={w} index_ahead={ahead} "
                          f"BN={bn} schedule={sched or '-'}: "
                          f"{d.ptx} ({d.man['blockSize']} threads), combine {d.cptx}")
        print("dry run: ok")
        return 0
    import torch
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    cc = torch.cuda.get_device_capability()
    a.arch = a.arch or ("sm_90a" if cc[0] >= 9 else "sm_80")
    gpu = torch.cuda.get_device_name()
    peak = copy_gbps()
    if a.max_gib is None:
        a.max_gib = 0.4 * torch.cuda.get_device_properties(0).total_memory / 2**30
    print(f"{gpu}: device-to-device copy {peak:.0f} GB/s (read + write)")
    rows, kernels = [], {}
    hdr = f"{'B':>4} {'kv':>6} {'Hq/Hkv':>7} {'provider':>16} {'splits':>6} {'us':>9} {'GB/s':>7} {'%copy':>6} {'err':>8}"
    print(hdr)
    for hq, hkv in a.heads:
        for B in a.batch:
            for kv in a.kv:
                s = dict(B=B, Hq=hq, Hkv=hkv, D=128, kv=kv)
                kv_bytes = 2 * B * kv * hkv * 128 * 2
                if kv_bytes > a.max_gib * 2**30:
                    print(f"{B:>4} {kv:>6} {hq}/{hkv:<5} skipped: K+V {kv_bytes / 2**30:.0f} GiB > --max-gib")
                    continue
                q, k, v = make_cache(s, dtype)
                lens = torch.full((B,), kv, device="cuda", dtype=torch.int32)
                qs, ks, vs = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
                ref = sdpa("sdpa-flash")(qs, ks, vs).transpose(1, 2)
                for name in ("sdpa-flash", "sdpa-cudnn"):
                    try:
                        ms, _ = fwd.time_ms(sdpa(name), [(qs, ks, vs)], 20, a.min_ms, a.warmup_ms)
                        rows.append(dict(s, provider=name, page=0, splits=1, us=ms * 1e3,
                                         gbps=kv_bytes / ms / 1e6, err=0.0))
                    except Exception as e:  # noqa: BLE001 (a backend that refuses the shape)
                        rows.append(dict(s, provider=name, page=0, splits=1, us=None, gbps=None,
                                         err=None, note=fwd.short_reason(e)))
                    print_row(rows[-1], peak)
                for page in a.page:
                    if page:
                        kc, vc, table = paged(s, page, k, v, a.page_order)
                    else:
                        kc, vc, table = k, v, torch.zeros(1, device="cuda", dtype=torch.int32)
                    inputs = (q, kc, vc, table, lens)
                    modes = sorted({m == "on" and page > 0 for m in a.index_ahead})
                    for w, ahead, bn, sched, forced in itertools.product(a.warps, modes, a.bn, a.schedule,
                                                                         a.splits):
                        key = (hq // hkv, page, w, ahead, bn, sched)
                        if key not in kernels:
                            kernels[key] = Decode(a, T, 128, hq // hkv, page, work, w, ahead, bn, sched)
                        fn = kernels[key].runner(s, forced or None)
                        o = fn(*inputs)
                        err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
                        ms, _ = fwd.time_ms(fn, [inputs], 20, a.min_ms, a.warmup_ms)
                        name = ((f"tilec-page{page}" if page else "tilec-contig") + (f"-w{w}" if w != 4 else "")
                                + ("-ia" if ahead else "") + (f"-bn{bn}" if len(a.bn) > 1 else "")
                                + (f"+{sched}" if sched else ""))
                        rows.append(dict(s, provider=name, page=page, splits=s["splits"], us=ms * 1e3,
                                         gbps=kv_bytes / ms / 1e6, err=err))
                        print_row(rows[-1], peak)
                    del inputs, kc, vc, table
                del q, k, v, qs, ks, vs, ref
                torch.cuda.empty_cache()
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        meta = dict(gpu=gpu, copy_gbps=peak, dtype=a.dtype, arch=a.arch)
        (Path(a.out) / "decode.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    return 0


def print_row(r, peak):
    if r.get("us") is None:
        print(f"{r['B']:>4} {r['kv']:>6} {r['Hq']:>3}/{r['Hkv']:<3} {r['provider']:>16}   unavailable: {r['note']}")
        return
    print(f"{r['B']:>4} {r['kv']:>6} {r['Hq']:>3}/{r['Hkv']:<3} {r['provider']:>16} {r['splits']:>6} "
          f"{r['us']:>9.1f} {r['gbps']:>7.0f} {100 * r['gbps'] / peak:>5.1f}% {r['err']:>8.1e}")


if __name__ == "__main__":
    sys.exit(main())
