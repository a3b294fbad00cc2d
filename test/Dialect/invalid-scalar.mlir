// RUN: tile-opt %s -split-input-file -verify-diagnostics
// Every verifier message of the scalar ops.

func.func @load_type(%p: !tile.ptr<i32>) -> f32 {
  // expected-error @+1 {{'tile.scalar_load' op result type 'f32' does not match pointee type 'i32'}}
  %x = tile.scalar_load %p : !tile.ptr<i32> -> f32
  return %x : f32
}

// -----

func.func @other_without_mask(%p: !tile.ptr<f32>, %x: f32) -> f32 {
  // expected-error @+1 {{'tile.scalar_load' op `other` needs a `mask`}}
  %y = "tile.scalar_load"(%p, %x) {operandSegmentSizes = array<i32: 1, 0, 1>} : (!tile.ptr<f32>, f32) -> f32
  return %y : f32
}

// -----

func.func @other_type(%p: !tile.ptr<f32>, %ok: i1, %x: f16) -> f32 {
  // expected-error @+1 {{'tile.scalar_load' op `other` must have the result type}}
  %y = tile.scalar_load %p, %ok, %x : !tile.ptr<f32>, i1, f16 -> f32
  return %y : f32
}

// -----

func.func @store_type(%p: !tile.ptr<f32>, %x: i32) {
  // expected-error @+1 {{'tile.scalar_store' op value type 'i32' does not match pointee type 'f32'}}
  tile.scalar_store %p, %x : !tile.ptr<f32>, i32
  return
}

// -----

func.func @to_scalar_size(%t: !tile.tile<2xf32>) -> f32 {
  // expected-error @+1 {{'tile.to_scalar' op needs a one-element tile, got 2 elements}}
  %s = tile.to_scalar %t : !tile.tile<2xf32> -> f32
  return %s : f32
}

// -----

func.func @to_scalar_type(%t: !tile.tile<1xf32>) -> f16 {
  // expected-error @+1 {{'tile.to_scalar' op result type 'f16' does not match element type 'f32'}}
  %s = tile.to_scalar %t : !tile.tile<1xf32> -> f16
  return %s : f16
}
