// RUN: tile-opt %s -split-input-file -tile-tma-loads -verify-diagnostics | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-tma-loads=arch=sm_80 | FileCheck %s --check-prefix=SM80

// tile-tma-loads (sm_90a: the module's tile.arch, or the pass's `arch`,
// which wins): a loop load that only feeds a dot's B operand, reads a 2-D
// bf16 box of rows of 64 elements moved by the loop through its row index,
// and is masked by `row < bound` becomes tile.tma_copy / tile.tma_wait on a
// ring of num_stages stages: copy 0 before the loop (if it runs), each
// iteration starting copy i + 1 at its top and waiting for its own (stage
// i % S, parity (i / S) % 2). With `arch=sm_80` every load stays a load.
// (The pass leaves the old address and mask ops for the canonicalizer.)

// Here B = K^T: [64, 32] of k, rows (keys) i .. i + 32 of 64 elements.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[A:[^:]*]]: !tile.tile<64x64xbf16>, %[[K:[^:]*]]: !tile.ptr<bf16>, %[[N:[^:]*]]: i32)
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : i32
// CHECK: tile.tma_copy %[[K]], %{{.*}}, %{{.*}}, %[[RUNS]] {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 32>, slot = 0 : i64, stages = 3 : i64}
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %[[C32:[^ ]*]] iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[IT:.*]] = arith.divsi %{{.*}}, %[[C32]] : i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]], %[[C32]] : i32
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[N]] : i32
// CHECK: %[[NEXTIT:.*]] = arith.addi %[[IT]], %{{.*}} : i32
// CHECK: tile.tma_copy %[[K]], %{{.*}}, %[[NEXTIT]], %[[MORE]] {{{.*}}slot = 0 : i64, stages = 3 : i64}
// CHECK-NOT: tile.load
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %[[C3:[^ ]*]] : i32
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %{{.*}} : i32
// CHECK: %[[PARITY:.*]] = arith.andi %[[ROUND]], %{{.*}} : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[N]], %{{.*}} : i32
// CHECK: %[[B:.*]] = tile.tma_wait %[[STAGE]], %[[PARITY]], %[[LEFT]] {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> <64x32xbf16>
// CHECK: tile.dot %[[A]], %[[B]], %[[ACC]]

// SM80-LABEL: func.func @ring(
// SM80-NOT: tile.tma_
// SM80: tile.load
// SM80-NOT: tile.tma_
module attributes {tile.arch = "sm_90a"} {
  func.func @ring(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}

// -----

// The schedule's num_stages = 2: a ring of two stages (i % 2; `stages = 2`
// is tma_copy's default, not printed).
// CHECK-LABEL: func.func @two_stages(
// CHECK: tile.tma_copy {{.*}}slot = 0 : i64} : <bf16>
// CHECK: scf.for
// CHECK: tile.tma_copy {{.*}}slot = 0 : i64} : <bf16>
// CHECK: %[[C2:.*]] = arith.constant 2 : i32
// CHECK: %[[STAGE:.*]] = arith.remui %{{.*}}, %[[C2]] : i32
// CHECK: tile.tma_wait %[[STAGE]],
module attributes {tile.arch = "sm_90a"} {
  func.func @two_stages(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<num_stages = 2>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}

// -----

// tma = false in the schedule: the load stays.
// CHECK-LABEL: func.func @no_tma(
// CHECK-NOT: tile.tma_
// CHECK: tile.load
// CHECK-NOT: tile.tma_
module attributes {tile.arch = "sm_90a"} {
  func.func @no_tma(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<tma = false>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}

// -----

// A tile that something besides the dot's B reads stays a load; with
// tile.remarks on the module the pass says why, at the load.
// CHECK-LABEL: func.func @two_readers(
// CHECK-NOT: tile.tma_
// CHECK: tile.load
// CHECK-NOT: tile.tma_
module attributes {tile.arch = "sm_90a", tile.remarks} {
  func.func @two_readers(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      // expected-remark @+1 {{dot operand load stays off TMA: its reader is not the B operand of a dot in the same loop body (directly or transposed)}}
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      %f = tile.cast %b : <64x32xbf16> -> <64x32xf32>
      %s = tile.add %d, %f : <64x32xf32>
      scf.yield %s : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}

// -----

// A loop in the body of a loop (the loop over programs of a persistent
// kernel): one ring across the outer iterations. The outer loop carries
// the count of copies made (an i32 iter_arg from 0, plus the inner loop's
// trip count each iteration); copy i of an inner loop is copy base + i, and
// each copy sits in an scf.if of its condition.
// CHECK-LABEL: func.func @nested(
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[COUNTED:.*]] = %{{.*}}) -> (!tile.tile<64x32xf32>, i32)
// CHECK: %[[BASE:.*]] = arith.addi %[[COUNTED]], %{{.*}} : i32
// CHECK: scf.if %{{.*}} {
// CHECK: tile.tma_copy %{{.*}}, %{{.*}}, %[[BASE]], %true
// CHECK: scf.for
// CHECK: %[[IT:.*]] = arith.addi %[[BASE]], %{{.*}} : i32
// CHECK: scf.if %{{.*}} {
// CHECK: tile.tma_copy
// CHECK: arith.remui %[[IT]],
// CHECK: tile.tma_wait
// CHECK: %[[TRIPS:.*]] = arith.select
// CHECK: %[[COUNT:.*]] = arith.addi %[[COUNTED]], %[[TRIPS]] : i32
// CHECK: scf.yield %{{.*}}, %[[COUNT]] : !tile.tile<64x32xf32>, i32
module attributes {tile.arch = "sm_90a"} {
  func.func @nested(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32, %reps: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %out = scf.for %j = %c0 to %reps step %c1 iter_args(%acc0 = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %acc0) -> (!tile.tile<64x32xf32>) : i32 {
        %iota = tile.iota : <32xi32>
        %is = tile.splat %i : <32xi32>
        %keys = tile.add %is, %iota : <32xi32>
        %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
        %off = tile.mul %keys1, %c64 : <1x32xi32>
        %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
        %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
        %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
        %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
        %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
        %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
        %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
        %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
        scf.yield %d : !tile.tile<64x32xf32>
      }
      scf.yield %r : !tile.tile<64x32xf32>
    }
    return %out : !tile.tile<64x32xf32>
  }
}

// -----

// Two loops one after the other (a block-sparse kernel's partial and full
// blocks) that load the same box of the same tensor share one slot: the
// second loop's copies are numbered on from the first's (copy trips + i,
// trips the iterations the first ran). Every copy of the shared slot, the
// first loop's too, sits in an scf.if of its condition: a predicated copy
// would still pass its copy point, and the first loop's skipped one-ahead
// copy and the second loop's first copy (one number) would both arrive on
// the stage's empty barrier. A box of another tensor (%v) gets a slot of
// its own, its copies predicated.
// CHECK-LABEL: func.func @consecutive(
// CHECK-SAME: %{{[^:]*}}: !tile.tile<64x64xbf16>, %[[K:[^:]*]]: !tile.ptr<bf16>, %[[V:[^:]*]]: !tile.ptr<bf16>
// CHECK: scf.if %{{.*}} {
// CHECK: tile.tma_copy %[[K]], %{{.*}}, %{{.*}}, %true {{.*}}slot = 0 : i64, stages = 3 : i64}
// CHECK: scf.for
// CHECK: scf.if %{{.*}} {
// CHECK: tile.tma_copy %[[K]], %{{.*}}, %{{.*}}, %true {{.*}}slot = 0 : i64, stages = 3 : i64}
// CHECK: scf.yield
// CHECK: %[[TRIPS:.*]] = arith.select
// CHECK: %[[BASE:.*]] = arith.addi %{{.*}}, %[[TRIPS]] : i32
// CHECK: tile.tma_copy %[[V]], {{.*}}slot = 1 : i64, stages = 3 : i64}
// CHECK: scf.if %{{.*}} {
// CHECK: tile.tma_copy %[[K]], %{{.*}}, %[[BASE]], %true {{.*}}slot = 0 : i64, stages = 3 : i64}
// CHECK: scf.for
// CHECK: %[[IT:.*]] = arith.addi %[[BASE]], %{{.*}} : i32
// CHECK: tile.tma_wait {{.*}}slot = 0 : i64
module attributes {tile.arch = "sm_90a"} {
  func.func @consecutive(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %n1: i32, %n2: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %vs = tile.splat %v : <1x32x!tile.ptr<bf16>>
    %n1s = tile.splat %n1 : <32xi32>
    %n2s = tile.splat %n2 : <32xi32>
    %r1 = scf.for %i = %c0 to %n1 step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %n1s : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    %r2 = scf.for %i = %c0 to %n2 step %c32 iter_args(%acc = %r1) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %n2s : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      %q1 = tile.addptr %vs, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %qb = tile.broadcast %q1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %q = tile.addptr %qb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %c = tile.load %q, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %e = tile.dot %a, %c, %d : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %e : !tile.tile<64x32xf32>
    }
    return %r2 : !tile.tile<64x32xf32>
  }
}

// -----

// tma_a = true: the load outside loops that only the dot's A operand reads
// (Q: rows of 64 elements, K contiguous, masked by row < n) becomes one copy
// into a one-stage slot of its own (slot 1; the ring is slot 0), waited for
// before the loop.
// CHECK-LABEL: func.func @tma_a(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.ptr<bf16>, %[[K:[^:]*]]: !tile.ptr<bf16>
// CHECK: tile.tma_copy %[[Q]], {{.*}} {inner_dim = 1 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 1 : i64, stages = 1 : i64}
// CHECK: %[[A:.*]] = tile.tma_wait {{.*}} {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> <64x64xbf16>
// CHECK: tile.tma_copy %[[K]], {{.*}}slot = 0 : i64, stages = 3 : i64}
// CHECK: scf.for
// CHECK-NOT: tile.load
// CHECK: %[[B:.*]] = tile.tma_wait {{.*}}slot = 0 : i64}
// CHECK: tile.dot %[[A]], %[[B]],
module attributes {tile.arch = "sm_90a"} {
  func.func @tma_a(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<tma_a = true>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    // A = q[rows, cols] where rows < n.
    %rows = tile.iota : <64xi32>
    %qother = tile.full 0.000000e+00 : bf16 : <64x64xbf16>
    %c64r = tile.full 64 : i32 : <64x1xi32>
    %rows1 = tile.expand_dims %rows {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %qoff = tile.mul %rows1, %c64r : <64x1xi32>
    %qs = tile.splat %q : <64x1x!tile.ptr<bf16>>
    %qp1 = tile.addptr %qs, %qoff : !tile.tile<64x1x!tile.ptr<bf16>>, !tile.tile<64x1xi32>
    %qpb = tile.broadcast %qp1 : <64x1x!tile.ptr<bf16>> -> <64x64x!tile.ptr<bf16>>
    %qcols1 = tile.expand_dims %cols {axis = 0 : i32} : <64xi32> -> <1x64xi32>
    %qcolsb = tile.broadcast %qcols1 : <1x64xi32> -> <64x64xi32>
    %qp = tile.addptr %qpb, %qcolsb : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi32>
    %nr = tile.splat %n : <64xi32>
    %rok = tile.cmp lt %rows, %nr : <64xi32> -> <64xi1>
    %rok1 = tile.expand_dims %rok {axis = 1 : i32} : <64xi1> -> <64x1xi1>
    %qm = tile.broadcast %rok1 : <64x1xi1> -> <64x64xi1>
    %a = tile.load %qp, %qm, %qother : <64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi1>, !tile.tile<64x64xbf16> -> <64x64xbf16>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}

// -----

// The same load read as the A operand of the slot's dot and as the B
// operand of another dot (K in a backward's dK/dV pass: A of S = K·Qᵀ, B
// of dQ = dS·K): one slot, which both dots read in place (B with N
// contiguous).
// CHECK-LABEL: func.func @tma_a_and_b(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.ptr<bf16>, %[[K:[^:]*]]: !tile.ptr<bf16>, %{{[^:]*}}: i32, %[[X:[^:]*]]: !tile.tile<64x64xbf16>
// CHECK: tile.tma_copy %[[Q]], {{.*}} {inner_dim = 1 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 1 : i64, stages = 1 : i64}
// CHECK: %[[A:.*]] = tile.tma_wait {{.*}} {inner_dim = 1 : i64, slot = 1 : i64} : i32, i32, i32 -> <64x64xbf16>
// CHECK: scf.for
// CHECK-NOT: tile.load
// CHECK: %[[B:.*]] = tile.tma_wait {{.*}}slot = 0 : i64}
// CHECK: tile.dot %[[A]], %[[B]],
// CHECK: tile.dot %[[X]], %[[A]],
module attributes {tile.arch = "sm_90a"} {
  func.func @tma_a_and_b(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %n: i32, %x: !tile.tile<64x64xbf16>) -> !tile.tile<64x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<tma_a = true>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    // A = q[rows, cols] where rows < n.
    %rows = tile.iota : <64xi32>
    %qother = tile.full 0.000000e+00 : bf16 : <64x64xbf16>
    %c64r = tile.full 64 : i32 : <64x1xi32>
    %rows1 = tile.expand_dims %rows {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %qoff = tile.mul %rows1, %c64r : <64x1xi32>
    %qs = tile.splat %q : <64x1x!tile.ptr<bf16>>
    %qp1 = tile.addptr %qs, %qoff : !tile.tile<64x1x!tile.ptr<bf16>>, !tile.tile<64x1xi32>
    %qpb = tile.broadcast %qp1 : <64x1x!tile.ptr<bf16>> -> <64x64x!tile.ptr<bf16>>
    %qcols1 = tile.expand_dims %cols {axis = 0 : i32} : <64xi32> -> <1x64xi32>
    %qcolsb = tile.broadcast %qcols1 : <1x64xi32> -> <64x64xi32>
    %qp = tile.addptr %qpb, %qcolsb : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi32>
    %nr = tile.splat %n : <64xi32>
    %rok = tile.cmp lt %rows, %nr : <64xi32> -> <64xi1>
    %rok1 = tile.expand_dims %rok {axis = 1 : i32} : <64xi1> -> <64x1xi1>
    %qm = tile.broadcast %rok1 : <64x1xi1> -> <64x64xi1>
    %a = tile.load %qp, %qm, %qother : <64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi1>, !tile.tile<64x64xbf16> -> <64x64xbf16>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %zero2 = tile.full 0.000000e+00 : f32 : <64x64xf32>
    %r:2 = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero, %acc2 = %zero2) -> (!tile.tile<64x32xf32>, !tile.tile<64x64xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      %e = tile.dot %x, %a, %acc2 : <64x64xbf16>, <64x64xbf16>, <64x64xf32>
      scf.yield %d, %e : !tile.tile<64x32xf32>, !tile.tile<64x64xf32>
    }
    return %r#0 : !tile.tile<64x32xf32>
  }
}


// -----

// Read by something besides dots (here an add): it stays a load, and no
// warning (tma_a is about loads only dots read).
// CHECK-LABEL: func.func @tma_a_other_reader(
// CHECK: %[[A:.*]] = tile.load
// CHECK: tile.add %[[A]], %[[A]]
module attributes {tile.arch = "sm_90a"} {
  func.func @tma_a_other_reader(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<tma_a = true>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    // A = q[rows, cols] where rows < n.
    %rows = tile.iota : <64xi32>
    %qother = tile.full 0.000000e+00 : bf16 : <64x64xbf16>
    %c64r = tile.full 64 : i32 : <64x1xi32>
    %rows1 = tile.expand_dims %rows {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %qoff = tile.mul %rows1, %c64r : <64x1xi32>
    %qs = tile.splat %q : <64x1x!tile.ptr<bf16>>
    %qp1 = tile.addptr %qs, %qoff : !tile.tile<64x1x!tile.ptr<bf16>>, !tile.tile<64x1xi32>
    %qpb = tile.broadcast %qp1 : <64x1x!tile.ptr<bf16>> -> <64x64x!tile.ptr<bf16>>
    %qcols1 = tile.expand_dims %cols {axis = 0 : i32} : <64xi32> -> <1x64xi32>
    %qcolsb = tile.broadcast %qcols1 : <1x64xi32> -> <64x64xi32>
    %qp = tile.addptr %qpb, %qcolsb : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi32>
    %nr = tile.splat %n : <64xi32>
    %rok = tile.cmp lt %rows, %nr : <64xi32> -> <64xi1>
    %rok1 = tile.expand_dims %rok {axis = 1 : i32} : <64xi1> -> <64x1xi1>
    %qm = tile.broadcast %rok1 : <64x1xi1> -> <64x64xi1>
    %a = tile.load %qp, %qm, %qother : <64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi1>, !tile.tile<64x64xbf16> -> <64x64xbf16>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %c64 : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %a2 = tile.add %a, %a : <64x64xbf16>
      %d = tile.dot %a2, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      %d2 = tile.dot %a, %b, %d : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d2 : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}


// -----

// tma_store (default true): a narrow store outside loops of a 2-D bf16 box
// along its rows, masked by row < n, becomes `if (0 <= row0 && row0 + 64 <=
// n) tile.tma_store else the store`.
// CHECK-LABEL: func.func @store(
// CHECK-SAME: %[[O:[^:]*]]: !tile.ptr<bf16>, %[[N:[^:]*]]: i32, %[[V:[^:]*]]: !tile.tile<64x64xbf16>)
// CHECK: %[[END:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[N]] : i32
// CHECK: %[[FROM0:.*]] = arith.cmpi sge,
// CHECK: %[[WHOLE:.*]] = arith.andi %[[FROM0]], %[[FITS]] : i1
// CHECK: scf.if %[[WHOLE]] {
// CHECK: tile.tma_store %[[O]], %{{.*}}, %[[V]] {inner_dim = 1 : i64, row_stride = 64 : i64, slot = 0 : i64}
// CHECK: } else {
// CHECK: tile.store %{{.*}}, %[[V]], %{{.*}}
// CHECK: }
// SM80-LABEL: func.func @store(
// SM80-NOT: tile.tma_store
module attributes {tile.arch = "sm_90a"} {
  func.func @store(%o: !tile.ptr<bf16>, %n: i32, %v: !tile.tile<64x64xbf16>) attributes {tile.kernel} {
    %c64 = tile.full 64 : i32 : <64x1xi32>
    %rows = tile.iota : <64xi32>
    %cols = tile.iota : <64xi32>
    %rows1 = tile.expand_dims %rows {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %off = tile.mul %rows1, %c64 : <64x1xi32>
    %os = tile.splat %o : <64x1x!tile.ptr<bf16>>
    %p1 = tile.addptr %os, %off : !tile.tile<64x1x!tile.ptr<bf16>>, !tile.tile<64x1xi32>
    %pb = tile.broadcast %p1 : <64x1x!tile.ptr<bf16>> -> <64x64x!tile.ptr<bf16>>
    %cols1 = tile.expand_dims %cols {axis = 0 : i32} : <64xi32> -> <1x64xi32>
    %colsb = tile.broadcast %cols1 : <1x64xi32> -> <64x64xi32>
    %p = tile.addptr %pb, %colsb : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi32>
    %ns = tile.splat %n : <64xi32>
    %ok = tile.cmp lt %rows, %ns : <64xi32> -> <64xi1>
    %ok1 = tile.expand_dims %ok {axis = 1 : i32} : <64xi1> -> <64x1xi1>
    %m = tile.broadcast %ok1 : <64x1xi1> -> <64x64xi1>
    tile.store %p, %v, %m : <64x64x!tile.ptr<bf16>>, <64x64xbf16>, !tile.tile<64x64xi1>
    return
  }
}

// -----

// A run-time row stride (a [B, S, H, D] tensor: rows heads * 64 apart) and
// a head's first column h * 64 inside the row: the copies read column
// `(h * 64) % stride` (`col`) of row `(h * 64) / stride` + i of a map whose
// stride the launcher computes as 64 x argument 3 (`stride_args`).
// CHECK-LABEL: func.func @runtime_stride(
// CHECK-SAME: %[[A:[^:]*]]: !tile.tile<64x64xbf16>, %[[K:[^:]*]]: !tile.ptr<bf16>, %[[N:[^:]*]]: i32, %[[H:[^:]*]]: i32)
// CHECK: %[[S:.*]] = arith.muli %[[H]], %{{.*}} : i32
// CHECK: %[[S64:.*]] = arith.extsi %[[S]] : i32 to i64
// CHECK: %[[ROW:.*]] = arith.divsi %{{.*}}, %[[S64]] : i64
// CHECK: %[[REM:.*]] = arith.remsi %{{.*}}, %[[S64]] : i64
// CHECK: %[[COL:.*]] = arith.trunci %[[REM]] : i64 to i32
// CHECK: tile.tma_copy %[[K]], %{{.*}}, %{{.*}}, %{{.*}} col %[[COL]] {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 32>, slot = 0 : i64, stages = 3 : i64, stride_args = array<i64: 3>}
// CHECK: scf.for
// CHECK: tile.tma_copy %[[K]], %{{.*}} col %[[COL]] {{.*}}stride_args = array<i64: 3>}
// CHECK: tile.tma_wait
// SM80-LABEL: func.func @runtime_stride(
// SM80-NOT: tile.tma_
module attributes {tile.arch = "sm_90a"} {
  func.func @runtime_stride(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32, %heads: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %c64s = arith.constant 64 : i32
    %h = tile.program_id 0 : i32
    %stride = arith.muli %heads, %c64s : i32
    %hoff = arith.muli %h, %c64s : i32
    %kh = tile.addptr %k, %hoff : !tile.ptr<bf16>, i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %ss = tile.splat %stride : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %kh : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
      %off = tile.mul %keys1, %ss : <1x32xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<1x32x!tile.ptr<bf16>>, !tile.tile<1x32xi32>
      %pb = tile.broadcast %p1 : <1x32x!tile.ptr<bf16>> -> <64x32x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi32>
      %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
      %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
      %m = tile.broadcast %ok1 : <1x32xi1> -> <64x32xi1>
      %b = tile.load %p, %m, %other : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}
