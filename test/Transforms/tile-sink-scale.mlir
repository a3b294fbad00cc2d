// RUN: tile-opt %s -split-input-file -tile-sink-scale | FileCheck %s

// tile-sink-scale: a positive scale moves past where(-inf) and the row max
// to the multiplies by a scalar that follow (softmax: max, then
// fma(s, log2e, -m)), which take a * log2e; the chain runs on the raw
// product and the multiply per element is gone.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:[^:]*]]: !tile.tile<64x64xf32>, %[[C:[^:]*]]: !tile.tile<64x64xi1>, %[[A:[^:]*]]: f32 {tile.positive}, %[[M:[^:]*]]: !tile.tile<64x64xf32>)
// CHECK: %[[AB:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK-NOT: tile.mul %[[X]]
// CHECK: %[[W:.*]] = tile.where %[[C]], %[[X]], %{{.*}}
// CHECK: %[[R:.*]] = tile.reduce max %[[W]]
// CHECK: %[[S1:.*]] = tile.splat %[[AB]] : <64xf32>
// CHECK: tile.mul %[[R]], %[[S1]] : <64xf32>
// CHECK: %[[S2:.*]] = tile.splat %[[AB]] : <64x64xf32>
// CHECK: tile.fma %[[W]], %[[S2]], %[[M]] : <64x64xf32>
func.func @softmax(%x: !tile.tile<64x64xf32>, %c: !tile.tile<64x64xi1>, %a: f32 {tile.positive},
                   %m: !tile.tile<64x64xf32>) -> (!tile.tile<64xf32>, !tile.tile<64x64xf32>) {
  %sa = tile.splat %a : !tile.tile<64x64xf32>
  %s = tile.mul %x, %sa : !tile.tile<64x64xf32>
  %ninf = tile.full 0xFF800000 : f32 : !tile.tile<64x64xf32>
  %w = tile.where %c, %s, %ninf : !tile.tile<64x64xi1>, !tile.tile<64x64xf32>
  %r = tile.reduce max %w {axis = 1 : i32} : !tile.tile<64x64xf32> -> !tile.tile<64xf32>
  %l1 = tile.full 1.44269502 : f32 : !tile.tile<64xf32>
  %rm = tile.mul %r, %l1 : !tile.tile<64xf32>
  %l2 = tile.full 1.44269502 : f32 : !tile.tile<64x64xf32>
  %p = tile.fma %w, %l2, %m : !tile.tile<64x64xf32>
  return %rm, %p : !tile.tile<64xf32>, !tile.tile<64x64xf32>
}

// -----

// Without tile.positive (require(a > 0.0)) a negative a would turn the max
// into a min: nothing moves.
// CHECK-LABEL: func.func @unknown_sign
// CHECK: tile.mul %arg0, %{{.*}} : <64x64xf32>
func.func @unknown_sign(%x: !tile.tile<64x64xf32>, %a: f32) -> !tile.tile<64xf32> {
  %sa = tile.splat %a : !tile.tile<64x64xf32>
  %s = tile.mul %x, %sa : !tile.tile<64x64xf32>
  %r = tile.reduce max %s {axis = 1 : i32} : !tile.tile<64x64xf32> -> !tile.tile<64xf32>
  %l = tile.full 1.44269502 : f32 : !tile.tile<64xf32>
  %rm = tile.mul %r, %l : !tile.tile<64xf32>
  return %rm : !tile.tile<64xf32>
}

// -----

// A use that is not a multiply by a scalar (a score mod: tanh; a sum,
// whose rounding would change; a where with another constant) keeps the
// scale where it is.
// CHECK-LABEL: func.func @other_uses
// CHECK-COUNT-3: tile.mul %arg0, %{{.*}} : <64x64xf32>
func.func @other_uses(%x: !tile.tile<64x64xf32>, %c: !tile.tile<64x64xi1>, %a: f32 {tile.positive})
    -> (!tile.tile<64x64xf32>, !tile.tile<64xf32>, !tile.tile<64x64xf32>) {
  %sa = tile.splat %a : !tile.tile<64x64xf32>
  %s0 = tile.mul %x, %sa : !tile.tile<64x64xf32>
  %t = tile.tanh %s0 : !tile.tile<64x64xf32>
  %s1 = tile.mul %x, %sa : !tile.tile<64x64xf32>
  %r = tile.reduce sum %s1 {axis = 1 : i32} : !tile.tile<64x64xf32> -> !tile.tile<64xf32>
  %s2 = tile.mul %x, %sa : !tile.tile<64x64xf32>
  %one = tile.full 1.0 : f32 : !tile.tile<64x64xf32>
  %w = tile.where %c, %s2, %one : !tile.tile<64x64xi1>, !tile.tile<64x64xf32>
  %l = tile.full 1.44269502 : f32 : !tile.tile<64x64xf32>
  %wm = tile.mul %w, %l : !tile.tile<64x64xf32>
  return %t, %r, %wm : !tile.tile<64x64xf32>, !tile.tile<64xf32>, !tile.tile<64x64xf32>
}

// -----

// A positive constant scale, through max with -inf and a broadcast.
// CHECK-LABEL: func.func @constant_scale
// CHECK-NOT: tile.mul %arg0
// CHECK: tile.max %arg0, %{{.*}} : <64xf32>
// CHECK: tile.broadcast
// CHECK: tile.mul %{{.*}}, %{{.*}} : <64x64xf32>
func.func @constant_scale(%x: !tile.tile<64xf32>, %b: f32) -> !tile.tile<64x64xf32> {
  %a = arith.constant 0.125 : f32
  %sa = tile.splat %a : !tile.tile<64xf32>
  %s = tile.mul %x, %sa : !tile.tile<64xf32>
  %ninf = tile.full 0xFF800000 : f32 : !tile.tile<64xf32>
  %mx = tile.max %s, %ninf : !tile.tile<64xf32>
  %e = tile.expand_dims %mx {axis = 0 : i32} : !tile.tile<64xf32> -> !tile.tile<1x64xf32>
  %bc = tile.broadcast %e : !tile.tile<1x64xf32> -> !tile.tile<64x64xf32>
  %sb = tile.splat %b : !tile.tile<64x64xf32>
  %r = tile.mul %sb, %bc : !tile.tile<64x64xf32>
  return %r : !tile.tile<64x64xf32>
}
