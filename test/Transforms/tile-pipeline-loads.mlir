// RUN: tile-opt %s -split-input-file -tile-pipeline-loads | FileCheck %s

// A load addressed by the induction variable is issued one iteration ahead:
// the prologue loads at the lower bound, the body loads at iv + step (masked
// with iv + step < ub) and uses the value carried in.
// CHECK-LABEL: func.func @prefetch
// CHECK-SAME:    (%[[P:.*]]: !tile.ptr<f32>, %[[LB:.*]]: i32, %[[UB:.*]]: i32)
// CHECK:         %[[INR0:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : i32
// CHECK:         %[[M0:.*]] = tile.splat %[[INR0]] : <64xi1>
// CHECK:         %[[FIRST:.*]] = tile.load %{{.*}}, %[[M0]]
// CHECK:         scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[STEP:.*]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[CUR:.*]] = %[[FIRST]])
// CHECK:           %[[USE:.*]] = tile.add %[[ACC]], %[[CUR]]
// CHECK:           %[[NEXT:.*]] = arith.addi %[[IV]], %[[STEP]] : i32
// CHECK:           %[[NS:.*]] = tile.splat %[[NEXT]] : <64xi32>
// CHECK:           %[[NP:.*]] = tile.addptr %{{.*}}, %[[NS]]
// CHECK:           %[[INR:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK:           %[[M:.*]] = tile.splat %[[INR]] : <64xi1>
// CHECK:           %[[NL:.*]] = tile.load %[[NP]], %[[M]]
// CHECK:           scf.yield %[[USE]], %[[NL]]
func.func @prefetch(%p: !tile.ptr<f32>, %lb: i32, %ub: i32) -> !tile.tile<64xf32> attributes {tile.kernel} {
  %c64 = arith.constant 64 : i32
  %z = tile.full 0.0 : f32 : !tile.tile<64xf32>
  %pt = tile.splat %p : !tile.tile<64x!tile.ptr<f32>>
  %r = scf.for %iv = %lb to %ub step %c64 iter_args(%acc = %z) -> (!tile.tile<64xf32>) : i32 {
    %off = tile.splat %iv : !tile.tile<64xi32>
    %ptrs = tile.addptr %pt, %off : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xi32>
    %x = tile.load %ptrs : !tile.tile<64x!tile.ptr<f32>> -> !tile.tile<64xf32>
    %s = tile.add %acc, %x : !tile.tile<64xf32>
    scf.yield %s : !tile.tile<64xf32>
  }
  return %r : !tile.tile<64xf32>
}

// -----

// A load whose address depends on a loop-carried value stays where it is.
// CHECK-LABEL: func.func @carried
// CHECK:         scf.for {{.*}} iter_args(%[[Q:.*]] = %{{.*}}) -> (!tile.tile<64x!tile.ptr<f32>>)
// CHECK-NEXT:      tile.load %[[Q]]
func.func @carried(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %pt = tile.splat %p : !tile.tile<64x!tile.ptr<f32>>
  %one = tile.full 1 : i32 : !tile.tile<64xi32>
  %r = scf.for %iv = %c0 to %n step %c1 iter_args(%q = %pt) -> (!tile.tile<64x!tile.ptr<f32>>) : i32 {
    %x = tile.load %q : !tile.tile<64x!tile.ptr<f32>> -> !tile.tile<64xf32>
    tile.store %q, %x : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32>
    %q2 = tile.addptr %q, %one : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xi32>
    scf.yield %q2 : !tile.tile<64x!tile.ptr<f32>>
  }
  return
}

// -----

// A gather through indices loaded in the loop (a paged cache's page ids):
// the gather moves one iteration ahead with its index load cloned into its
// slice, both masked with iv + step < ub; the index load is not pipelined
// itself (it would become a carried value and stop the gather).
// CHECK-LABEL: func.func @gather
// CHECK-SAME:    (%[[T:.*]]: !tile.ptr<i32>, %[[P:.*]]: !tile.ptr<f32>, %[[UB:.*]]: i32)
// CHECK:         %[[INR0:.*]] = arith.cmpi slt, %{{.*}}, %[[UB]] : i32
// CHECK:         %[[M0:.*]] = tile.splat %[[INR0]] : <64xi1>
// CHECK:         %[[IDX0:.*]] = tile.load %{{.*}}, %[[M0]] : <64x!tile.ptr<i32>>
// CHECK:         %[[G0:.*]] = tile.addptr %{{.*}}, %[[IDX0]]
// CHECK:         %[[FIRST:.*]] = tile.load %[[G0]], %{{.*}} : <64x!tile.ptr<f32>>
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[CUR:.*]] = %[[FIRST]])
// CHECK:           tile.add %[[ACC]], %[[CUR]]
// CHECK:           %[[INR:.*]] = arith.cmpi slt, %{{.*}}, %[[UB]] : i32
// CHECK:           %[[M:.*]] = tile.splat %[[INR]] : <64xi1>
// CHECK:           %[[IDX:.*]] = tile.load %{{.*}}, %[[M]] : <64x!tile.ptr<i32>>
// CHECK:           %[[G:.*]] = tile.addptr %{{.*}}, %[[IDX]]
// CHECK:           %[[NL:.*]] = tile.load %[[G]], %{{.*}} : <64x!tile.ptr<f32>>
// CHECK:           scf.yield %{{.*}}, %[[NL]]
// CHECK-NOT:     tile.load
// CHECK:         return
func.func @gather(%t: !tile.ptr<i32>, %p: !tile.ptr<f32>, %ub: i32) -> !tile.tile<64xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %z = tile.full 0.0 : f32 : !tile.tile<64xf32>
  %tt = tile.splat %t : !tile.tile<64x!tile.ptr<i32>>
  %pt = tile.splat %p : !tile.tile<64x!tile.ptr<f32>>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %z) -> (!tile.tile<64xf32>) : i32 {
    %off = tile.splat %iv : !tile.tile<64xi32>
    %tp = tile.addptr %tt, %off : !tile.tile<64x!tile.ptr<i32>>, !tile.tile<64xi32>
    %idx = tile.load %tp : !tile.tile<64x!tile.ptr<i32>> -> !tile.tile<64xi32>
    %gp = tile.addptr %pt, %idx : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xi32>
    %x = tile.load %gp : !tile.tile<64x!tile.ptr<f32>> -> !tile.tile<64xf32>
    %s = tile.add %acc, %x : !tile.tile<64xf32>
    scf.yield %s : !tile.tile<64xf32>
  }
  return %r : !tile.tile<64xf32>
}

// -----

// The same gather under `index_ahead`: the clone of the index load that
// feeds the next gather is pipelined in turn, after it. The indices are
// loaded two iterations ahead of their use and carried, so the next
// gather does not wait for them.
// CHECK-LABEL: func.func @gather_ahead
// CHECK-SAME:    (%[[T:.*]]: !tile.ptr<i32>, %[[P:.*]]: !tile.ptr<f32>, %[[UB:.*]]: i32)
// CHECK:         %[[IDX0:.*]] = tile.load %{{.*}}, %{{.*}} : <64x!tile.ptr<i32>>
// CHECK:         %[[G0:.*]] = tile.addptr %{{.*}}, %[[IDX0]]
// CHECK:         %[[FIRST:.*]] = tile.load %[[G0]], %{{.*}} : <64x!tile.ptr<f32>>
// CHECK:         %[[IDX1:.*]] = tile.load %{{.*}}, %{{.*}} : <64x!tile.ptr<i32>>
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[CUR:.*]] = %[[FIRST]], %[[NIDX:.*]] = %[[IDX1]])
// CHECK:           tile.add %[[ACC]], %[[CUR]]
// CHECK-NOT:       tile.load
// CHECK:           %[[G:.*]] = tile.addptr %{{.*}}, %[[NIDX]]
// CHECK-NEXT:      %[[M:.*]] = tile.splat
// CHECK-NEXT:      %[[NL:.*]] = tile.load %[[G]], %[[M]] : <64x!tile.ptr<f32>>
// CHECK:           %[[IV1:.*]] = arith.addi %[[IV]], %{{.*}} : i32
// CHECK-NEXT:      %[[IV2:.*]] = arith.addi %[[IV1]], %{{.*}} : i32
// CHECK:           %[[IDX2:.*]] = tile.load %{{.*}}, %{{.*}} : <64x!tile.ptr<i32>>
// CHECK:           scf.yield %{{.*}}, %[[NL]], %[[IDX2]]
// CHECK-NOT:     tile.load
// CHECK:         return
func.func @gather_ahead(%t: !tile.ptr<i32>, %p: !tile.ptr<f32>, %ub: i32) -> !tile.tile<64xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<index_ahead = true>} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %z = tile.full 0.0 : f32 : !tile.tile<64xf32>
  %tt = tile.splat %t : !tile.tile<64x!tile.ptr<i32>>
  %pt = tile.splat %p : !tile.tile<64x!tile.ptr<f32>>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %z) -> (!tile.tile<64xf32>) : i32 {
    %off = tile.splat %iv : !tile.tile<64xi32>
    %tp = tile.addptr %tt, %off : !tile.tile<64x!tile.ptr<i32>>, !tile.tile<64xi32>
    %idx = tile.load %tp : !tile.tile<64x!tile.ptr<i32>> -> !tile.tile<64xi32>
    %gp = tile.addptr %pt, %idx : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xi32>
    %x = tile.load %gp : !tile.tile<64x!tile.ptr<f32>> -> !tile.tile<64xf32>
    %s = tile.add %acc, %x : !tile.tile<64xf32>
    scf.yield %s : !tile.tile<64xf32>
  }
  return %r : !tile.tile<64xf32>
}
