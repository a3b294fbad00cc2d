"""attention_fwd.py --self-test: the launch logic, configuration strings and
tables, without a GPU, PyTorch or libcuda."""
import json
import tempfile
from pathlib import Path
from fwd_config import (CONFIGS, KERNEL_DEFAULT, PROVIDERS, TABLE_KEYS, TUNE_CFGS, cfg_str,
                        format_table, load_table, lookup, make_cfg, merge_table, parse_cfg,
                        schedule_of, table_entry, table_keys, tune_configs)
from fwd_tilec import Tilec, legacy_defines
from fwd_launch import KernelLauncher, TMA_MAX_ROWS, check_tensor_maps, tensor_map_rows
from fwd_providers import Unavailable, root_cause, short_reason

def self_test():
    """--self-test: the pure-Python launch logic (manifest checks, tensor map
    rows, argument packing, the alignment check), no GPU or libcuda needed."""
    import ctypes as C
    import struct
    params = [{"name": n, "type": "ptr<bf16>"} for n in "qkvo"] + [
        {"name": "lse", "type": "ptr<f32>"}, {"name": "seqlen", "type": "i32"},
        {"name": "sm_scale", "type": "f32"}]
    kv = dict(elemBytes=2, rowElems=128, rowStride=128, boxElems=64, boxRows=64)
    man = {"kernelName": "flash_fwd", "params": params,
           "tensorMaps": [dict(arg=1, **kv), dict(arg=2, **kv)]}

    def raises(fn, text):
        try:
            fn()
        except RuntimeError as e:
            assert text in str(e), f"expected {text!r} in {str(e)!r}"
            return
        raise AssertionError(f"no error, expected {text!r}")

    # Manifest checks.
    assert check_tensor_maps({"params": params}) == []  # older manifests: no key, no maps
    assert len(check_tensor_maps(man)) == 2
    for change, text in [(dict(arg=5), '"tensorMaps"[0] "arg" 5 is \'seqlen\' of type i32, not a pointer'),
                         (dict(arg=7), '"arg" 7 is not a parameter (the kernel has 7)'),
                         (dict(elemBytes=4), '"elemBytes" must be 1 or 2'),
                         (dict(boxRows=0), '"boxRows" must be positive'),
                         (dict(rowStride=100), '"rowStride" 100 is less than "rowElems" 128'),
                         (dict(rowElems=100, rowStride=100, boxElems=32), 'not a multiple of 16'),
                         (dict(boxElems=72), '"boxElems" 72 of 2-byte elements is 144 bytes'),
                         (dict(boxRows=257), '"boxRows" must be at most 256'),
                         (dict(extra=1), 'unknown key "extra"')]:
        bad = dict(man, tensorMaps=[dict(man["tensorMaps"][0], **change)])
        raises(lambda: check_tensor_maps(bad), text)
    raises(lambda: check_tensor_maps(dict(man, tensorMaps=[{"arg": 1}])), 'missing key "elemBytes"')
    # A run-time row stride (flex_fwd, flash_fwd_bshd): rowElems 0 (rows as
    # long as the stride), the stride rowStride x the "strideArgs" arguments.
    sman = dict(man, params=params[:5] + [{"name": "k_row", "type": "i32"}, params[6]],
                tensorMaps=[dict(kv, arg=1, rowElems=0, strideArgs=[5])])
    assert len(check_tensor_maps(sman)) == 1
    for change, text in [(dict(strideArgs=[6]), '"strideArgs" names \'sm_scale\' of type f32, not an integer'),
                         (dict(strideArgs=[9]), '"strideArgs" holds 9, not a parameter index'),
                         (dict(strideArgs=5), '"strideArgs" must be an array'),
                         (dict(strideArgs=[], rowStride=32), '"rowStride" 32 is less than "boxElems" 64')]:
        raises(lambda: check_tensor_maps(dict(sman, tensorMaps=[dict(sman["tensorMaps"][0], **change)])), text)
    slaunch = KernelLauncher(sman, 0, (1, 1, 1), (128, 1, 1), 0, 0)
    slaunch.pack(1 << 40, 1 << 40, 0, 0, 0, 8, 0.125)  # [B, S, 8, 128]: rows 8 x 128 apart
    assert slaunch.row_stride(0) == 1024
    assert tensor_map_rows(sman["tensorMaps"][0], 1 << 40, 1 << 40, 2048 * 10, "map", 1024) == 10
    slaunch.pack(1 << 40, 1 << 40, 0, 0, 0, 0, 0.125)
    raises(lambda: slaunch.row_stride(0), "row stride 128 x 'k_row' = 0 is not a positive stride")

    # Rows: every whole row that fits in the allocation from the pointer on.
    t, base = man["tensorMaps"][0], 1 << 40
    rows = lambda p, size: tensor_map_rows(t, p, base, size, "map")
    assert rows(base, 256 * 1024) == 1024          # exactly 1024 rows of 256 bytes
    assert rows(base, 256 * 1024 + 255) == 1024    # a partial row is not mapped
    assert rows(base + 256, 256 * 1024) == 1023    # pointer one row in
    assert rows(base, 256) == 1                    # one row exactly
    t2 = dict(t, rowElems=64)                      # rows narrower than their stride
    assert tensor_map_rows(t2, base, base, 256 + 128, "map") == 2  # the last row needs 128 bytes only
    assert tensor_map_rows(t, base, base, 1 << 50, "map") == TMA_MAX_ROWS
    raises(lambda: rows(base, 255), "map: pointer 0x10000000000 has 255 bytes of its allocation "
                                    "(0x10000000000, 255 bytes) from there, less than one row (256 bytes)")
    raises(lambda: rows(base + 4096, 4096), "less than one row")

    # Argument packing: kernelParams[i] points at argument i's bytes, then at each map.
    launch = KernelLauncher(man, 0, (2, 3, 1), (128, 1, 1), 0, 0)
    vals = (0x7F0000000000, 0x7F0000010000, 0x7F0000020000, 0x7F0000030000, 0x7F0000040000, 4096, 0.125)
    launch.pack(*vals)
    want = [struct.pack("<Q", v) for v in vals[:5]] + [struct.pack("<i", 4096), struct.pack("<f", 0.125)]
    kp = launch.kernel_params
    assert len(kp) == 9
    for i, w in enumerate(want):
        assert C.string_at(kp[i], len(w)) == w, f"argument {i}"
    for j, m in enumerate(launch.maps):
        assert kp[7 + j] == C.addressof(m[1]) and C.sizeof(m[1]) == 128
        assert list(m[2]) == [128, 0] and list(m[3]) == [256] and list(m[4]) == [64, 64] and list(m[5]) == [1, 1]
    launch.pack(*vals[:5], 512, 2.0 ** -0.5)
    assert C.string_at(kp[6], 4) == struct.pack("<f", 2.0 ** -0.5)
    raises(lambda: launch.pack(*vals[:6]), "flash_fwd takes 7 arguments, got 6")
    # The alignment check comes before any driver call.
    launch.pack(vals[0], vals[1] + 8, *vals[2:])
    raises(lambda: launch.encode(0), "tensor map of argument 1 'k': pointer 0x7f0000010008 is not 16-byte aligned (TMA needs it)")
    launch.pack(vals[0], 0, *vals[2:])
    raises(lambda: launch.encode(0), "tensor map of argument 1 'k': null pointer (TMA needs device memory)")
    raises(lambda: KernelLauncher(dict(man, params=params + [{"name": "h", "type": "f16"}]), 0, (1, 1, 1),
                                  (1, 1, 1), 0, 0), "'h' has type f16")
    # Persistent: the resident programs (or fewer) along x, the logical grid
    # after the arguments and before the maps.
    pman = dict(man, persistent=True)
    raises(lambda: KernelLauncher(pman, 0, (2, 3, 1), (128, 1, 1), 0, 0), "needs the resident program count")
    raises(lambda: KernelLauncher(pman, 0, (2**29 + 1, 2, 1), (128, 1, 1), 0, 0, resident=264),
           "more than a persistent kernel counts")
    launch = KernelLauncher(pman, 0, (16, 128, 1), (128, 1, 1), 0, 0, resident=264)
    assert launch.grid == (264, 1, 1), launch.grid
    kp = launch.kernel_params
    assert len(kp) == 12
    assert [C.string_at(kp[7 + i], 4) for i in range(3)] == [struct.pack("<I", g) for g in (16, 128, 1)]
    assert kp[10] == C.addressof(launch.maps[0][1]) and kp[11] == C.addressof(launch.maps[1][1])
    assert KernelLauncher(pman, 0, (3, 2, 5), (128, 1, 1), 0, 0, resident=264).grid == (30, 1, 1)
    assert KernelLauncher(man, 0, (16, 128, 1), (128, 1, 1), 0, 0, resident=264).grid == (16, 128, 1)
    # gridArgs: after the user's arguments, before the maps; a grid y over
    # 65535 is two launches, the second starting at y = 65535.
    gman = dict(man, gridArgs=["offset_y", "size_y"])
    launch = KernelLauncher(gman, 0, (2, 70000, 1), (128, 1, 1), 0, 0)
    assert launch.launches == [((2, 65535, 1), [0, 70000]), ((2, 4465, 1), [65535, 70000])], launch.launches
    kp = launch.kernel_params
    assert len(kp) == 11 and kp[7] == C.addressof(launch.grid_arg_slots[0]) and kp[9] == C.addressof(launch.maps[0][1])
    assert KernelLauncher(dict(man, gridArgs=[]), 0, (1, 1, 70000), (128, 1, 1), 0, 0).launches == \
        [((1, 1, 65535), []), ((1, 1, 4465), [])]
    raises(lambda: KernelLauncher(man, 0, (1, 70000, 1), (128, 1, 1), 0, 0), "has no \"gridArgs\"")
    # Configurations: the printed form, the command-line forms, tilec's flags.
    c = parse_cfg("128,64,8,2,2,0,1")  # an older positional line
    assert c == make_cfg(128, 64, num_warps=8, min_blocks=2, num_stages=2, persistent=True), c
    assert cfg_str(c) == "BM=128,BN=64,W=8,MB=2,ST=2,PS=1"
    assert parse_cfg("BM=128,BN=128,W=8,ST=3,P=1,PS=1") == parse_cfg("128,128,8,producer,persistent")
    assert parse_cfg("128,128,num_warps=8,producer=true,l2_group=256,reverse_x") == \
        make_cfg(128, 128, num_warps=8, producer=True, l2_group=256, reverse_x=True)
    assert cfg_str(parse_cfg("64,64,4")) == "BM=64,BN=64,W=4,ST=3" == cfg_str(KERNEL_DEFAULT)
    assert cfg_str(TUNE_CFGS[-1]) == "BM=64,BN=128,W=4,ST=4,P=1,PS=1,G=3"
    assert cfg_str(parse_cfg("64,64,4,tma=false,TA=1,TS=0,PP=0,L2=512,RX=1")) == \
        "BM=64,BN=64,W=4,ST=3,TMA=0,TA=1,TS=0,PP=0,L2=512,RX=1"
    assert all(parse_cfg(cfg_str(c)) == c for c in TUNE_CFGS)
    for text, why in [("1,2", "a config needs BM, BN and NUM_WARPS: '1,2'"),
                      ("64,64,3", "num_warps must be a power of two in [1, 32], got 3"),
                      ("64,64,4,num_stages=5", "num_stages must be an integer in [2, 4], got 5"),
                      ("64,64,4,G=3", "cta_programs > 1 needs persistent = true"),
                      ("64,64,8,G=4,P=1,PS=1", "needs 36 warps; a CTA has at most 32"),
                      ("64,64,4,warps=4", "a config is BM,BN,NUM_WARPS then schedule fields"),
                      ("64,64,4,producer=yes", "producer expects true or false, got 'yes'")]:
        try:
            parse_cfg(text)
            raise AssertionError(f"parse_cfg({text!r}) passed, expected {why!r}")
        except ValueError as e:
            assert why in str(e), (text, str(e))
    tc = Tilec.__new__(Tilec)
    tc.exe, tc.tile, tc.arch, tc.extra, tc.legacy = "tilec", "k.tile", "sm_90a", {"BN": 32}, False
    assert tc.args("bf16", 64, True, parse_cfg("128,128,8,P=1,TMA=0,L2=512,RX=1")) == [
        "tilec", "k.tile", "-arch=sm_90a", "-D", "BM=128", "-D", "BN=32", "-D", "T=bf16", "-D", "D=64",
        "-D", "CAUSAL=true", "-num-warps=8", "-tma=false", "-producer", "-l2-group=512", "-reverse-x"]
    assert tc.args("f16", 128, False, KERNEL_DEFAULT)[-1] == "CAUSAL=false"  # no schedule flags
    # A tilec from before the schedule: the schedule as the old kernel's -D.
    tc.legacy, tc.extra = True, {}
    assert tc.args("bf16", 64, True, parse_cfg("128,128,8,P=1,PS=1,L2=512,RX=1"))[3:] == [
        "-D", "BM=128", "-D", "BN=128", "-D", "NUM_WARPS=8", "-D", "MIN_BLOCKS=0", "-D", "TMA_STAGES=3",
        "-D", "PRODUCER=true", "-D", "PERSISTENT=true", "-D", "T=bf16", "-D", "D=64", "-D", "CAUSAL=true"]
    assert legacy_defines(parse_cfg("64,128,4,ST=4,P=1,PS=1,G=3,TMA=0"), 64, False) == dict(
        NUM_WARPS=4, MIN_BLOCKS=0, TMA_STAGES=4, TMA="false", PRODUCER="true", PERSISTENT="true",
        CTA_PROGRAMS=3)
    assert legacy_defines(parse_cfg("64,64,4"), 64, True)["GROUP_MIB"] == 0
    assert legacy_defines(parse_cfg("64,64,4,L2=512,RX=1"), 64, True)["GROUP_MIB"] == 8
    raises(lambda: legacy_defines(parse_cfg("64,64,4,L2=512"), 64, True), "or neither")
    # Causal candidates of --tune: grouped for L2, longest first, one program per CTA.
    causal = tune_configs(dict(causal=True, D=64))
    assert len(causal) == len(TUNE_CFGS) - 1
    assert all(schedule_of(c)["reverse_x"] and schedule_of(c)["cta_programs"] == 1 for c in causal)
    assert [schedule_of(c)["l2_group"] for c in causal[:2]] == [1024, 512]
    assert tune_configs(dict(causal=False, D=64)) is TUNE_CFGS
    # The config tables: lookup as ConfigTable::lookup; --tune's merge and layout.
    for path in sorted(CONFIGS.glob("flash_fwd.*.json")):
        t = load_table(path)
        assert format_table(merge_table(t, t["arch"], [])) == path.read_text(), f"{path}: layout"
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.json"
        e = lambda T, D, c, S, bm: dict(match=dict(T=T, D=D, CAUSAL=c), seqlen=S,
                                        defines=dict(BM=bm, BN=64), schedule={})
        table = dict(kernel="flash_fwd", arch="sm_90a", keys=TABLE_KEYS, size="seqlen",
                     default=dict(defines=dict(BM=16, BN=16), schedule=dict(num_warps=8)),
                     entries=[e("bf16", 64, False, 2048, 1), e("bf16", 64, False, 512, 2),
                              e("bf16", 64, True, 1024, 3), e("f16", 64, False, 4096, 4)])
        path.write_text(json.dumps(table))
        t = load_table(path)
        bm = lambda dt, D, c, S: lookup(t, table_keys(dict(dtype=dt, D=D, causal=c)), S)["defines"]["BM"]
        assert [bm("bf16", 64, False, S) for S in (256, 512, 1024, 2048, 16384)] == [2, 2, 2, 1, 1]
        assert bm("bf16", 64, True, 512) == 3 and bm("fp16", 64, False, 512) == 4
        assert bm("bf16", 128, False, 2048) == 16 and bm("fp16", 64, True, 2048) == 16
        assert lookup(t, {}, 0) == make_cfg(16, 16, num_warps=8)
        s = dict(dtype="bf16", D=64, causal=False, S=512)
        merged = merge_table(t, "sm_90a", [table_entry(s, make_cfg(128, 64), 1.0),
                                          table_entry(dict(s, D=128), make_cfg(64, 64), 2.0)])
        assert [x["defines"]["BM"] for x in merged["entries"]] == [1, 128, 3, 4, 64]
        path.write_text(format_table(merged))
        assert lookup(load_table(path), table_keys(s), 600)["defines"]["BM"] == 128
        for change, why in [(dict(default=dict(defines=dict(BM=64, BN=64), schedule=dict(warps=8))),
                             "default.schedule: unknown schedule field 'warps'"),
                            (dict(entries=[dict(e("bf16", 64, False, 1, 1), match=dict(T="bf16"))]),
                             'entries[0].match: no value for key "D"'),
                            (dict(entries=[dict(e("bf16", 64, False, 1, 1), schedule=dict(cta_programs=2))]),
                             "entries[0].schedule: cta_programs > 1 needs persistent = true"),
                            (dict(keys="T"), '"keys" must be an array of names')]:
            path.write_text(json.dumps(dict(table, **change)))
            try:
                load_table(path)
                raise AssertionError(f"no error, expected {why!r}")
            except ValueError as err:
                assert why in str(err), (why, str(err))
    # flex's 'unavailable: REASON' statuses: the innermost cause, one short line.
    try:
        try:
            raise ModuleNotFoundError("No module named 'triton'\nmore")
        except ImportError as inner:
            raise RuntimeError("backend='inductor' raised:") from inner
    except RuntimeError as outer:
        assert short_reason(root_cause(outer)) == "ModuleNotFoundError: No module named 'triton'"
        assert short_reason(outer) == "RuntimeError: backend='inductor' raised:"
    assert short_reason(Unavailable("compile failed: X")) == "compile failed: X"
    assert short_reason(ValueError("\n\n" + "x" * 300), 20) == "ValueError: xxxxx..."
    assert short_reason(KeyError()) == "KeyError" and "flex" in PROVIDERS
    print("self-test: ok")
    return 0

