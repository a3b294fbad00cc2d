// RUN: tile-opt %s -split-input-file -tile-fold-scale | FileCheck %s

// tile-fold-scale turns mul(mul(x, splat a), splat b) into
// mul(x, splat(a * b)): one multiply per element for a softmax scale times
// log2(e).

// CHECK-LABEL: func.func @two_scales
// CHECK-SAME: (%[[X:[^:]*]]: !tile.tile<64x64xf32>, %[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32)
// CHECK: %[[AB:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: %[[S:.*]] = tile.splat %[[AB]] : <64x64xf32>
// CHECK: %[[R:.*]] = tile.mul %[[X]], %[[S]] : <64x64xf32>
// CHECK-NOT: tile.mul
// CHECK: return %[[R]]
func.func @two_scales(%x: !tile.tile<64x64xf32>, %a: f32, %b: f32) -> !tile.tile<64x64xf32> {
  %sa = tile.splat %a : !tile.tile<64x64xf32>
  %sb = tile.splat %b : !tile.tile<64x64xf32>
  %0 = tile.mul %x, %sa : !tile.tile<64x64xf32>
  %1 = tile.mul %0, %sb : !tile.tile<64x64xf32>
  return %1 : !tile.tile<64x64xf32>
}

// -----

// The splat may be either operand of either multiply.
// CHECK-LABEL: func.func @splats_on_the_left
// CHECK-SAME: (%[[X:[^:]*]]: !tile.tile<16xf16>, %[[A:[^:]*]]: f16, %[[B:[^:]*]]: f16)
// CHECK: %[[AB:.*]] = arith.mulf %[[A]], %[[B]] : f16
// CHECK: %[[S:.*]] = tile.splat %[[AB]] : <16xf16>
// CHECK: %[[R:.*]] = tile.mul %[[X]], %[[S]] : <16xf16>
// CHECK-NOT: tile.mul
// CHECK: return %[[R]]
func.func @splats_on_the_left(%x: !tile.tile<16xf16>, %a: f16, %b: f16) -> !tile.tile<16xf16> {
  %sa = tile.splat %a : !tile.tile<16xf16>
  %sb = tile.splat %b : !tile.tile<16xf16>
  %0 = tile.mul %sa, %x : !tile.tile<16xf16>
  %1 = tile.mul %sb, %0 : !tile.tile<16xf16>
  return %1 : !tile.tile<16xf16>
}

// -----

// Three scales fold into one tile multiply (two scalar multiplies).
// CHECK-LABEL: func.func @three_scales
// CHECK-SAME: (%[[X:[^:]*]]: !tile.tile<16xf32>
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: %[[R:.*]] = tile.mul %[[X]], %{{.*}} : <16xf32>
// CHECK-NOT: tile.mul
// CHECK: return %[[R]]
func.func @three_scales(%x: !tile.tile<16xf32>, %a: f32, %b: f32, %c: f32) -> !tile.tile<16xf32> {
  %sa = tile.splat %a : !tile.tile<16xf32>
  %sb = tile.splat %b : !tile.tile<16xf32>
  %sc = tile.splat %c : !tile.tile<16xf32>
  %0 = tile.mul %x, %sa : !tile.tile<16xf32>
  %1 = tile.mul %0, %sb : !tile.tile<16xf32>
  %2 = tile.mul %1, %sc : !tile.tile<16xf32>
  return %2 : !tile.tile<16xf32>
}

// -----

// The scaled value has another user: folding would not save a multiply.
// CHECK-LABEL: func.func @inner_product_shared
// CHECK-NOT: arith.mulf
// CHECK: %[[M0:.*]] = tile.mul %{{.*}}, %{{.*}} : <16xf32>
// CHECK: %[[M1:.*]] = tile.mul %[[M0]], %{{.*}} : <16xf32>
// CHECK: return %[[M0]], %[[M1]]
func.func @inner_product_shared(%x: !tile.tile<16xf32>, %a: f32, %b: f32) -> (!tile.tile<16xf32>, !tile.tile<16xf32>) {
  %sa = tile.splat %a : !tile.tile<16xf32>
  %sb = tile.splat %b : !tile.tile<16xf32>
  %0 = tile.mul %x, %sa : !tile.tile<16xf32>
  %1 = tile.mul %0, %sb : !tile.tile<16xf32>
  return %0, %1 : !tile.tile<16xf32>, !tile.tile<16xf32>
}

// -----

// Integer products are left alone (the pass is for float scales), and so is
// a chain whose inner factor is a tile, not a splat.
// CHECK-LABEL: func.func @not_folded
// CHECK-NOT: arith.mul
// CHECK: tile.mul %{{.*}}, %{{.*}} : <16xi32>
// CHECK: tile.mul %{{.*}}, %{{.*}} : <16xi32>
// CHECK: %[[F0:.*]] = tile.mul %{{.*}}, %{{.*}} : <16xf32>
// CHECK: tile.mul %[[F0]], %{{.*}} : <16xf32>
// CHECK-NOT: arith.mul
func.func @not_folded(%x: !tile.tile<16xi32>, %a: i32, %b: i32, %y: !tile.tile<16xf32>, %z: !tile.tile<16xf32>, %c: f32) -> (!tile.tile<16xi32>, !tile.tile<16xf32>) {
  %sa = tile.splat %a : !tile.tile<16xi32>
  %sb = tile.splat %b : !tile.tile<16xi32>
  %0 = tile.mul %x, %sa : !tile.tile<16xi32>
  %1 = tile.mul %0, %sb : !tile.tile<16xi32>
  %sc = tile.splat %c : !tile.tile<16xf32>
  %2 = tile.mul %y, %z : !tile.tile<16xf32>
  %3 = tile.mul %2, %sc : !tile.tile<16xf32>
  return %1, %3 : !tile.tile<16xi32>, !tile.tile<16xf32>
}

// -----

// With layouts assigned, the new splat keeps the layout of the product.
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
// CHECK-LABEL: func.func @keeps_layout
// CHECK: %[[AB:.*]] = arith.mulf
// CHECK: tile.splat %[[AB]] : <16xf32, #tile.layout<regs = {{\[}}[8]], lanes = {{\[}}[0], [0], [1], [2], [4]], warps = []>>
func.func @keeps_layout(%x: !tile.tile<16xf32, #row>, %a: f32, %b: f32) -> !tile.tile<16xf32, #row> {
  %sa = tile.splat %a : !tile.tile<16xf32, #row>
  %sb = tile.splat %b : !tile.tile<16xf32, #row>
  %0 = tile.mul %x, %sa : !tile.tile<16xf32, #row>
  %1 = tile.mul %0, %sb : !tile.tile<16xf32, #row>
  return %1 : !tile.tile<16xf32, #row>
}
