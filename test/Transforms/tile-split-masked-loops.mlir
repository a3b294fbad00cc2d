// RUN: tile-opt %s -split-input-file -tile-split-masked-loops | FileCheck %s

// tile-split-masked-loops: an innermost scf.for whose masks (tile.where
// conditions, tile.load / tile.store masks, tile.tma_wait's valid rows) are
// all true while iv is below a loop-invariant bound X is split at the first
// iteration at or past X: a first loop with those masks gone, then the
// original body for the rest (tile.masked_tail), starting from the first
// loop's results. Masks that hold from a bound on (a loop counting down)
// split the other way: masked first iterations (tile.masked_head), then the
// unmasked rest.

// idx = i + iota(32) < n holds in every iteration with i + 31 < n: the split
// point is max(lb, min(lb + ceil((max(n - 31, 0) - lb) / 32) * 32, ub)).
// CHECK-LABEL: func.func @tail(
// CHECK-SAME: %[[X:[^:]*]]: !tile.ptr<f32>, %[[Y:[^:]*]]: !tile.ptr<f32>, %[[N:[^:]*]]: i32)
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[C32:.*]] = arith.constant 32 : i32
// CHECK: %[[CM31:.*]] = arith.constant -31 : i32
// CHECK: %[[NM31:.*]] = arith.addi %[[CM31]], %[[N]] : i32
// CHECK: %[[CUT:.*]] = arith.minsi %{{.*}}, %[[N]] : i32
// CHECK: %[[SPLIT:.*]] = arith.maxsi %[[C0]], %[[CUT]] : i32
// CHECK: %[[FIRST:.*]] = scf.for %{{.*}} = %[[C0]] to %[[SPLIT]] step %[[C32]] iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[V:.*]] = tile.load %{{.*}} : <32x!tile.ptr<f32>> -> <32xf32>
// CHECK-NOT: tile.where
// CHECK: %[[S:.*]] = tile.add %[[ACC]], %[[V]] : <32xf32>
// CHECK: tile.store %{{.*}}, %[[V]] : <32x!tile.ptr<f32>>, <32xf32>
// CHECK: scf.yield %[[S]]
// CHECK-NOT: masked
// CHECK: %[[REST:.*]] = scf.for %{{.*}} = %[[SPLIT]] to %[[N]] step %[[C32]] iter_args(%{{.*}} = %[[FIRST]])
// CHECK: tile.load %{{.*}}, %[[OK:[^,]*]], %{{.*}} : <32x!tile.ptr<f32>>, !tile.tile<32xi1>
// CHECK: tile.where %[[OK]],
// CHECK: tile.store %{{.*}}, %{{.*}}, %[[OK]] :
// CHECK: } {tile.masked_tail}
// CHECK: return %[[REST]]
func.func @tail(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %ys = tile.splat %y : <32x!tile.ptr<f32>>
  %ns = tile.splat %n : <32xi32>
  %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %ok = tile.cmp lt %idx, %ns : <32xi32> -> <32xi1>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px, %ok, %zero : <32x!tile.ptr<f32>>, !tile.tile<32xi1>, !tile.tile<32xf32> -> <32xf32>
    %w = tile.where %ok, %v, %zero : <32xi1>, <32xf32>
    %s = tile.add %acc, %w : <32xf32>
    %py = tile.addptr %ys, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    tile.store %py, %v, %ok : <32x!tile.ptr<f32>>, <32xf32>, !tile.tile<32xi1>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// Counting down (range(top, -1, -32): j from -top to 0, idx = -j + iota):
// idx < n fails only in the first iterations. They run first, masked
// (tile.masked_head); the rest runs without the mask.
// CHECK-LABEL: func.func @head(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<f32>, %[[N:[^:]*]]: i32, %[[TOP:[^:]*]]: i32)
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[LB:.*]] = arith.subi %{{.*}}, %[[TOP]] : i32
// CHECK: %[[SPLIT:.*]] = arith.maxsi %[[LB]], %{{.*}} : i32
// CHECK: %[[FIRST:.*]] = scf.for %{{.*}} = %[[LB]] to %[[SPLIT]] step
// CHECK: tile.load %{{.*}}, %{{.*}}, %{{.*}} : <32x!tile.ptr<f32>>, !tile.tile<32xi1>
// CHECK: } {tile.masked_head}
// CHECK: scf.for %{{.*}} = %[[SPLIT]] to %[[C1]] step %{{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK: tile.load %{{.*}} : <32x!tile.ptr<f32>> -> <32xf32>
// CHECK-NOT: masked
// CHECK: return
func.func @head(%x: !tile.ptr<f32>, %n: i32, %top: i32) -> !tile.tile<32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %ns = tile.splat %n : <32xi32>
  %lb = arith.subi %c0, %top : i32
  %r = scf.for %j = %lb to %c1 step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %i = arith.subi %c0, %j : i32
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %ok = tile.cmp lt %idx, %ns : <32xi32> -> <32xi1>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px, %ok, %zero : <32x!tile.ptr<f32>>, !tile.tile<32xi1>, !tile.tile<32xf32> -> <32xf32>
    %s = tile.add %acc, %v : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// The rows a tile.tma_wait keeps (valid = n - i) are the whole box while
// i + 31 < n: in the first loop valid is the box height, 32.
// CHECK-LABEL: func.func @tma_wait(
// CHECK: scf.for
// CHECK: %[[C32:.*]] = arith.constant 32 : i32
// CHECK: tile.tma_wait %{{.*}}, %{{.*}}, %[[C32]] {inner_dim = 0 : i64, slot = 0 : i64}
// CHECK: scf.for
// CHECK: %[[VALID:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: tile.tma_wait %{{.*}}, %{{.*}}, %[[VALID]] {inner_dim = 0 : i64, slot = 0 : i64}
// CHECK: } {tile.masked_tail}
module attributes {tile.arch = "sm_90a"} {
  func.func @tma_wait(%a: !tile.tile<64x64xbf16>, %k: !tile.ptr<bf16>, %n: i32) -> !tile.tile<64x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c32 = arith.constant 32 : i32
    %zero = tile.full 0.000000e+00 : f32 : <64x32xf32>
    %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<64x32xf32>) : i32 {
      %it = arith.divsi %i, %c32 : i32
      %stage = arith.remui %it, %c3 : i32
      %round = arith.divui %it, %c3 : i32
      %parity = arith.andi %round, %c1 : i32
      %valid = arith.subi %n, %i : i32
      %b = tile.tma_wait %stage, %parity, %valid {inner_dim = 0 : i64, slot = 0 : i64} : i32, i32, i32 -> <64x32xbf16>
      %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x32xbf16>, <64x32xf32>
      scf.yield %d : !tile.tile<64x32xf32>
    }
    return %r : !tile.tile<64x32xf32>
  }
}

// -----

// Selects that fail at opposite ends (a sliding window's left edge and a
// causal diagonal): one split, the tail's; the head's select stays in the
// first loop (tile-version-masks skips it at run time). Were the head's
// mask on a load, the head would be split off too (@head above).
// CHECK-LABEL: func.func @window(
// CHECK: scf.for
// CHECK: tile.cmp ge
// CHECK: tile.where
// CHECK-NOT: tile.where
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NOT: masked_head
// CHECK: scf.for
// CHECK: tile.where
// CHECK: tile.where
// CHECK: } {tile.masked_tail}
func.func @window(%lo: i32, %n: i32, %left: i32, %right: i32) -> !tile.tile<32xf32> attributes {tile.kernel} {
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %ninf = tile.full 0xFF800000 : f32 : <32xf32>
  %one = tile.full 1.000000e+00 : f32 : <32xf32>
  %ls = tile.splat %left : <32xi32>
  %rs = tile.splat %right : <32xi32>
  %r = scf.for %i = %lo to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %below = tile.cmp lt %idx, %rs : <32xi32> -> <32xi1>
    %above = tile.cmp ge %idx, %ls : <32xi32> -> <32xi1>
    %s1 = tile.where %below, %one, %ninf : <32xi1>, <32xf32>
    %s2 = tile.where %above, %s1, %ninf : <32xi1>, <32xf32>
    %s = tile.add %acc, %s2 : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// -----

// A mask that fails at both ends (lo <= idx < n: an `and` of the two
// kinds) is left alone, as is a loop without masks.
// CHECK-LABEL: func.func @both_ends(
// CHECK: scf.for
// CHECK: tile.load %{{.*}}, %{{.*}}, %{{.*}} : <32x!tile.ptr<f32>>, !tile.tile<32xi1>
// CHECK-NOT: scf.for
// CHECK-NOT: masked
// CHECK: return
func.func @both_ends(%x: !tile.ptr<f32>, %lo: i32, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %xs = tile.splat %x : <32x!tile.ptr<f32>>
  %ns = tile.splat %n : <32xi32>
  %los = tile.splat %lo : <32xi32>
  %r = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %iota = tile.iota : <32xi32>
    %is = tile.splat %i : <32xi32>
    %idx = tile.add %is, %iota : <32xi32>
    %below = tile.cmp lt %idx, %ns : <32xi32> -> <32xi1>
    %above = tile.cmp ge %idx, %los : <32xi32> -> <32xi1>
    %ok = tile.and %below, %above : <32xi1>
    %px = tile.addptr %xs, %idx : !tile.tile<32x!tile.ptr<f32>>, !tile.tile<32xi32>
    %v = tile.load %px, %ok, %zero : <32x!tile.ptr<f32>>, !tile.tile<32xi1>, !tile.tile<32xf32> -> <32xf32>
    %s = tile.add %acc, %v : <32xf32>
    scf.yield %s : !tile.tile<32xf32>
  }
  return %r : !tile.tile<32xf32>
}

// CHECK-LABEL: func.func @no_mask(
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK-NOT: masked
// CHECK: return
func.func @no_mask(%x: !tile.ptr<f32>, %n: i32) -> !tile.tile<32xf32> attributes {tile.kernel} {
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
