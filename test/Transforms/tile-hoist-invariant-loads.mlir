// RUN: tile-opt %s -split-input-file -tile-hoist-invariant-loads | FileCheck %s

// A scalar load and a masked tile load whose operands are computed from
// values defined outside the loop run once before it, masked by lb < ub
// (the tile load's own mask and-ed with it); the load whose address moves
// with the induction variable stays.
// CHECK-LABEL: func.func @hoisted
// CHECK-SAME: (%[[P:[^:]*]]: !tile.ptr<f32>, %[[IDS:[^:]*]]: !tile.ptr<i32>, %[[H:[^:]*]]: i32, %[[LB:[^:]*]]: i32, %[[UB:[^:]*]]: i32)
// CHECK: %[[TRIP:.*]] = arith.cmpi slt, %[[LB]], %[[UB]]
// CHECK-DAG: %[[GUARD:.*]] = tile.splat %[[TRIP]] : <64xi1>
// CHECK-DAG: %[[M:.*]] = tile.and %{{.*}}, %[[GUARD]]
// CHECK-DAG: tile.load %{{.*}}, %[[M]], %{{.*}} : <64x!tile.ptr<i32>>
// CHECK-DAG: tile.scalar_load %{{.*}}, %[[TRIP]] : <f32>, i1 -> f32
// CHECK: scf.for
// CHECK-NOT: tile.scalar_load
// CHECK: tile.load %{{.*}} : <64x!tile.ptr<i32>>
// CHECK-NOT: tile.load
// CHECK: scf.yield
func.func @hoisted(%p: !tile.ptr<f32>, %ids: !tile.ptr<i32>, %h: i32, %lb: i32, %ub: i32) -> !tile.tile<64xf32> {
  %c64 = arith.constant 64 : i32
  %rows = tile.iota : <64xi32>
  %zero = tile.full 0.000000e+00 : f32 : <64xf32>
  %r = scf.for %i = %lb to %ub step %c64 iter_args(%acc = %zero) -> (!tile.tile<64xf32>) : i32 {
    // Invariant: slope = p[h].
    %sp = tile.addptr %p, %h : !tile.ptr<f32>, i32
    %slope = tile.scalar_load %sp : <f32> -> f32
    // Invariant: ids[rows], masked rows < ub.
    %base = tile.splat %ids : <64x!tile.ptr<i32>>
    %qp = tile.addptr %base, %rows : !tile.tile<64x!tile.ptr<i32>>, !tile.tile<64xi32>
    %bound = tile.splat %ub : <64xi32>
    %ok = tile.cmp lt %rows, %bound : <64xi32> -> <64xi1>
    %fill = tile.full -1 : i32 : <64xi32>
    %q = tile.load %qp, %ok, %fill : <64x!tile.ptr<i32>>, !tile.tile<64xi1>, !tile.tile<64xi32> -> <64xi32>
    // Varying: ids[i + rows].
    %iv = tile.splat %i : <64xi32>
    %keys = tile.add %iv, %rows : <64xi32>
    %kp = tile.addptr %base, %keys : !tile.tile<64x!tile.ptr<i32>>, !tile.tile<64xi32>
    %k = tile.load %kp : <64x!tile.ptr<i32>> -> <64xi32>
    %same = tile.cmp eq %q, %k : <64xi32> -> <64xi1>
    %s = tile.splat %slope : <64xf32>
    %add = tile.where %same, %s, %zero : <64xi1>, <64xf32>
    %next = tile.add %acc, %add : <64xf32>
    scf.yield %next : !tile.tile<64xf32>
  }
  return %r : !tile.tile<64xf32>
}

// -----

// A store in the loop: the load may read what an earlier trip wrote, and
// stays.
// CHECK-LABEL: func.func @writes
// CHECK: scf.for
// CHECK: tile.scalar_load
// CHECK: tile.store
func.func @writes(%p: !tile.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %v = tile.scalar_load %p : <f32> -> f32
    %offs = tile.iota : <16xi32>
    %base = tile.splat %p : <16x!tile.ptr<f32>>
    %ptrs = tile.addptr %base, %offs : !tile.tile<16x!tile.ptr<f32>>, !tile.tile<16xi32>
    %vals = tile.splat %v : <16xf32>
    tile.store %ptrs, %vals : <16x!tile.ptr<f32>>, <16xf32>
  }
  return
}

// -----

// A load under an scf.if in the body runs only on some trips, and stays.
// CHECK-LABEL: func.func @conditional
// CHECK: scf.for
// CHECK: scf.if
// CHECK: tile.scalar_load
func.func @conditional(%p: !tile.ptr<f32>, %n: i32, %c: i1) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant 0.000000e+00 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z) -> (f32) : i32 {
    %t = scf.if %c -> (f32) {
      %v = tile.scalar_load %p : <f32> -> f32
      %a = arith.addf %s, %v : f32
      scf.yield %a : f32
    } else {
      scf.yield %s : f32
    }
    scf.yield %t : f32
  }
  return %r : f32
}
