// RUN: tile-opt %s -split-input-file -tile-warp-specialize -verify-diagnostics | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-warp-specialize=arch=sm_80 2>/dev/null | FileCheck %s --check-prefix=SM80

// tile-warp-specialize (sm_90a, schedule producer = true): the kernel's
// body becomes the consumer region of a tile.warp_specialize; the producer
// region is the slice of the body the TMA copies need (the loop around
// them, with only the iter_args they use, and the scalars computing their
// operands), the copies marked `producer`. In the consumer region the
// copies go and each ring stage is released (tile.tma_release) once the
// dot reading it is waited for: the stage travels to the next iteration's
// dot_wait as an i32 iter_arg (-1 at first: nothing to release) and is
// released after the loop's last dot_wait. Input: a loop after
// tile-async-dots. Errors are in tile-warp-specialize-errors.mlir.
// With arch=sm_80 (the option wins over tile.arch) nothing changes.

// SM80-NOT: tile.warp_specialize
// SM80-NOT: producer,
// SM80-NOT: tile.tma_release

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!out = !tile.tile<64x64x!tile.ptr<f32>, #acc>

// CHECK-LABEL: func.func @producer(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.tile<64x64xbf16, {{.*}}>, %[[K:[^:]*]]: !tile.ptr<bf16>, %[[N:[^:]*]]: i32, %[[OUT:[^:]*]]: !tile.tile<64x64x!tile.ptr<f32>, {{.*}}>)
// CHECK-NEXT: tile.warp_specialize producer {
// CHECK: %[[RUNS:.*]] = arith.cmpi sgt, %[[N]],
// CHECK-NEXT: tile.tma_copy %[[K]], %{{.*}}, %{{.*}}, %[[RUNS]] {inner_dim = 0 : i64, producer, {{.*}}slot = 0 : i64, stages = 3 : i64}
//   The producer's loop carries nothing: the copies need no accumulator.
// CHECK-NEXT: scf.for %[[I:[^ ]*]] = %{{.*}} to %[[N]] step %{{[^ ]*}} : i32 {
// CHECK-NOT: tile.tma_wait
// CHECK-NOT: tile.dot
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]],
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[N]] : i32
// CHECK: tile.tma_copy %[[K]], %[[NEXT]], %{{.*}}, %[[MORE]] {inner_dim = 0 : i64, producer, {{.*}}stages = 3 : i64} : <bf16>
// CHECK-NEXT: }
// CHECK-NEXT: } consumer {
// CHECK-NOT: tile.tma_copy
// CHECK: %[[NONE:.*]] = arith.constant -1 : i32
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[HELD:.*]] = %[[NONE]]) -> (!tile.tile<64x64xf32, {{.*}}>, i32)
// CHECK: %[[STAGE:.*]] = arith.remui
// CHECK: %[[KT:.*]] = tile.tma_wait %[[STAGE]],
// CHECK-NEXT: %[[W:.*]] = tile.dot_wait %[[ACC]] {pending = 0 : i64}
// CHECK-NEXT: tile.tma_release %[[HELD]] {slot = 0 : i64}
// CHECK-NEXT: %[[S:.*]] = tile.dot %[[Q]], %[[KT]], %[[W]] {async}
// CHECK-NEXT: scf.yield %[[S]], %[[STAGE]]
// CHECK: %[[DONE:.*]] = tile.dot_wait %[[R]]#0 {pending = 0 : i64}
// CHECK-NEXT: tile.tma_release %[[R]]#1 {slot = 0 : i64}
// CHECK-NEXT: tile.store %[[OUT]], %[[DONE]]
// CHECK-NEXT: }
// CHECK-NEXT: return
module attributes {tile.arch = "sm_90a"} {
  func.func @producer(%q: !p, %k: !tile.ptr<bf16>, %n: i32, %out: !out) attributes {tile.kernel, tile.schedule = #tile.schedule<producer = true>} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %runs = arith.cmpi sgt, %n, %c0 : i32
    tile.tma_copy %k, %c0, %c0, %runs {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %next = arith.addi %i, %c64 : i32
      %more = arith.cmpi slt, %next, %n : i32
      %nit = arith.addi %it, %c1 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %w = tile.dot_wait %acc {pending = 0 : i64} : !acc
      tile.tma_copy %k, %next, %nit, %more {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
      %s = tile.dot %q, %kt, %w {async} : !p, !kt, !acc
      scf.yield %s : !acc
    }
    %done = tile.dot_wait %r {pending = 0 : i64} : !acc
    tile.store %out, %done : !out, !acc
    return
  }
}

// -----

// Without producer = true the kernel stays as it is.
// CHECK-LABEL: func.func @no_producer(
// CHECK-NOT: tile.warp_specialize
// CHECK-NOT: tile.tma_release
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!out = !tile.tile<64x64x!tile.ptr<f32>, #acc>
module attributes {tile.arch = "sm_90a"} {
  func.func @no_producer(%q: !p, %k: !tile.ptr<bf16>, %n: i32, %out: !out) attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %zero = tile.full 0.000000e+00 : f32 : !acc
    %runs = arith.cmpi sgt, %n, %c0 : i32
    tile.tma_copy %k, %c0, %c0, %runs {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) : i32 {
      %it = arith.divsi %i, %c64 : i32
      %next = arith.addi %i, %c64 : i32
      %more = arith.cmpi slt, %next, %n : i32
      %nit = arith.addi %it, %c1 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %w = tile.dot_wait %acc {pending = 0 : i64} : !acc
      tile.tma_copy %k, %next, %nit, %more {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
      %s = tile.dot %q, %kt, %w {async} : !p, !kt, !acc
      scf.yield %s : !acc
    }
    %done = tile.dot_wait %r {pending = 0 : i64} : !acc
    tile.store %out, %done : !out, !acc
    return
  }
}

// -----

// producer = true but no TMA copies (tma = false, or no load became one):
// a warning, and the kernel stays as it is.
// CHECK-LABEL: func.func @no_copies(
// CHECK-NOT: tile.warp_specialize
// CHECK: return
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
#kt = #tile.layout<regs = [[1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lanes = [[8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warps = [[0, 4], [0, 8]]>
!acc = !tile.tile<64x64xf32, #acc>
!p = !tile.tile<64x64xbf16, #acc>
!kt = !tile.tile<64x64xbf16, #kt>
!out = !tile.tile<64x64x!tile.ptr<f32>, #acc>
// expected-warning @+2 {{schedule producer = true has no effect: the kernel has no TMA copies}}
module attributes {tile.arch = "sm_90a"} {
  func.func @no_copies(%q: !p, %k: !tile.ptr<bf16>, %n: i32, %out: !out) attributes {tile.kernel, tile.schedule = #tile.schedule<producer = true>} {
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
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %kt = tile.tma_wait %stage, %parity, %c64 {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> !kt
      %w = tile.dot_wait %acc {pending = 0 : i64} : !acc
      %s = tile.dot %q, %kt, %w {async} : !p, !kt, !acc
      scf.yield %s : !acc
    }
    %done = tile.dot_wait %r {pending = 0 : i64} : !acc
    tile.store %out, %done : !out, !acc
    return
  }
}
