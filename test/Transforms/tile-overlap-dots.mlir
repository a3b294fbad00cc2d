// RUN: tile-opt %s -split-input-file -tile-overlap-dots | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-overlap-dots=arch=sm_80 | FileCheck %s --check-prefix=SM80

// tile-overlap-dots (sm_90a): in an scf.for whose accumulator is yielded by
// a dot reading a TMA slot (O += P·V), that dot and the ops only it needs
// (the V wait) run one iteration late, right after the next iteration's
// first dot (S = Q·Kᵀ): a prologue (stage 0 of the first iteration), the
// loop from lb + step with P carried as an iter_arg, an epilogue (stage 1
// of the last iteration), all under `lb < ub`. The stage and parity of the
// V wait, pure functions of the induction variable, are recomputed for
// i - step. On sm_80 (the pass's `arch` wins over tile.arch) nothing moves.

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0], [8, 0]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!v = !tile.tile<64x64xbf16, #v>

// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.tile<64x64xbf16, {{.*}}>, %[[N:[^:]*]]: i32)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i32
// CHECK: %[[ZERO:.*]] = tile.full 0.0
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %[[C0]], %[[N]] : i32
// CHECK: %[[R:.*]] = scf.if %[[RUNS]]
//   Prologue: S and P of the first iteration.
// CHECK: %[[K0:.*]] = tile.tma_wait {{.*}}slot = 0 : i64}
// CHECK: %[[S0:.*]] = tile.dot %[[Q]], %[[K0]], %[[ZERO]]
// CHECK: %[[E0:.*]] = tile.exp2 %[[S0]]
// CHECK: %[[P0:.*]] = tile.cast %[[E0]]
// CHECK-NOT: tile.dot
// CHECK: %[[LB1:.*]] = arith.addi %[[C0]], %[[C64]] : i32
// CHECK: %[[L:.*]]:2 = scf.for %[[I:.*]] = %[[LB1]] to %[[N]] step %[[C64]] iter_args(%[[ACC:.*]] = %[[ZERO]], %[[P:.*]] = %[[P0]])
//   Stage 0 up to its first dot, then stage 1 of i - 64, then the rest.
// CHECK: %[[K:.*]] = tile.tma_wait {{.*}}slot = 0 : i64}
// CHECK: %[[S:.*]] = tile.dot %[[Q]], %[[K]], %[[ZERO]]
// CHECK: %[[PREV:.*]] = arith.subi %[[I]], %[[C64]] : i32
// CHECK: %[[PIT:.*]] = arith.divsi %[[PREV]], %[[C64]] : i32
// CHECK: %[[PSTAGE:.*]] = arith.remui %[[PIT]],
// CHECK: %[[V:.*]] = tile.tma_wait %[[PSTAGE]], {{.*}}slot = 1 : i64}
// CHECK: %[[O:.*]] = tile.dot %[[P]], %[[V]], %[[ACC]]
// CHECK: %[[E:.*]] = tile.exp2 %[[S]]
// CHECK: %[[PN:.*]] = tile.cast %[[E]]
// CHECK: scf.yield %[[O]], %[[PN]]
//   Epilogue: stage 1 of the last iteration, 0 + (n - 0 - 1) / 64 * 64.
// CHECK: %[[LAST:.*]] = arith.addi %[[C0]], %{{.*}} : i32
// CHECK: %[[LIT:.*]] = arith.divsi %[[LAST]], %[[C64]] : i32
// CHECK: %[[LSTAGE:.*]] = arith.remui %[[LIT]],
// CHECK: %[[LV:.*]] = tile.tma_wait %[[LSTAGE]], {{.*}}slot = 1 : i64}
// CHECK: %[[LO:.*]] = tile.dot %[[L]]#1, %[[LV]], %[[L]]#0
// CHECK: scf.yield %[[LO]]
// CHECK: } else {
// CHECK: scf.yield %[[ZERO]]
// CHECK: return %[[R]]

// SM80-LABEL: func.func @attention(
// SM80-NOT: scf.if
// SM80: scf.for
// SM80-NOT: scf.for
// SM80: tile.dot
// SM80: tile.dot
module attributes {tile.arch = "sm_90a"} {
  func.func @attention(%q: !p, %n: i32) -> !acc attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero : !p, !kt, !acc
      %e = tile.exp2 %s : !acc
      %p = tile.cast %e : !acc -> !p
      %v = tile.tma_wait %stage, %parity, %c64 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %o = tile.dot %p, %v, %acc : !p, !v, !acc
      scf.yield %o : !acc
    }
    return %r : !acc
  }
}

// -----

// A masked tail (tile-split-masked-loops) runs a block or two: left alone.
// CHECK-LABEL: func.func @masked_tail(
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: } {tile.masked_tail}
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0], [8, 0]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!v = !tile.tile<64x64xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @masked_tail(%q: !p, %n: i32) -> !acc attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero : !p, !kt, !acc
      %e = tile.exp2 %s : !acc
      %p = tile.cast %e : !acc -> !p
      %v = tile.tma_wait %stage, %parity, %c64 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %o = tile.dot %p, %v, %acc : !p, !v, !acc
      scf.yield %o : !acc
    } {tile.masked_tail}
    return %r : !acc
  }
}

// -----

// One dot in the loop: nothing to overlap it with (an asynchronous dot
// already runs across the back edge).
// CHECK-LABEL: func.func @one_dot(
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK: tile.dot
// CHECK-NOT: scf.for
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
module attributes {tile.arch = "sm_90a"} {
  func.func @one_dot(%q: !p, %n: i32) -> !acc attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %acc : !p, !kt, !acc
      scf.yield %s : !acc
    }
    return %r : !acc
  }
}
