// RUN: tile-opt %s -split-input-file -tile-version-masks | FileCheck %s

// tile-version-masks: in an innermost scf.for, a tile.where whose mask is
// signed comparisons of `scalars + [lo, hi]` index tiles, with a scalar
// computed in the loop, becomes scf.if (all true) { lhs } else { where };
// the mask's ops that only the select used move into the else branch.

// A key block at an index read in the loop: keys = idx * 32 + iota(32) <
// n is all true iff 31 + idx * 32 - n < 0.
// CHECK-LABEL: func.func @loaded_index(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<i32>, %{{[^:]*}}: !tile.tile<16x32xf32>, %[[N:[^:]*]]: i32
// CHECK: scf.for
// CHECK: %[[IDX:.*]] = tile.scalar_load
// CHECK: %[[START:.*]] = arith.muli %[[IDX]], %{{.*}} : i32
// CHECK: %[[C31:.*]] = arith.constant 31 : i32
// CHECK: %[[MAX:.*]] = arith.addi %[[C31]], %[[START]] : i32
// CHECK: %[[D:.*]] = arith.subi %[[MAX]], %[[N]] : i32
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK: %[[ALL:.*]] = arith.cmpi slt, %[[D]], %[[Z]] : i32
// CHECK: %[[S:.*]] = scf.if %[[ALL]] -> (!tile.tile<16x32xf32>) {
// CHECK-NEXT: scf.yield %{{.*}} : !tile.tile<16x32xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: tile.splat %[[START]]
// CHECK-NEXT: tile.add
// CHECK: tile.cmp lt
// CHECK: tile.broadcast
// CHECK: %[[W:.*]] = tile.where
// CHECK-NEXT: scf.yield %[[W]] : !tile.tile<16x32xf32>
// CHECK: tile.add %{{.*}}, %[[S]]
func.func @loaded_index(%idx: !tile.ptr<i32>, %s: !tile.tile<16x32xf32>, %n: i32, %nb: i32) -> !tile.tile<16x32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <16x32xf32>
  %ninf = tile.full 0xFF800000 : f32 : <16x32xf32>
  %iota = tile.iota : <32xi32>
  %ns = tile.splat %n : <32xi32>
  %r = scf.for %i = %c0 to %nb step %c1 iter_args(%acc = %zero) -> (!tile.tile<16x32xf32>) : i32 {
    %p = tile.addptr %idx, %i : !tile.ptr<i32>, i32
    %b = tile.scalar_load %p : <i32> -> i32
    %start = arith.muli %b, %c32 : i32
    %ss = tile.splat %start : <32xi32>
    %keys = tile.add %ss, %iota : <32xi32>
    %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
    %ok1 = tile.expand_dims %ok {axis = 0 : i32} : <32xi1> -> <1x32xi1>
    %m = tile.broadcast %ok1 : <1x32xi1> -> <16x32xi1>
    %w = tile.where %m, %s, %ninf : <16x32xi1>, <16x32xf32>
    %a = tile.add %acc, %w : <16x32xf32>
    scf.yield %a : !tile.tile<16x32xf32>
  }
  return %r : !tile.tile<16x32xf32>
}

// -----

// Two comparisons joined by tile.and (a causal `rows >= keys` and
// `rows < n`, both moving with the loop): all true iff both tests hold.
// CHECK-LABEL: func.func @two_ends(
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: %[[A:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: %[[B:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: %[[ALL:.*]] = arith.andi %[[A]], %[[B]] : i1
// CHECK: scf.if %[[ALL]] -> (!tile.tile<32x16xf32>)
func.func @two_ends(%s: !tile.tile<32x16xf32>, %k0: i32, %n: i32) -> !tile.tile<32x16xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32x16xf32>
  %iota32 = tile.iota : <32xi32>
  %iota16 = tile.iota : <16xi32>
  %k0s = tile.splat %k0 : <32xi32>
  %keys = tile.add %k0s, %iota32 : <32xi32>
  %keys2 = tile.expand_dims %keys {axis = 1 : i32} : <32xi32> -> <32x1xi32>
  %keysb = tile.broadcast %keys2 : <32x1xi32> -> <32x16xi32>
  %ns = tile.splat %n : <16xi32>
  %r = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %zero) -> (!tile.tile<32x16xf32>) : i32 {
    %is = tile.splat %i : <16xi32>
    %rows = tile.add %is, %iota16 : <16xi32>
    %rok = tile.cmp lt %rows, %ns : <16xi32> -> <16xi1>
    %rows2 = tile.expand_dims %rows {axis = 0 : i32} : <16xi32> -> <1x16xi32>
    %rowsb = tile.broadcast %rows2 : <1x16xi32> -> <32x16xi32>
    %causal = tile.cmp ge %rowsb, %keysb : <32x16xi32> -> <32x16xi1>
    %rok2 = tile.expand_dims %rok {axis = 0 : i32} : <16xi1> -> <1x16xi1>
    %rokb = tile.broadcast %rok2 : <1x16xi1> -> <32x16xi1>
    %vis = tile.and %rokb, %causal : <32x16xi1>
    %w = tile.where %vis, %s, %zero : <32x16xi1>, <32x16xf32>
    %a = tile.add %acc, %w : <32x16xf32>
    scf.yield %a : !tile.tile<32x16xf32>
  }
  return %r : !tile.tile<32x16xf32>
}

// -----

// Left alone: a masked tail (its masks mostly fail), a mask that does not
// move with the loop, and a mask the analysis does not know (a float
// comparison).
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: scf.if
// CHECK: return
func.func @left_alone(%s: !tile.tile<32xf32>, %n: i32, %m: i32) -> !tile.tile<32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <32xf32>
  %iota = tile.iota : <32xi32>
  %ns = tile.splat %n : <32xi32>
  %ms = tile.splat %m : <32xi32>
  %r1 = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %zero) -> (!tile.tile<32xf32>) : i32 {
    %is = tile.splat %i : <32xi32>
    %keys = tile.add %is, %iota : <32xi32>
    %ok = tile.cmp lt %keys, %ns : <32xi32> -> <32xi1>
    %w = tile.where %ok, %s, %zero : <32xi1>, <32xf32>
    %a = tile.add %acc, %w : <32xf32>
    scf.yield %a : !tile.tile<32xf32>
  } {tile.masked_tail}
  %r2 = scf.for %i = %c0 to %n step %c32 iter_args(%acc = %r1) -> (!tile.tile<32xf32>) : i32 {
    %ok = tile.cmp lt %iota, %ms : <32xi32> -> <32xi1>
    %w = tile.where %ok, %s, %zero : <32xi1>, <32xf32>
    %pos = tile.cmp gt %acc, %zero : <32xf32> -> <32xi1>
    %w2 = tile.where %pos, %w, %s : <32xi1>, <32xf32>
    scf.yield %w2 : !tile.tile<32xf32>
  }
  return %r2 : !tile.tile<32xf32>
}

// -----

// A prefix-LM mask, keys <= rows || keys < p (p read once before the
// loop): all true where either side is, so the test is the `or` of the two
// sides' tests; one side that cannot be tested (a loaded mask) leaves the
// other's test alone.
// CHECK-LABEL: func.func @prefix_or(
// CHECK: scf.for
// CHECK: %[[T1:.*]] = arith.cmpi slt
// CHECK: %[[T2:.*]] = arith.cmpi slt
// CHECK: %[[ALL:.*]] = arith.ori %[[T1]], %[[T2]] : i1
// CHECK: scf.if %[[ALL]]
// CHECK: } else {
// CHECK: tile.or
// CHECK: tile.where
// CHECK-LABEL: func.func @or_one_side(
// CHECK: scf.for
// CHECK: %[[T:.*]] = arith.cmpi slt
// CHECK-NOT: arith.ori
// CHECK: scf.if %[[T]]
func.func @prefix_or(%s: !tile.tile<16x32xf32>, %q0: i32, %p: i32, %nb: i32) -> !tile.tile<16x32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <16x32xf32>
  %ninf = tile.full 0xFF800000 : f32 : <16x32xf32>
  %iota32 = tile.iota : <32xi32>
  %iota16 = tile.iota : <16xi32>
  %qs = tile.splat %q0 : <16xi32>
  %rows = tile.add %qs, %iota16 : <16xi32>
  %rows1 = tile.expand_dims %rows {axis = 1 : i32} : <16xi32> -> <16x1xi32>
  %rowsb = tile.broadcast %rows1 : <16x1xi32> -> <16x32xi32>
  %ps = tile.splat %p : <1x32xi32>
  %r = scf.for %i = %c0 to %nb step %c32 iter_args(%acc = %zero) -> (!tile.tile<16x32xf32>) : i32 {
    %is = tile.splat %i : <32xi32>
    %keys = tile.add %is, %iota32 : <32xi32>
    %keys1 = tile.expand_dims %keys {axis = 0 : i32} : <32xi32> -> <1x32xi32>
    %keysb = tile.broadcast %keys1 : <1x32xi32> -> <16x32xi32>
    %causal = tile.cmp le %keysb, %rowsb : <16x32xi32> -> <16x32xi1>
    %pre = tile.cmp lt %keys1, %ps : <1x32xi32> -> <1x32xi1>
    %preb = tile.broadcast %pre : <1x32xi1> -> <16x32xi1>
    %m = tile.or %causal, %preb : <16x32xi1>
    %w = tile.where %m, %s, %ninf : <16x32xi1>, <16x32xf32>
    %a = tile.add %acc, %w : <16x32xf32>
    scf.yield %a : !tile.tile<16x32xf32>
  }
  return %r : !tile.tile<16x32xf32>
}

func.func @or_one_side(%s: !tile.tile<16x32xf32>, %bits: !tile.tile<16x32x!tile.ptr<i1>>, %p: i32, %nb: i32) -> !tile.tile<16x32xf32> attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = tile.full 0.000000e+00 : f32 : <16x32xf32>
  %ninf = tile.full 0xFF800000 : f32 : <16x32xf32>
  %iota32 = tile.iota : <32xi32>
  %ps = tile.splat %p : <32xi32>
  %r = scf.for %i = %c0 to %nb step %c32 iter_args(%acc = %zero) -> (!tile.tile<16x32xf32>) : i32 {
    %is = tile.splat %i : <32xi32>
    %keys = tile.add %is, %iota32 : <32xi32>
    %pre = tile.cmp lt %keys, %ps : <32xi32> -> <32xi1>
    %pre1 = tile.expand_dims %pre {axis = 0 : i32} : <32xi1> -> <1x32xi1>
    %preb = tile.broadcast %pre1 : <1x32xi1> -> <16x32xi1>
    %ld = tile.load %bits : <16x32x!tile.ptr<i1>> -> <16x32xi1>
    %m = tile.or %ld, %preb : <16x32xi1>
    %w = tile.where %m, %s, %ninf : <16x32xi1>, <16x32xf32>
    %a = tile.add %acc, %w : <16x32xf32>
    scf.yield %a : !tile.tile<16x32xf32>
  }
  return %r : !tile.tile<16x32xf32>
}
