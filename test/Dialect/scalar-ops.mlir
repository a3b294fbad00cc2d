// RUN: tile-opt %s | tile-opt | FileCheck %s
// Round trip of the scalar ops.

// CHECK-LABEL: func.func @scalar_ops
func.func @scalar_ops(%p: !tile.ptr<i32>, %q: !tile.ptr<f32>, %ok: i1, %x: f32,
                      %t: !tile.tile<1xf32>) -> (i32, f32, f32) {
  // CHECK: tile.scalar_load %{{.*}} : <i32> -> i32
  %n = tile.scalar_load %p : <i32> -> i32
  // CHECK: tile.scalar_load %{{.*}}, %{{.*}}, %{{.*}} : <f32>, i1, f32 -> f32
  %m = tile.scalar_load %q, %ok, %x : <f32>, i1, f32 -> f32
  // CHECK: tile.scalar_store %{{.*}}, %{{.*}} : <f32>, f32
  tile.scalar_store %q, %x : <f32>, f32
  // CHECK: tile.scalar_store %{{.*}}, %{{.*}}, %{{.*}} : <f32>, f32, i1
  tile.scalar_store %q, %x, %ok : <f32>, f32, i1
  // CHECK: tile.to_scalar %{{.*}} : <1xf32> -> f32
  %s = tile.to_scalar %t : <1xf32> -> f32
  return %n, %m, %s : i32, f32, f32
}
