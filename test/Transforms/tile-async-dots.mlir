// RUN: tile-opt %s -split-input-file -tile-async-dots | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-async-dots=arch=sm_80 | FileCheck %s --check-prefix=SM80

// tile-async-dots (sm_90a): each tile.dot whose B operand is a tile.tma_wait
// result becomes `async` and a tile.dot_wait goes before its first user
// (`pending`: asynchronous dots issued in between). A dot only yielded as a
// loop's accumulator is waited for at the iter_arg's first use in the next
// iteration and after the loop, when it is the body's only TMA-fed dot or
// its ring has two stages; else at the end of its iteration. TMA copies into
// the slot a waiting dot reads move after the wait. With arch=sm_80 (the
// option wins over tile.arch) no dot becomes asynchronous.

// SM80-NOT: async
// SM80-NOT: tile.dot_wait

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0], [8, 0]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!v = !tile.tile<64x64xbf16, #v>

// The only dot of the loop, 3 stages: the wait is on the accumulator at its
// first use in the next iteration, and after the loop; the copy into the
// slot it reads (the next stage) moves after that wait.
// CHECK-LABEL: func.func @one_dot(
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK-NOT: tile.tma_copy
// CHECK: %[[K:.*]] = tile.tma_wait
// CHECK-NEXT: %[[W:.*]] = tile.dot_wait %[[ACC]] {pending = 0 : i64}
// CHECK-NEXT: tile.tma_copy {{.*}}slot = 0 : i64, stages = 3 : i64}
// CHECK-NEXT: %[[D:.*]] = tile.dot %{{.*}}, %[[K]], %[[W]] {async}
// CHECK-NEXT: scf.yield %[[D]]
// CHECK: %[[DONE:.*]] = tile.dot_wait %[[R]] {pending = 0 : i64}
// CHECK-NEXT: return %[[DONE]]
module attributes {tile.arch = "sm_90a"} {
  func.func @one_dot(%q: !p, %k: !tile.ptr<bf16>, %n: i32) -> !acc attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %next = arith.addi %i, %c64 : i32
      %more = arith.cmpi slt, %next, %n : i32
      %nit = arith.addi %it, %c1 : i32
      tile.tma_copy %k, %next, %nit, %more {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
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

// -----

// Two TMA-fed dots on rings of 3 stages: S = Q·Kᵀ is waited for right before
// its first user; the accumulating O += P·V at the end of its iteration
// (ptxas cannot follow a product in flight across the back edge between
// other groups). The copies stay at the top.
// CHECK-LABEL: func.func @three_stages(
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: tile.tma_copy {{.*}}slot = 0 : i64
// CHECK-NEXT: tile.tma_copy {{.*}}slot = 1 : i64
// CHECK: %[[S:.*]] = tile.dot {{.*}} {async}
// CHECK-NEXT: %[[SW:.*]] = tile.dot_wait %[[S]] {pending = 0 : i64}
// CHECK-NEXT: %[[E:.*]] = tile.exp2 %[[SW]]
// CHECK: tile.mul %[[ACC]], %[[E]]
// CHECK: %[[O:.*]] = tile.dot {{.*}} {async}
// CHECK-NEXT: %[[OW:.*]] = tile.dot_wait %[[O]] {pending = 0 : i64}
// CHECK-NEXT: scf.yield %[[OW]]
// CHECK-NOT: tile.dot_wait
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0], [8, 0]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!v = !tile.tile<64x64xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @three_stages(%q: !p, %k: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32) -> !acc attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %next = arith.addi %i, %c64 : i32
      %more = arith.cmpi slt, %next, %n : i32
      %nit = arith.addi %it, %c1 : i32
      tile.tma_copy %k, %next, %nit, %more {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
      tile.tma_copy %vp, %next, %nit, %more {inner_dim = 1 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 1 : i64, stages = 3 : i64} : <bf16>
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero : !p, !kt, !acc
      %e = tile.exp2 %s : !acc
      %p = tile.cast %e : !acc -> !p
      %v = tile.tma_wait %stage, %parity, %c64 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %a = tile.mul %acc, %e : !acc
      %o = tile.dot %p, %v, %a : !p, !v, !acc
      scf.yield %o : !acc
    }
    return %r : !acc
  }
}

// -----

// Two stages: O += P·V is waited for in the next iteration, at the
// accumulator's first use (pending = 1: S of this iteration was issued
// before it), and after the loop; the copy of V's slot moves after that
// wait.
// CHECK-LABEL: func.func @two_stages(
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: tile.tma_copy {{.*}}slot = 0 : i64
// CHECK-NOT: tile.tma_copy
// CHECK: %[[S:.*]] = tile.dot {{.*}} {async}
// CHECK-NEXT: %[[SW:.*]] = tile.dot_wait %[[S]] {pending = 0 : i64}
// CHECK: %[[AW:.*]] = tile.dot_wait %[[ACC]] {pending = 1 : i64}
// CHECK-NEXT: tile.tma_copy {{.*}}slot = 1 : i64
// CHECK-NEXT: %[[A:.*]] = tile.mul %[[AW]],
// CHECK-NEXT: %[[O:.*]] = tile.dot %{{.*}}, %{{.*}}, %[[A]] {async}
// CHECK-NEXT: scf.yield %[[O]]
// CHECK: %[[DONE:.*]] = tile.dot_wait %[[R]] {pending = 0 : i64}
// CHECK-NEXT: return %[[DONE]]
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0], [8, 0]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!v = !tile.tile<64x64xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @two_stages(%q: !p, %k: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32) -> !acc attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %next = arith.addi %i, %c64 : i32
      %more = arith.cmpi slt, %next, %n : i32
      %nit = arith.addi %it, %c1 : i32
      tile.tma_copy %k, %next, %nit, %more {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 2 : i64} : <bf16>
      tile.tma_copy %vp, %next, %nit, %more {inner_dim = 1 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 1 : i64, stages = 2 : i64} : <bf16>
      %stage = arith.remui %it, %c2 : i32
      %round = arith.divui %it, %c2 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %s = tile.dot %q, %kt, %zero : !p, !kt, !acc
      %e = tile.exp2 %s : !acc
      %p = tile.cast %e : !acc -> !p
      %v = tile.tma_wait %stage, %parity, %c64 {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> !v
      %a = tile.mul %acc, %e : !acc
      %o = tile.dot %p, %v, %a : !p, !v, !acc
      scf.yield %o : !acc
    }
    return %r : !acc
  }
}

// -----

// A dot whose B is not read from a TMA slot stays synchronous.
// CHECK-LABEL: func.func @not_tma(
// CHECK-NOT: async
// CHECK-NOT: tile.dot_wait
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
#v = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0], [8, 0]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!v = !tile.tile<64x64xbf16, #v>
module attributes {tile.arch = "sm_90a"} {
  func.func @not_tma(%q: !p, %kt: !kt) -> !acc attributes {tile.kernel} {
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %s = tile.dot %q, %kt, %zero : !p, !kt, !acc
    %e = tile.exp2 %s : !acc
    return %e : !acc
  }
}
