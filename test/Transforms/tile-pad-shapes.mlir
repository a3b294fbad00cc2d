// RUN: tile-opt %s -split-input-file -tile-pad-shapes | FileCheck %s

// tile-pad-shapes: a 96-column tile becomes 128 columns. The load reads only
// the kernel's 96 columns (mask iota(128) < 96, zeros elsewhere), the store
// writes only them, and the sum over the padded axis sees the load's zeros
// in the padding (no fill needed).
// CHECK-LABEL: func.func @rows_of_96(
// CHECK: tile.iota : <128xi32>
// CHECK: %[[N:.*]] = tile.full 96 : i32 : <128xi32>
// CHECK: %[[IN:.*]] = tile.cmp lt %{{.*}}, %[[N]] : <128xi32> -> <128xi1>
// CHECK: %[[IN2:.*]] = tile.expand_dims %[[IN]] {axis = 0 : i32} : <128xi1> -> <1x128xi1>
// CHECK: %[[LANES:.*]] = tile.broadcast %[[IN2]] : <1x128xi1> -> <4x128xi1>
// CHECK: %[[ZERO:.*]] = tile.full 0.000000e+00 : f32 : <4x128xf32>
// CHECK: %[[X:.*]] = tile.load %{{.*}}, %[[LANES]], %[[ZERO]] : <4x128x!tile.ptr<f32>>, !tile.tile<4x128xi1>, !tile.tile<4x128xf32> -> <4x128xf32>
// CHECK-NOT: tile.where
// CHECK: tile.reduce sum %[[X]] {axis = 1 : i32} : <4x128xf32> -> <4xf32>
// CHECK: tile.store %{{.*}}, %[[X]], %{{.*}} : <4x128x!tile.ptr<f32>>, <4x128xf32>, !tile.tile<4x128xi1>
func.func @rows_of_96(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>) -> !tile.tile<4xf32> attributes {tile.kernel} {
  %cols = tile.iota : <96xi32>
  %c1 = tile.expand_dims %cols {axis = 0 : i32} : <96xi32> -> <1x96xi32>
  %cb = tile.broadcast %c1 : <1x96xi32> -> <4x96xi32>
  %ps = tile.splat %p : <4x96x!tile.ptr<f32>>
  %ptr = tile.addptr %ps, %cb : !tile.tile<4x96x!tile.ptr<f32>>, !tile.tile<4x96xi32>
  %x = tile.load %ptr : <4x96x!tile.ptr<f32>> -> <4x96xf32>
  %s = tile.reduce sum %x {axis = 1 : i32} : <4x96xf32> -> <4xf32>
  %qs = tile.splat %q : <4x96x!tile.ptr<f32>>
  %qp = tile.addptr %qs, %cb : !tile.tile<4x96x!tile.ptr<f32>>, !tile.tile<4x96xi32>
  tile.store %qp, %x : <4x96x!tile.ptr<f32>>, <4x96xf32>
  return %s : !tile.tile<4xf32>
}

// -----

// A max over a padded axis sees -inf in the padding; a dot contracting over
// a padded K (96 -> 128) zeroes the operand that is not a padded load and
// records the K it uses.
// CHECK-LABEL: func.func @max_and_dot(
// CHECK: %[[NEG:.*]] = tile.full 0xFF800000 : f32 : <64x128xf32>
// CHECK: tile.where %{{.*}}, %{{.*}}, %[[NEG]]
// CHECK: tile.reduce max
// CHECK: %[[Z:.*]] = tile.full 0.000000e+00 : bf16 : <64x128xbf16>
// CHECK: %[[A:.*]] = tile.where %{{.*}}, %{{.*}}, %[[Z]]
// CHECK: %[[B:.*]] = tile.where
// CHECK: tile.dot %[[A]], %[[B]], %{{[^ ]*}} {k_used = 96 : i64} : <64x128xbf16>, <128x64xbf16>, <64x64xf32>
func.func @max_and_dot(%a: !tile.tile<64x96xf32>, %b: !tile.tile<96x64xbf16>, %acc: !tile.tile<64x64xf32>) -> (!tile.tile<64xf32>, !tile.tile<64x64xf32>) attributes {tile.kernel} {
  %m = tile.reduce max %a {axis = 1 : i32} : <64x96xf32> -> <64xf32>
  %ab = tile.cast %a : <64x96xf32> -> <64x96xbf16>
  %d = tile.dot %ab, %b, %acc : <64x96xbf16>, <96x64xbf16>, <64x64xf32>
  return %m, %d : !tile.tile<64xf32>, !tile.tile<64x64xf32>
}

// -----

// A dot whose N is padded (192 -> 256) records the N it uses; nothing mixes
// lanes, so no operand is filled.
// CHECK-LABEL: func.func @padded_n(
// CHECK-NOT: tile.where
// CHECK: tile.dot %arg0, %arg1, %arg2 {n_used = 192 : i64} : <64x64xbf16>, <64x256xbf16>, <64x256xf32>
func.func @padded_n(%a: !tile.tile<64x64xbf16>, %b: !tile.tile<64x192xbf16>, %acc: !tile.tile<64x192xf32>) -> !tile.tile<64x192xf32> attributes {tile.kernel} {
  %d = tile.dot %a, %b, %acc : <64x64xbf16>, <64x192xbf16>, <64x192xf32>
  return %d : !tile.tile<64x192xf32>
}

// -----

// Power-of-two shapes are left alone.
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT: tile.where
// CHECK: tile.reduce sum %arg0 {axis = 1 : i32} : <4x64xf32> -> <4xf32>
func.func @untouched(%x: !tile.tile<4x64xf32>) -> !tile.tile<4xf32> attributes {tile.kernel} {
  %s = tile.reduce sum %x {axis = 1 : i32} : <4x64xf32> -> <4xf32>
  return %s : !tile.tile<4xf32>
}
