// RUN: tile-opt %s -split-input-file -tile-pingpong-dots | FileCheck %s

// tile-pingpong-dots (sm_90a, 8 warps: two warpgroups): each run of
// asynchronous dots of a block (from its first dot to its last, up to a
// wait for one of them) becomes a turn, tile.turn_wait ... tile.turn_pass,
// and warpgroup 1 passes once at the kernel's entry (turn_pass {first}).
// A tile.tma_wait inside a run moves before it with the pure scalars it
// reads. Input: tile-overlap-dots' loop after tile-async-dots, at D = 128
// (S = Q·Kᵀ and P·V of the block before: 2 x 128 multiply-adds per score).

// CHECK-LABEL: func.func @turns(
// CHECK-NEXT: tile.turn_pass {first}
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: %[[K:.*]] = tile.tma_wait {{.*}}slot = 0 : i64}
//   The V wait and the scalars it reads move before the turn.
// CHECK: %[[PREV:.*]] = arith.subi %[[I]],
// CHECK: arith.divsi %[[PREV]],
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: arith.andi
// CHECK: %[[V:.*]] = tile.tma_wait {{.*}}slot = 1 : i64}
// CHECK-NEXT: tile.turn_wait
// CHECK-NEXT: %[[S:.*]] = tile.dot %{{.*}}, %[[K]], %{{.*}} {async}
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: tile.tma_copy {{.*}}slot = 1 : i64, stages = 3 : i64}
// CHECK-NEXT: %[[O:.*]] = tile.dot %{{.*}}, %[[V]], %{{.*}} {async}
// CHECK-NEXT: tile.turn_pass{{$}}
// CHECK-NEXT: tile.dot_wait %[[S]] {pending = 1 : i64}
// CHECK-NOT: tile.turn_
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0], [64, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32], [0, 64]], lanes = [[8, 0], [16, 0], [32, 0], [64, 0], [0, 1]], warps = [[0, 2], [0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0], [64, 0]], lanes = [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]], warps = [[2, 0], [4, 0], [8, 0]]>
!acc = !tile.tile<128x128xf32, #acc>
!p = !tile.tile<128x128xbf16, #acc>
!kt = !tile.tile<128x128xbf16, #kt>
!v = !tile.tile<128x128xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @turns(%q: !p, %vp: !tile.ptr<bf16>, %p0: !p, %n: i32) -> !acc attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c128 = arith.constant 128 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r:2 = scf.for %i = %c128 to %n step %c128 iter_args(%acc = %zero, %p = %p0) -> (!acc, !p) : i32 {
      %it = arith.divsi %i, %c128 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c128 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero {async} : !p, !kt, !acc
      %prev = arith.subi %i, %c128 : i32
      %pit = arith.divsi %prev, %c128 : i32
      %pstage = arith.remui %pit, %c3 : i32
      %pround = arith.divui %pit, %c3 : i32
      %pparity = arith.andi %pround, %c1 : i32
      %v = tile.tma_wait %pstage, %pparity, %c128 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %more = arith.cmpi slt, %i, %n : i32
      tile.tma_copy %vp, %i, %it, %more {inner_dim = 1 : i64, row_stride = 128 : i64, shape = array<i64: 128, 128>, slot = 1 : i64, stages = 3 : i64} : <bf16>
      %o = tile.dot %p, %v, %acc {async} : !p, !v, !acc
      %sw = tile.dot_wait %s {pending = 1 : i64} : !acc
      %e = tile.exp2 %sw : !acc
      %pn = tile.cast %e : !acc -> !p
      %ow = tile.dot_wait %o {pending = 0 : i64} : !acc
      scf.yield %ow, %pn : !acc, !p
    }
    return %r#0 : !acc
  }
}

// -----

// Not with 4 warps (one warpgroup), not where the kernel sets
// pingpong = false, and not where a ring has two stages (the issuing
// thread of a copy in a turn would wait for every warp). (The pass reads
// the warp count from the schedule only; the layouts here stay 8 warps'.)
// CHECK-LABEL: func.func @four_warps(
// CHECK-NOT: tile.turn_
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0], [64, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32], [0, 64]], lanes = [[8, 0], [16, 0], [32, 0], [64, 0], [0, 1]], warps = [[0, 2], [0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0], [64, 0]], lanes = [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]], warps = [[2, 0], [4, 0], [8, 0]]>
!acc = !tile.tile<128x128xf32, #acc>
!p = !tile.tile<128x128xbf16, #acc>
!kt = !tile.tile<128x128xbf16, #kt>
!v = !tile.tile<128x128xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @four_warps(%q: !p, %vp: !tile.ptr<bf16>, %p0: !p, %n: i32) -> !acc attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c128 = arith.constant 128 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r:2 = scf.for %i = %c128 to %n step %c128 iter_args(%acc = %zero, %p = %p0) -> (!acc, !p) : i32 {
      %it = arith.divsi %i, %c128 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c128 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero {async} : !p, !kt, !acc
      %prev = arith.subi %i, %c128 : i32
      %pit = arith.divsi %prev, %c128 : i32
      %pstage = arith.remui %pit, %c3 : i32
      %pround = arith.divui %pit, %c3 : i32
      %pparity = arith.andi %pround, %c1 : i32
      %v = tile.tma_wait %pstage, %pparity, %c128 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %more = arith.cmpi slt, %i, %n : i32
      tile.tma_copy %vp, %i, %it, %more {inner_dim = 1 : i64, row_stride = 128 : i64, shape = array<i64: 128, 128>, slot = 1 : i64, stages = 3 : i64} : <bf16>
      %o = tile.dot %p, %v, %acc {async} : !p, !v, !acc
      %sw = tile.dot_wait %s {pending = 1 : i64} : !acc
      %e = tile.exp2 %sw : !acc
      %pn = tile.cast %e : !acc -> !p
      %ow = tile.dot_wait %o {pending = 0 : i64} : !acc
      scf.yield %ow, %pn : !acc, !p
    }
    return %r#0 : !acc
  }
}

// -----

// CHECK-LABEL: func.func @no_pingpong(
// CHECK-NOT: tile.turn_
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0], [64, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32], [0, 64]], lanes = [[8, 0], [16, 0], [32, 0], [64, 0], [0, 1]], warps = [[0, 2], [0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0], [64, 0]], lanes = [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]], warps = [[2, 0], [4, 0], [8, 0]]>
!acc = !tile.tile<128x128xf32, #acc>
!p = !tile.tile<128x128xbf16, #acc>
!kt = !tile.tile<128x128xbf16, #kt>
!v = !tile.tile<128x128xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @no_pingpong(%q: !p, %vp: !tile.ptr<bf16>, %p0: !p, %n: i32) -> !acc attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8, pingpong = false>} {
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c128 = arith.constant 128 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r:2 = scf.for %i = %c128 to %n step %c128 iter_args(%acc = %zero, %p = %p0) -> (!acc, !p) : i32 {
      %it = arith.divsi %i, %c128 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c128 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero {async} : !p, !kt, !acc
      %prev = arith.subi %i, %c128 : i32
      %pit = arith.divsi %prev, %c128 : i32
      %pstage = arith.remui %pit, %c3 : i32
      %pround = arith.divui %pit, %c3 : i32
      %pparity = arith.andi %pround, %c1 : i32
      %v = tile.tma_wait %pstage, %pparity, %c128 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %more = arith.cmpi slt, %i, %n : i32
      tile.tma_copy %vp, %i, %it, %more {inner_dim = 1 : i64, row_stride = 128 : i64, shape = array<i64: 128, 128>, slot = 1 : i64, stages = 3 : i64} : <bf16>
      %o = tile.dot %p, %v, %acc {async} : !p, !v, !acc
      %sw = tile.dot_wait %s {pending = 1 : i64} : !acc
      %e = tile.exp2 %sw : !acc
      %pn = tile.cast %e : !acc -> !p
      %ow = tile.dot_wait %o {pending = 0 : i64} : !acc
      scf.yield %ow, %pn : !acc, !p
    }
    return %r#0 : !acc
  }
}

// -----

// CHECK-LABEL: func.func @two_stages(
// CHECK-NOT: tile.turn_
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0], [64, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32], [0, 64]], lanes = [[8, 0], [16, 0], [32, 0], [64, 0], [0, 1]], warps = [[0, 2], [0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0], [64, 0]], lanes = [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]], warps = [[2, 0], [4, 0], [8, 0]]>
!acc = !tile.tile<128x128xf32, #acc>
!p = !tile.tile<128x128xbf16, #acc>
!kt = !tile.tile<128x128xbf16, #kt>
!v = !tile.tile<128x128xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @two_stages(%q: !p, %vp: !tile.ptr<bf16>, %p0: !p, %n: i32) -> !acc attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 2 : i32
    %c128 = arith.constant 128 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r:2 = scf.for %i = %c128 to %n step %c128 iter_args(%acc = %zero, %p = %p0) -> (!acc, !p) : i32 {
      %it = arith.divsi %i, %c128 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c128 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero {async} : !p, !kt, !acc
      %prev = arith.subi %i, %c128 : i32
      %pit = arith.divsi %prev, %c128 : i32
      %pstage = arith.remui %pit, %c3 : i32
      %pround = arith.divui %pit, %c3 : i32
      %pparity = arith.andi %pround, %c1 : i32
      %v = tile.tma_wait %pstage, %pparity, %c128 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %more = arith.cmpi slt, %i, %n : i32
      tile.tma_copy %vp, %i, %it, %more {inner_dim = 1 : i64, row_stride = 128 : i64, shape = array<i64: 128, 128>, slot = 1 : i64, stages = 2 : i64} : <bf16>
      %o = tile.dot %p, %v, %acc {async} : !p, !v, !acc
      %sw = tile.dot_wait %s {pending = 1 : i64} : !acc
      %e = tile.exp2 %sw : !acc
      %pn = tile.cast %e : !acc -> !p
      %ow = tile.dot_wait %o {pending = 0 : i64} : !acc
      scf.yield %ow, %pn : !acc, !p
    }
    return %r#0 : !acc
  }
}

// -----

// Runs of one dot each (a dot_wait between S and P·V ends the run): 128
// multiply-adds per score, less than the turns cost (256): no turns.
// CHECK-LABEL: func.func @one_dot_runs(
// CHECK-NOT: tile.turn_
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0], [64, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32], [0, 64]], lanes = [[8, 0], [16, 0], [32, 0], [64, 0], [0, 1]], warps = [[0, 2], [0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0], [64, 0]], lanes = [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]], warps = [[2, 0], [4, 0], [8, 0]]>
!acc = !tile.tile<128x128xf32, #acc>
!p = !tile.tile<128x128xbf16, #acc>
!kt = !tile.tile<128x128xbf16, #kt>
!v = !tile.tile<128x128xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @one_dot_runs(%q: !p, %n: i32) -> !acc attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c128 = arith.constant 128 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c128 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c128 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c128 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero {async} : !p, !kt, !acc
      %sw = tile.dot_wait %s {pending = 0 : i64} : !acc
      %e = tile.exp2 %sw : !acc
      %p = tile.cast %e : !acc -> !p
      %v = tile.tma_wait %stage, %parity, %c128 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %o = tile.dot %p, %v, %acc {async} : !p, !v, !acc
      %ow = tile.dot_wait %o {pending = 0 : i64} : !acc
      scf.yield %ow : !acc
    }
    return %r : !acc
  }
}
