// RUN: tile-opt %s -split-input-file -tile-async-copies=remarks=true -verify-diagnostics | FileCheck %s

// tile-async-copies (schedule cp_async = true): a loop load read only as
// the B operand of dots that lower to mma.sync becomes a cp.async ring of
// num_stages stages: copies of iterations 0 .. S-2 before the loop (one
// commit each), at the top of each iteration a wait for all but the S-2
// newest groups (and a barrier) and the copy of iteration i + S-1 into
// stage (i + S-1) % S, and in place of the load the view of stage i % S.
// Masks keep the loop's range: iterations past the upper bound copy
// nothing. After the loop, a wait for every copy.

// sm_80, B = K^T: [64, 32] of k, rows (keys) i .. i + 32 of 64 elements.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[A:[^:]*]]: !tile.tile<16x64xbf16>, %[[K:[^:]*]]: !tile.ptr<bf16>, %[[N:[^:]*]]: i32)
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : i32
// CHECK: %[[S0:.*]] = tile.splat %[[IN0]] : <64x32xi1>
// CHECK: %[[M0:.*]] = tile.and %{{.*}}, %[[S0]]
// CHECK: tile.async_copy %{{.*}}, %{{.*}}, %[[M0]] {inner_dim = 0 : i64, slot = 0 : i64, stages = 3 : i64}
// CHECK: tile.async_commit
// CHECK: tile.async_copy
// CHECK: tile.async_commit
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %[[C32:[^ ]*]] iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK-NEXT: tile.async_wait {pending = 1 : i64}
// CHECK: %[[IT:.*]] = arith.divui %{{.*}}, %[[C32]] : i32
// CHECK: %[[AHEAD:.*]] = arith.addi %[[I]], %{{.*}} : i32
// CHECK: %[[NEXTSTAGE:.*]] = arith.remui %{{.*}}, %[[C3:[^ ]*]] : i32
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[AHEAD]], %[[N]] : i32
// CHECK: tile.async_copy %{{.*}}, %[[NEXTSTAGE]], %{{.*}} {inner_dim = 0 : i64, slot = 0 : i64, stages = 3 : i64}
// CHECK-NEXT: tile.async_commit
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %{{.*}} : i32
// CHECK-NOT: tile.load
// CHECK: %[[B:.*]] = tile.async_view %[[STAGE]] {inner_dim = 0 : i64, slot = 0 : i64} : i32 -> <64x32xbf16>
// CHECK: tile.dot %[[A]], %[[B]], %[[ACC]]
// CHECK: }
// CHECK-NEXT: tile.async_wait {pending = 0 : i64}
module attributes {tile.arch = "sm_80"} {
  func.func @ring(%a: !tile.tile<16x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<16x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cp_async = true>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <16x32xf32>
    %other = tile.full 0.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<16x32xf32>) : i32 {
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
      %d = tile.dot %a, %b, %acc : <16x64xbf16>, <64x32xbf16>, <16x32xf32>
      scf.yield %d : !tile.tile<16x32xf32>
    }
    return %r : !tile.tile<16x32xf32>
  }
}

// -----

// On sm_90a a dot that can be wgmma (M = 64 on one warpgroup) keeps its
// load; a masked load whose masked elements are not zero too, and a load
// read other than as a B operand. Without cp_async nothing changes.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT: tile.async_
// CHECK: tile.load
// CHECK: tile.load
// CHECK: tile.load
// CHECK-NOT: tile.async_
module attributes {tile.arch = "sm_90a"} {
  func.func @stays(%a: !tile.tile<64x64xbf16>, %a16: !tile.tile<16x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> (!tile.tile<64x32xf32>, !tile.tile<16x32xf32>) attributes {tile.kernel, tile.schedule = #tile.schedule<cp_async = true>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %zero16 = tile.full 0.000000e+00 : f32 : <16x32xf32>
    %one = tile.full 1.000000e+00 : bf16 : <64x32xbf16>
    %c64 = tile.full 64 : i32 : <1x32xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 1 : i32} : <64xi32> -> <64x1xi32>
    %colsb = tile.broadcast %cols1 : <64x1xi32> -> <64x32xi32>
    %ks = tile.splat %k : <1x32x!tile.ptr<bf16>>
    %ns = tile.splat %n : <32xi32>
    %r:2 = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero, %acc16 = %zero16) -> (!tile.tile<64x32xf32>, !tile.tile<16x32xf32>) : i32 {
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
      // expected-remark @+1 {{stays off cp.async: its dot can run on wgmma}}
      %b = tile.load %p : <64x32x!tile.ptr<bf16>> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      // expected-remark @+1 {{stays off cp.async: its masked elements are not zero}}
      %b1 = tile.load %p, %m, %one : <64x32x!tile.ptr<bf16>>, !tile.tile<64x32xi1>, !tile.tile<64x32xbf16> -> <64x32xbf16>
      %d1 = tile.dot %a16, %b1, %acc16 : <16x64xbf16>, <64x32xbf16>, <16x32xf32>
      // expected-remark @+1 {{stays off cp.async: its readers are not all B operands}}
      %b2 = tile.load %p : <64x32x!tile.ptr<bf16>> -> <64x32xbf16>
      %d2 = tile.dot %a16, %b2, %d1 : <16x64xbf16>, <64x32xbf16>, <16x32xf32>
      %t = tile.add %b2, %b2 : <64x32xbf16>
      scf.yield %d, %d2 : !tile.tile<64x32xf32>, !tile.tile<16x32xf32>
    }
    return %r#0, %r#1 : !tile.tile<64x32xf32>, !tile.tile<16x32xf32>
  }
}

// -----

// Read through a trans (K of Q·Kᵀ, loaded [keys, D] with D contiguous):
// the view keeps the load's shape and the trans stays between it and the
// dot (the lowering reads the stage K-major).
// CHECK-LABEL: func.func @transposed(
// CHECK: scf.for
// CHECK-NOT: tile.load
// CHECK: %[[V:.*]] = tile.async_view %{{.*}} {inner_dim = 1 : i64, slot = 0 : i64} : i32 -> <32x64xbf16>
// CHECK: %[[T:.*]] = tile.trans %[[V]]
// CHECK: tile.dot %{{.*}}, %[[T]], %{{.*}}
module attributes {tile.arch = "sm_80"} {
  func.func @transposed(%a: !tile.tile<16x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<16x32xf32> attributes {tile.kernel, tile.schedule = #tile.schedule<cp_async = true, num_stages = 2>} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <16x32xf32>
    %c64 = tile.full 64 : i32 : <32x1xi32>
    %cols = tile.iota : <64xi32>
    %cols1 = tile.expand_dims %cols {axis = 0 : i32} : <64xi32> -> <1x64xi32>
    %colsb = tile.broadcast %cols1 : <1x64xi32> -> <32x64xi32>
    %ks = tile.splat %k : <32x1x!tile.ptr<bf16>>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<16x32xf32>) : i32 {
      %iota = tile.iota : <32xi32>
      %is = tile.splat %i : <32xi32>
      %keys = tile.add %is, %iota : <32xi32>
      %keys1 = tile.expand_dims %keys {axis = 1 : i32} : <32xi32> -> <32x1xi32>
      %off = tile.mul %keys1, %c64 : <32x1xi32>
      %p1 = tile.addptr %ks, %off : !tile.tile<32x1x!tile.ptr<bf16>>, !tile.tile<32x1xi32>
      %pb = tile.broadcast %p1 : <32x1x!tile.ptr<bf16>> -> <32x64x!tile.ptr<bf16>>
      %p = tile.addptr %pb, %colsb : !tile.tile<32x64x!tile.ptr<bf16>>, !tile.tile<32x64xi32>
      %kt = tile.load %p : <32x64x!tile.ptr<bf16>> -> <32x64xbf16>
      %b = tile.trans %kt : <32x64xbf16> -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <16x64xbf16>, <64x32xbf16>, <16x32xf32>
      scf.yield %d : !tile.tile<16x32xf32>
    }
    return %r : !tile.tile<16x32xf32>
  }
}
