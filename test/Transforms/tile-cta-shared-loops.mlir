// RUN: tile-opt %s -split-input-file -tile-cta-shared-loops | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-cta-shared-loops -tile-split-masked-loops | FileCheck %s --check-prefix=SPLIT

// tile-cta-shared-loops (cta_programs = G > 1): a loop whose upper bound
// depends on tile.cta_member runs to the largest bound over the CTA's G
// programs; an iteration past the program's own bound masks its stores and
// its member-dependent loads and carries the loop's values through.

// ub = (member + 1) * 32: the loop runs to max over members 0..2 of it. The
// load of x at iv + iota (the same for every member, a copy the programs
// can share) keeps its mask; the load of y (its address depends on the
// member) and the store get `iv < ub`; the sum yields where(iv < ub, ...).
// CHECK-LABEL: func.func @causal_like(
// CHECK-SAME: %[[X:[^:]*]]: !tile.ptr<f32>, %[[Y:[^:]*]]: !tile.ptr<f32>, %[[N:[^:]*]]: i32)
// CHECK: %[[M:.*]] = tile.cta_member : i32
// CHECK: %[[UB:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[U0:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[U1:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[T1:.*]] = arith.maxsi %[[U0]], %[[U1]] : i32
// CHECK: %[[U2:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[TOP:.*]] = arith.maxsi %[[T1]], %[[U2]] : i32
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %[[TOP]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK-NEXT: %[[ACT:.*]] = arith.cmpi slt, %[[IV]], %[[UB]] : i32
// CHECK: %[[VX:.*]] = tile.load %{{.*}}, %[[OK:[^,]*]], %{{.*}} : <32x!tile.ptr<f32>>, !tile.tile<32xi1>
// CHECK: %[[A1:.*]] = tile.splat %[[ACT]] : <32xi1>
// CHECK-NEXT: %[[OKY:.*]] = tile.and %[[OK]], %[[A1]] : <32xi1>
// CHECK-NEXT: tile.load %{{.*}}, %[[OKY]], %{{.*}} : <32x!tile.ptr<f32>>
// CHECK: %[[A2:.*]] = tile.splat %[[ACT]] : <32xi1>
// CHECK-NEXT: tile.store %{{.*}}, %[[VX]], %[[A2]] :
// CHECK: %[[S:.*]] = tile.add %[[ACC]],
// CHECK: %[[A3:.*]] = tile.splat %[[ACT]] : <32xi1>
// CHECK-NEXT: %[[KEEP:.*]] = tile.where %[[A3]], %[[S]], %[[ACC]] : <32xi1>, <32xf32>
// CHECK-NEXT: scf.yield %[[KEEP]]
//
// tile-split-masked-loops then drops `iv < ub` below the smallest split
// point of the members (the unmasked loop has no where), and keeps it in
// the masked tail, which runs to the largest bound.
// SPLIT-LABEL: func.func @causal_like(
// SPLIT: scf.for
// SPLIT-NOT: tile.where
// SPLIT: scf.yield
// SPLIT: scf.for
// SPLIT: tile.where
// SPLIT: } {tile.masked_tail}
func.func @causal_like(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cta_programs = 3, persistent = true, producer = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %m = tile.cta_member : i32
  %m1 = arith.addi %m, %c1 : i32
  %ub = arith.muli %m1, %c32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %ys = tile.splat %y : <32x!tile.ptr<f32>>
  %ns = tile.splat %n : <32xi32>
  %ms = tile.splat %ub : <32xi32>
  %r = scf.for %i = %c0 to %ub step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %ok = tile.cmp lt %idx, %ns : <32xi32> -> <32xi1>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %vx = tile.load %px, %ok, %zero : <32x!tile.ptr<f32>>, !tile.tile<32xi1>, !tile.tile<32xf32> -> <32xf32>
    %jdx = tile.add %idx, %ms : <32xi32>
    %py = tile.addptr %ys, %jdx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %vy = tile.load %py, %ok, %zero : <32x!tile.ptr<f32>>, !tile.tile<32xi1>, !tile.tile<32xf32> -> <32xf32>
    tile.store %py, %vx : <32x!tile.ptr<f32>>, <32xf32>
    %p = tile.mul %vx, %vy : <32xf32>
    %s = tile.add %acc, %p : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// Bounds the members share: the loop is left as it is.
// CHECK-LABEL: func.func @shared_bounds(
// CHECK-NOT: arith.maxsi
// CHECK-NOT: arith.cmpi
// CHECK: scf.for %{{.*}} = %{{.*}} to %arg1 step
// CHECK-NOT: tile.where
// CHECK: return
func.func @shared_bounds(%x: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cta_programs = 3, persistent = true, producer = true>} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px : <32x!tile.ptr<f32>> -> <32xf32>
    %s = tile.add %acc, %v : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// One program per CTA: nothing to share, the loop is left as it is.
// CHECK-LABEL: func.func @one_program(
// CHECK-NOT: arith.maxsi
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB:[^ ]*]] step
// CHECK-NOT: tile.where
// CHECK: return
func.func @one_program(%x: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %m = tile.cta_member : i32
  %ub = arith.muli %m, %c32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %r = scf.for %i = %c0 to %ub step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px : <32x!tile.ptr<f32>> -> <32xf32>
    %s = tile.add %acc, %v : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// A lower bound that depends on the member would change which iterations
// run (lb(m) + k * step): left alone (tile-warp-specialize refuses it).
// CHECK-LABEL: func.func @member_lower_bound(
// CHECK-NOT: arith.maxsi
// CHECK-NOT: tile.where
// CHECK: return
func.func @member_lower_bound(%x: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cta_programs = 2, persistent = true, producer = true>} {
  %c32 = arith.constant 32 : i32
  %m = tile.cta_member : i32
  %lb = arith.muli %m, %c32 : i32
  %ub = arith.addi %lb, %n : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %r = scf.for %i = %lb to %ub step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px : <32x!tile.ptr<f32>> -> <32xf32>
    %s = tile.add %acc, %v : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// An upper bound that depends on the member through a value an outer loop
// carries: its value over the members cannot be rebuilt by cloning the
// arithmetic with a constant member, so the inner loop is left alone.
// CHECK-LABEL: func.func @carried_bound(
// CHECK-NOT: arith.maxsi
// CHECK-NOT: tile.where
// CHECK: return
func.func @carried_bound(%x: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cta_programs = 2, persistent = true, producer = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %m = tile.cta_member : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %r:2 = scf.for %o = %c0 to %n step %c1 iter_args(%ub = %m, %acc0 = %zero) -> (i32, !tile.tile<32xf32>) : i32 {
    %in = scf.for %i = %c0 to %ub step %c32 iter_args(%acc = %acc0) -> (!tile.tile<32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %idx = tile.add %is, %iota : <32xi32>
      %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
      %v = tile.load %px : <32x!tile.ptr<f32>> -> <32xf32>
      %s = tile.add %acc, %v : <32xf32>
      scf.yield %s : !tile.tile<32xf32>
    }
    %next = arith.addi %ub, %c32 : i32
    scf.yield %next, %in : i32, !tile.tile<32xf32>
  }
  return %r#1 : !tile.tile<32xf32>
}

// -----

// A load whose pointer comes from outside the loop and depends on the
// member is masked with iv < ub too (it would read past its own range in
// the iterations another member adds).
// CHECK-LABEL: func.func @outside_pointer(
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[ACT:.*]] = arith.cmpi slt, %[[IV]],
// CHECK: %[[A:.*]] = tile.splat %[[ACT]] : <32xi1>
// CHECK-NEXT: tile.load %{{.*}}, %[[A]] : <32x!tile.ptr<f32>>, !tile.tile<32xi1>
func.func @outside_pointer(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cta_programs = 2, persistent = true, producer = true>} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %m = tile.cta_member : i32
  %ub = arith.muli %m, %c32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %ym = tile.addptr %y, %ub : !tile.ptr<f32>, i32
  %ys = tile.splat %ym : <32x!tile.ptr<f32>>
  %r = scf.for %i = %c0 to %ub step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px : <32x!tile.ptr<f32>> -> <32xf32>
    %w = tile.load %ys : <32x!tile.ptr<f32>> -> <32xf32>
    %p = tile.mul %v, %w : <32xf32>
    %s = tile.add %acc, %p : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}
