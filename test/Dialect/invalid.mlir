// RUN: tile-opt %s -split-input-file -verify-diagnostics

// Every verifier of the tile dialect: types, #tile.layout, ops.

//===----------------------------------------------------------------------===//
// !tile.tile
//===----------------------------------------------------------------------===//

// expected-error @+1 {{tile must have rank >= 1}}
func.func @rank0(%a: !tile.tile<f32>)

// -----

// expected-error @+1 {{tile dimensions must be positive, got 0}}
func.func @zero_dim(%a: !tile.tile<0x4xf32>)

// -----

// expected-error @+1 {{expected static shape}}
func.func @dynamic_dim(%a: !tile.tile<?x4xf32>)

// -----

// expected-error @+1 {{tile element type must be an integer, a float or !tile.ptr, got 'index'}}
func.func @index_elt(%a: !tile.tile<4xindex>)

// -----

// expected-error @+1 {{tile element type must be an integer, a float or !tile.ptr, got 'vector<2xf32>'}}
func.func @vector_elt(%a: !tile.tile<4xvector<2xf32>>)

// -----

// expected-error @+1 {{tile encoding must be a #tile.layout}}
func.func @bad_encoding(%a: !tile.tile<4xf32, 1 : i32>)

// -----

#l1 = #tile.layout<regs = [], lanes = [[1], [2], [0], [0], [0]], warps = []>
// expected-error @+1 {{layout rank 1 does not match tile rank 2}}
func.func @layout_rank(%a: !tile.tile<4x4xf32, #l1>)

// -----

#l = #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
// expected-error @+1 {{layout basis component 8 is out of range for dimension 0 of size 8}}
func.func @basis_out_of_range(%a: !tile.tile<8x8xf32, #l>)

// -----

//===----------------------------------------------------------------------===//
// #tile.layout
//===----------------------------------------------------------------------===//

// expected-error @+1 {{every layout basis must have the same, non-zero rank}}
#l = #tile.layout<regs = [[0, 1], [8]], lanes = [], warps = []>

// -----

// expected-error @+1 {{every layout basis must have the same, non-zero rank}}
#l = #tile.layout<regs = [[]], lanes = [], warps = []>

// -----

// expected-error @+1 {{rank does not match bases}}
#l = #tile.layout<regs = [[1]], lanes = [[0], [0], [0], [0], [0]], warps = [], rank = 2>

// -----

// expected-error @+1 {{layout with no bases needs `rank = N`}}
#l = #tile.layout<regs = [], lanes = [], warps = []>

// -----

// expected-error @+1 {{layout rank must be positive}}
#l = #tile.layout<regs = [], lanes = [], warps = [], rank = 0>

// -----

// expected-error @+1 {{layout basis components must be 0 or a power of two, got 3}}
#l = #tile.layout<regs = [[3]], lanes = [[0], [0], [0], [0], [0]], warps = []>

// -----

// expected-error @+1 {{layout basis components must be 0 or a power of two, got -2}}
#l = #tile.layout<regs = [], lanes = [[-2], [0], [0], [0], [0]], warps = []>

// -----

// expected-error @+1 {{a layout needs exactly 5 lane bases (32 lanes), got 4}}
#l = #tile.layout<regs = [], lanes = [[1], [2], [4], [8]], warps = []>

// -----

// expected-error @+1 {{a layout needs exactly 5 lane bases (32 lanes), got 0}}
#l = #tile.layout<regs = [], lanes = [], warps = [], rank = 1>

// -----

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

func.func @program_id_axis() {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint}}
  %0 = tile.program_id 3 : i32
  return
}

// -----

func.func @num_programs_axis() {
  // expected-error @+1 {{'tile.num_programs' op attribute 'axis' failed to satisfy constraint}}
  %0 = tile.num_programs -1 : i32
  return
}

// -----

func.func @iota_rank() {
  // expected-error @+1 {{'tile.iota' op result must be a 1-D tile}}
  %0 = tile.iota : !tile.tile<4x4xi32>
  return
}

// -----

func.func @iota_float() {
  // expected-error @+1 {{'tile.iota' op result #0 must be tile of 32-bit signless integer or 64-bit signless integer}}
  %0 = tile.iota : !tile.tile<4xf32>
  return
}

// -----

func.func @full_type() {
  // expected-error @+1 {{'tile.full' op value type 'f32' does not match element type 'f16'}}
  %0 = tile.full 1.0 : f32 : !tile.tile<4xf16>
  return
}

// -----

func.func @splat_type(%x: f32) {
  // expected-error @+1 {{'tile.splat' op failed to verify that element type matches the scalar}}
  %0 = "tile.splat"(%x) : (f32) -> !tile.tile<4xf16>
  return
}

// -----

func.func @expand_axis(%r: !tile.tile<128xi32>) {
  // expected-error @+1 {{'tile.expand_dims' op axis 2 out of range for rank 1}}
  %0 = tile.expand_dims %r {axis = 2 : i32} : !tile.tile<128xi32> -> !tile.tile<128x1xi32>
  return
}

// -----

func.func @expand_shape(%r: !tile.tile<128xi32>) {
  // expected-error @+1 {{'tile.expand_dims' op result shape must be [128, 1]}}
  %0 = tile.expand_dims %r {axis = 1 : i32} : !tile.tile<128xi32> -> !tile.tile<1x128xi32>
  return
}

// -----

func.func @expand_elt(%r: !tile.tile<128xi32>) {
  // expected-error @+1 {{'tile.expand_dims' op element types must match}}
  %0 = tile.expand_dims %r {axis = 0 : i32} : !tile.tile<128xi32> -> !tile.tile<1x128xi64>
  return
}

// -----

func.func @broadcast_rank(%c: !tile.tile<128xi32>) {
  // expected-error @+1 {{'tile.broadcast' op cannot broadcast rank 1 to rank 2}}
  %0 = tile.broadcast %c : !tile.tile<128xi32> -> !tile.tile<128x64xi32>
  return
}

// -----

func.func @broadcast_shape(%c: !tile.tile<128x2xi32>) {
  // expected-error @+1 {{'tile.broadcast' op cannot broadcast [128, 2] to [128, 64]}}
  %0 = tile.broadcast %c : !tile.tile<128x2xi32> -> !tile.tile<128x64xi32>
  return
}

// -----

func.func @broadcast_elt(%c: !tile.tile<128x1xi32>) {
  // expected-error @+1 {{'tile.broadcast' op element types must match}}
  %0 = tile.broadcast %c : !tile.tile<128x1xi32> -> !tile.tile<128x64xf32>
  return
}

// -----

func.func @trans_rank(%k: !tile.tile<64xbf16>) {
  // expected-error @+1 {{'tile.trans' op operand must be a 2-D tile}}
  %0 = tile.trans %k : !tile.tile<64xbf16> -> !tile.tile<64xbf16>
  return
}

// -----

func.func @trans_shape(%k: !tile.tile<64x128xbf16>) {
  // expected-error @+1 {{'tile.trans' op result shape must be [128, 64]}}
  %0 = tile.trans %k : !tile.tile<64x128xbf16> -> !tile.tile<64x128xbf16>
  return
}

// -----

func.func @trans_elt(%k: !tile.tile<64x128xbf16>) {
  // expected-error @+1 {{'tile.trans' op element types must match}}
  %0 = tile.trans %k : !tile.tile<64x128xbf16> -> !tile.tile<128x64xf16>
  return
}

// -----

func.func @convert_shape(%a: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.convert_layout' op result shape [8, 16] does not match [16, 8]}}
  %0 = tile.convert_layout %a : !tile.tile<16x8xf32> -> !tile.tile<8x16xf32>
  return
}

// -----

func.func @convert_elt(%a: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.convert_layout' op element types must match}}
  %0 = tile.convert_layout %a : !tile.tile<16x8xf32> -> !tile.tile<16x8xf16>
  return
}

// -----

func.func @addptr_mixed(%p: !tile.ptr<bf16>, %o: !tile.tile<64xi32>) {
  // expected-error @+1 {{'tile.addptr' op pointer and offset must both be scalars or both tiles}}
  %0 = tile.addptr %p, %o : !tile.ptr<bf16>, !tile.tile<64xi32>
  return
}

// -----

func.func @addptr_shape(%p: !tile.tile<64x!tile.ptr<bf16>>, %o: !tile.tile<32xi32>) {
  // expected-error @+1 {{'tile.addptr' op offset shape [32] does not match [64]}}
  %0 = tile.addptr %p, %o : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<32xi32>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @addptr_layout(%p: !tile.tile<16x!tile.ptr<bf16>, #row>, %o: !tile.tile<16xi32>) {
  // expected-error @+1 {{'tile.addptr' op offset layout does not match}}
  %0 = tile.addptr %p, %o : !tile.tile<16x!tile.ptr<bf16>, #row>, !tile.tile<16xi32>
  return
}

// -----

func.func @addptr_offset_type(%p: !tile.ptr<bf16>, %o: f32) {
  // expected-error @+1 {{'tile.addptr' op operand #1 must be 32-bit signless integer or 64-bit signless integer or tile of 32-bit signless integer or 64-bit signless integer}}
  %0 = tile.addptr %p, %o : !tile.ptr<bf16>, f32
  return
}

// -----

func.func @load_shape(%p: !tile.tile<64x!tile.ptr<bf16>>) {
  // expected-error @+1 {{'tile.load' op result shape [32] does not match [64]}}
  %0 = tile.load %p : !tile.tile<64x!tile.ptr<bf16>> -> !tile.tile<32xbf16>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @load_layout(%p: !tile.tile<16x!tile.ptr<bf16>>) {
  // expected-error @+1 {{'tile.load' op result layout does not match}}
  %0 = tile.load %p : !tile.tile<16x!tile.ptr<bf16>> -> !tile.tile<16xbf16, #row>
  return
}

// -----

func.func @load_pointee(%p: !tile.tile<64x!tile.ptr<bf16>>) {
  // expected-error @+1 {{'tile.load' op result element type 'f32' does not match pointee type 'bf16'}}
  %0 = tile.load %p : !tile.tile<64x!tile.ptr<bf16>> -> !tile.tile<64xf32>
  return
}

// -----

func.func @load_mask_shape(%p: !tile.tile<64x!tile.ptr<bf16>>, %m: !tile.tile<32xi1>) {
  // expected-error @+1 {{'tile.load' op mask shape [32] does not match [64]}}
  %0 = tile.load %p, %m : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<32xi1> -> !tile.tile<64xbf16>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @load_mask_layout(%p: !tile.tile<16x!tile.ptr<bf16>>, %m: !tile.tile<16xi1, #row>) {
  // expected-error @+1 {{'tile.load' op mask layout does not match}}
  %0 = tile.load %p, %m : !tile.tile<16x!tile.ptr<bf16>>, !tile.tile<16xi1, #row> -> !tile.tile<16xbf16>
  return
}

// -----

func.func @load_mask_type(%p: !tile.tile<64x!tile.ptr<bf16>>, %m: !tile.tile<64xi32>) {
  // expected-error @+1 {{'tile.load' op operand #1 must be tile of 1-bit signless integer, but got '!tile.tile<64xi32>'}}
  %0 = tile.load %p, %m : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<64xi32> -> !tile.tile<64xbf16>
  return
}

// -----

func.func @load_other_without_mask(%p: !tile.tile<64x!tile.ptr<bf16>>, %z: !tile.tile<64xbf16>) {
  // expected-error @+1 {{'tile.load' op `other` needs a `mask`}}
  %0 = "tile.load"(%p, %z) {operandSegmentSizes = array<i32: 1, 0, 1>}
      : (!tile.tile<64x!tile.ptr<bf16>>, !tile.tile<64xbf16>) -> !tile.tile<64xbf16>
  return
}

// -----

func.func @load_other_type(%p: !tile.tile<64x!tile.ptr<bf16>>, %m: !tile.tile<64xi1>, %z: !tile.tile<64xf32>) {
  // expected-error @+1 {{'tile.load' op `other` must have the result type}}
  %0 = tile.load %p, %m, %z : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<64xi1>, !tile.tile<64xf32> -> !tile.tile<64xbf16>
  return
}

// -----

func.func @store_shape(%p: !tile.tile<64x!tile.ptr<bf16>>, %v: !tile.tile<32xbf16>) {
  // expected-error @+1 {{'tile.store' op value shape [32] does not match [64]}}
  tile.store %p, %v : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<32xbf16>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @store_layout(%p: !tile.tile<16x!tile.ptr<bf16>>, %v: !tile.tile<16xbf16, #row>) {
  // expected-error @+1 {{'tile.store' op value layout does not match}}
  tile.store %p, %v : !tile.tile<16x!tile.ptr<bf16>>, !tile.tile<16xbf16, #row>
  return
}

// -----

func.func @store_pointee(%p: !tile.tile<64x!tile.ptr<bf16>>, %v: !tile.tile<64xf32>) {
  // expected-error @+1 {{'tile.store' op value element type 'f32' does not match pointee type 'bf16'}}
  tile.store %p, %v : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<64xf32>
  return
}

// -----

func.func @store_mask_shape(%p: !tile.tile<64x!tile.ptr<bf16>>, %v: !tile.tile<64xbf16>, %m: !tile.tile<64x1xi1>) {
  // expected-error @+1 {{'tile.store' op mask shape [64, 1] does not match [64]}}
  tile.store %p, %v, %m : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<64xbf16>, !tile.tile<64x1xi1>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @store_mask_layout(%p: !tile.tile<16x!tile.ptr<bf16>>, %v: !tile.tile<16xbf16>, %m: !tile.tile<16xi1, #row>) {
  // expected-error @+1 {{'tile.store' op mask layout does not match}}
  tile.store %p, %v, %m : !tile.tile<16x!tile.ptr<bf16>>, !tile.tile<16xbf16>, !tile.tile<16xi1, #row>
  return
}

// -----

func.func @atomic_shape(%p: !tile.tile<64x!tile.ptr<f32>>, %v: !tile.tile<32xf32>) {
  // expected-error @+1 {{'tile.atomic_add' op value shape [32] does not match [64]}}
  %0 = tile.atomic_add %p, %v : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<32xf32> -> !tile.tile<32xf32>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @atomic_layout(%p: !tile.tile<16x!tile.ptr<f32>>, %v: !tile.tile<16xf32, #row>) {
  // expected-error @+1 {{'tile.atomic_add' op value layout does not match}}
  %0 = tile.atomic_add %p, %v : !tile.tile<16x!tile.ptr<f32>>, !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #row>
  return
}

// -----

func.func @atomic_pointee(%p: !tile.tile<64x!tile.ptr<f32>>, %v: !tile.tile<64xf16>) {
  // expected-error @+1 {{'tile.atomic_add' op value element type 'f16' does not match pointee type 'f32'}}
  %0 = tile.atomic_add %p, %v : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf16> -> !tile.tile<64xf16>
  return
}

// -----

func.func @atomic_result(%p: !tile.tile<64x!tile.ptr<f32>>, %v: !tile.tile<64xf32>) {
  // expected-error @+1 {{'tile.atomic_add' op result must have the value's type}}
  %0 = tile.atomic_add %p, %v : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32> -> !tile.tile<64xi32>
  return
}

// -----

func.func @atomic_mask_shape(%p: !tile.tile<64x!tile.ptr<f32>>, %v: !tile.tile<64xf32>, %m: !tile.tile<32xi1>) {
  // expected-error @+1 {{'tile.atomic_add' op mask shape [32] does not match [64]}}
  %0 = tile.atomic_add %p, %v, %m : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32>, !tile.tile<32xi1> -> !tile.tile<64xf32>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @atomic_mask_layout(%p: !tile.tile<16x!tile.ptr<f32>>, %v: !tile.tile<16xf32>, %m: !tile.tile<16xi1, #row>) {
  // expected-error @+1 {{'tile.atomic_add' op mask layout does not match}}
  %0 = tile.atomic_add %p, %v, %m : !tile.tile<16x!tile.ptr<f32>>, !tile.tile<16xf32>, !tile.tile<16xi1, #row> -> !tile.tile<16xf32>
  return
}

// -----

func.func @dot_fp8_mixed(%a: !tile.tile<16x32xf8E4M3FN>, %b: !tile.tile<32x8xf8E5M2>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op operand element types differ: 'f8E4M3FN' vs 'f8E5M2'}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x32xf8E4M3FN>, !tile.tile<32x8xf8E5M2>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_rank(%a: !tile.tile<16xf16>, %b: !tile.tile<16x8xf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must be 2-D tiles}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16xf16>, !tile.tile<16x8xf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_inner(%a: !tile.tile<16x32xf16>, %b: !tile.tile<16x8xf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op inner dimensions do not match: [16, 32] x [16, 8]}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x32xf16>, !tile.tile<16x8xf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: !tile.tile<16x16xf16>, %b: !tile.tile<16x8xf16>, %c: !tile.tile<32x8xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator shape [32, 8] does not match the product shape [16, 8]}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x16xf16>, !tile.tile<16x8xf16>, !tile.tile<32x8xf32>
  return
}

// -----

func.func @dot_operand_types(%a: !tile.tile<16x16xbf16>, %b: !tile.tile<16x8xf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op operand element types differ: 'bf16' vs 'f16'}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x16xbf16>, !tile.tile<16x8xf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_acc_f16(%a: !tile.tile<16x16xf16>, %b: !tile.tile<16x8xf16>, %c: !tile.tile<16x8xf16>) {
  // expected-error @+1 {{'tile.dot' op accumulator must be f32 (or f64 for f64 operands)}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x16xf16>, !tile.tile<16x8xf16>, !tile.tile<16x8xf16>
  return
}

// -----

func.func @dot_f64_acc(%a: !tile.tile<16x16xf64>, %b: !tile.tile<16x8xf64>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op f64 operands need an f64 accumulator and vice versa}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x16xf64>, !tile.tile<16x8xf64>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_acc_f64(%a: !tile.tile<16x16xf32>, %b: !tile.tile<16x8xf32>, %c: !tile.tile<16x8xf64>) {
  // expected-error @+1 {{'tile.dot' op f64 operands need an f64 accumulator and vice versa}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x16xf32>, !tile.tile<16x8xf32>, !tile.tile<16x8xf64>
  return
}

// -----

func.func @dot_tf32(%a: !tile.tile<16x16xbf16>, %b: !tile.tile<16x8xbf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op allow_tf32 only applies to f32 operands}}
  %0 = tile.dot %a, %b, %c {allow_tf32} : !tile.tile<16x16xbf16>, !tile.tile<16x8xbf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_k_used(%a: !tile.tile<16x16xbf16>, %b: !tile.tile<16x8xbf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op k_used 17 is not in [1, 16]}}
  %0 = tile.dot %a, %b, %c {k_used = 17 : i64} : !tile.tile<16x16xbf16>, !tile.tile<16x8xbf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_n_used(%a: !tile.tile<16x16xbf16>, %b: !tile.tile<16x8xbf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op n_used 0 is not in [1, 8]}}
  %0 = tile.dot %a, %b, %c {n_used = 0 : i64} : !tile.tile<16x16xbf16>, !tile.tile<16x8xbf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_int(%a: !tile.tile<16x16xi8>, %b: !tile.tile<16x8xi8>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op operand #0 must be tile of 16-bit float or bfloat16 type or 32-bit float or 64-bit float}}
  %0 = tile.dot %a, %b, %c : !tile.tile<16x16xi8>, !tile.tile<16x8xi8>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @dot_result(%a: !tile.tile<16x16xf16>, %b: !tile.tile<16x8xf16>, %c: !tile.tile<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op failed to verify that all of {acc, result} have same type}}
  %0 = "tile.dot"(%a, %b, %c) : (!tile.tile<16x16xf16>, !tile.tile<16x8xf16>, !tile.tile<16x8xf32>) -> !tile.tile<8x16xf32>
  return
}

// -----

func.func @reduce_axis(%s: !tile.tile<128x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis 2 out of range for rank 2}}
  %0 = tile.reduce max %s {axis = 2 : i32} : !tile.tile<128x64xf32> -> !tile.tile<128xf32>
  return
}

// -----

func.func @reduce_1d(%s: !tile.tile<128xf32>) {
  // expected-error @+1 {{'tile.reduce' op reducing a 1-D tile to a scalar is not supported; reduce a 2-D tile along one axis}}
  %0 = tile.reduce sum %s {axis = 0 : i32} : !tile.tile<128xf32> -> !tile.tile<1xf32>
  return
}

// -----

func.func @reduce_shape(%s: !tile.tile<128x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op result shape must be [128]}}
  %0 = tile.reduce max %s {axis = 1 : i32} : !tile.tile<128x64xf32> -> !tile.tile<64xf32>
  return
}

// -----

func.func @reduce_elt(%s: !tile.tile<128x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op element types must match}}
  %0 = tile.reduce max %s {axis = 1 : i32} : !tile.tile<128x64xf32> -> !tile.tile<128xf16>
  return
}

// -----

func.func @reduce_kind(%s: !tile.tile<128x64xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [max, sum, min]}}
  %0 = tile.reduce prod %s {axis = 1 : i32} : !tile.tile<128x64xf32> -> !tile.tile<128xf32>
  return
}

// -----

func.func @binary_types(%a: !tile.tile<64xf32>, %b: !tile.tile<64xf16>) {
  // expected-error @+1 {{'tile.add' op requires the same type for all operands and results}}
  %0 = "tile.add"(%a, %b) : (!tile.tile<64xf32>, !tile.tile<64xf16>) -> !tile.tile<64xf32>
  return
}

// -----

func.func @bitwise_float(%a: !tile.tile<64xf32>) {
  // expected-error @+1 {{'tile.and' op operand #0 must be tile of 1-bit signless integer or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer}}
  %0 = tile.and %a, %a : !tile.tile<64xf32>
  return
}

// -----

func.func @exp_int(%a: !tile.tile<64xi32>) {
  // expected-error @+1 {{'tile.exp2' op operand #0 must be tile of 16-bit float or bfloat16 type or 32-bit float or 64-bit float}}
  %0 = tile.exp2 %a : !tile.tile<64xi32>
  return
}

// -----

func.func @cmp_shape(%a: !tile.tile<64xi32>) {
  // expected-error @+1 {{'tile.cmp' op result shape [32] does not match [64]}}
  %0 = tile.cmp lt %a, %a : !tile.tile<64xi32> -> !tile.tile<32xi1>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @cmp_layout(%a: !tile.tile<16xi32>) {
  // expected-error @+1 {{'tile.cmp' op result layout does not match}}
  %0 = tile.cmp lt %a, %a : !tile.tile<16xi32> -> !tile.tile<16xi1, #row>
  return
}

// -----

func.func @cmp_result_type(%a: !tile.tile<64xi32>) {
  // expected-error @+1 {{'tile.cmp' op result #0 must be tile of 1-bit signless integer}}
  %0 = tile.cmp lt %a, %a : !tile.tile<64xi32> -> !tile.tile<64xi32>
  return
}

// -----

func.func @cmp_predicate(%a: !tile.tile<64xi32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge, ult, ule, ugt, uge]}}
  %0 = tile.cmp slt %a, %a : !tile.tile<64xi32> -> !tile.tile<64xi1>
  return
}

// -----

func.func @where_shape(%m: !tile.tile<32xi1>, %a: !tile.tile<64xf32>) {
  // expected-error @+1 {{'tile.where' op condition shape [32] does not match [64]}}
  %0 = tile.where %m, %a, %a : !tile.tile<32xi1>, !tile.tile<64xf32>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @where_layout(%m: !tile.tile<16xi1, #row>, %a: !tile.tile<16xf32>) {
  // expected-error @+1 {{'tile.where' op condition layout does not match}}
  %0 = tile.where %m, %a, %a : !tile.tile<16xi1, #row>, !tile.tile<16xf32>
  return
}

// -----

func.func @where_types(%m: !tile.tile<64xi1>, %a: !tile.tile<64xf32>, %b: !tile.tile<64xf16>) {
  // expected-error @+1 {{'tile.where' op failed to verify that all of {lhs, rhs, result} have same type}}
  %0 = "tile.where"(%m, %a, %b) : (!tile.tile<64xi1>, !tile.tile<64xf32>, !tile.tile<64xf16>) -> !tile.tile<64xf32>
  return
}

// -----

func.func @cast_shape(%a: !tile.tile<64xf32>) {
  // expected-error @+1 {{'tile.cast' op result shape [32] does not match [64]}}
  %0 = tile.cast %a : !tile.tile<64xf32> -> !tile.tile<32xbf16>
  return
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
func.func @cast_layout(%a: !tile.tile<16xf32>) {
  // expected-error @+1 {{'tile.cast' op result layout does not match}}
  %0 = tile.cast %a : !tile.tile<16xf32> -> !tile.tile<16xbf16, #row>
  return
}

// -----

func.func @cast_ptr(%a: !tile.tile<16x!tile.ptr<f32>>) {
  // expected-error @+1 {{'tile.cast' op operand #0 must be tile of}}
  %0 = tile.cast %a : !tile.tile<16x!tile.ptr<f32>> -> !tile.tile<16xi64>
  return
}

// -----

// A layout whose bases reach only rows 0-15 of a 32-row tile leaves rows
// without an owner.
// expected-error @+1 {{layout does not cover dimension 0 of size 32}}
func.func @layout_not_covering(%a: !tile.tile<32x8xf32, #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>>)

// -----

func.func @tma_copy_rank(%p: !tile.ptr<bf16>, %n: i32, %ok: i1) {
  // expected-error @+1 {{'tile.tma_copy' op needs a 2-D `shape` and `inner_dim` 0 or 1}}
  tile.tma_copy %p, %n, %n, %ok {slot = 0 : i64, shape = array<i64: 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>
  return
}

// -----

func.func @tma_copy_f32(%p: !tile.ptr<f32>, %n: i32, %ok: i1) {
  // expected-error @+1 {{'tile.tma_copy' op copies f16, bf16 or fp8 tensors, not 'f32'}}
  tile.tma_copy %p, %n, %n, %ok {slot = 0 : i64, shape = array<i64: 64, 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<f32>
  return
}

// -----

func.func @tma_copy_box(%p: !tile.ptr<bf16>, %n: i32, %ok: i1) {
  // expected-error @+1 {{'tile.tma_copy' op box must be a multiple of 64 elements along a row and at most 256 rows}}
  tile.tma_copy %p, %n, %n, %ok {slot = 0 : i64, shape = array<i64: 32, 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>
  return
}

// -----

func.func @tma_copy_stride(%p: !tile.ptr<bf16>, %n: i32, %ok: i1) {
  // expected-error @+1 {{'tile.tma_copy' op row_stride must cover the box and be a multiple of 16 bytes}}
  tile.tma_copy %p, %n, %n, %ok {slot = 0 : i64, shape = array<i64: 64, 64>, inner_dim = 1 : i64, row_stride = 60 : i64} : !tile.ptr<bf16>
  return
}

// -----

func.func @tma_copy_base(%p: !tile.ptr<bf16>, %n: i32, %ok: i1) {
  %q = tile.addptr %p, %n : !tile.ptr<bf16>, i32
  // expected-error @+1 {{'tile.tma_copy' op base must be a pointer argument of the kernel}}
  tile.tma_copy %q, %n, %n, %ok {slot = 0 : i64, shape = array<i64: 64, 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>
  return
}

// -----

func.func @tma_copy_stages(%p: !tile.ptr<bf16>, %n: i32, %ok: i1) {
  // expected-error @+1 {{'tile.tma_copy' op `stages` must be 1 to 4, not 5}}
  tile.tma_copy %p, %n, %n, %ok {slot = 0 : i64, stages = 5 : i64, shape = array<i64: 64, 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>
  return
}

// -----

func.func @tma_wait_rank(%s: i32) {
  // expected-error @+1 {{'tile.tma_wait' op result must be a 2-D tile and `inner_dim` 0 or 1}}
  %0 = tile.tma_wait %s, %s, %s {slot = 0 : i64, inner_dim = 0 : i64} : i32, i32, i32 -> !tile.tile<64xbf16>
  return
}

// -----

func.func @async_dot_not_from_slot(%a: !tile.tile<64x64xbf16>, %b: !tile.tile<64x64xbf16>, %c: !tile.tile<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op async needs b read in place from a TMA slot (a tile.tma_wait result)}}
  %0 = tile.dot %a, %b, %c {async} : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16>, !tile.tile<64x64xf32>
  return
}

// -----

func.func @dot_wait_negative(%c: !tile.tile<64x64xf32>) {
  // expected-error @+1 {{'tile.dot_wait' op pending must be non-negative, got -1}}
  %0 = tile.dot_wait %c {pending = -1 : i64} : !tile.tile<64x64xf32>
  return
}

// -----

func.func @tma_store_inner(%p: !tile.ptr<bf16>, %n: i32, %v: !tile.tile<64x64xbf16>) {
  // expected-error @+1 {{'tile.tma_store' op stores a 2-D tile along its rows (`inner_dim` 1)}}
  tile.tma_store %p, %n, %v {slot = 0 : i64, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>, !tile.tile<64x64xbf16>
  return
}

// -----

func.func @tma_store_type(%p: !tile.ptr<f16>, %n: i32, %v: !tile.tile<64x64xbf16>) {
  // expected-error @+1 {{'tile.tma_store' op stores f16 or bf16 tiles into tensors of the same element type, not 'bf16' into 'f16'}}
  tile.tma_store %p, %n, %v {slot = 0 : i64, inner_dim = 1 : i64, row_stride = 64 : i64} : !tile.ptr<f16>, !tile.tile<64x64xbf16>
  return
}

// -----

func.func @tma_store_box(%p: !tile.ptr<bf16>, %n: i32, %v: !tile.tile<64x32xbf16>) {
  // expected-error @+1 {{'tile.tma_store' op box must be a multiple of 64 elements along a row and at most 256 rows}}
  tile.tma_store %p, %n, %v {slot = 0 : i64, inner_dim = 1 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>, !tile.tile<64x32xbf16>
  return
}

// -----

func.func @tma_store_stride(%p: !tile.ptr<bf16>, %n: i32, %v: !tile.tile<64x64xbf16>) {
  // expected-error @+1 {{'tile.tma_store' op row_stride must cover the box and be a multiple of 16 bytes}}
  tile.tma_store %p, %n, %v {slot = 0 : i64, inner_dim = 1 : i64, row_stride = 60 : i64} : !tile.ptr<bf16>, !tile.tile<64x64xbf16>
  return
}

// -----

func.func @tma_store_base(%p: !tile.ptr<bf16>, %n: i32, %v: !tile.tile<64x64xbf16>) {
  %q = tile.addptr %p, %n : !tile.ptr<bf16>, i32
  // expected-error @+1 {{'tile.tma_store' op base must be a pointer argument of the kernel}}
  tile.tma_store %q, %n, %v {slot = 0 : i64, inner_dim = 1 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>, !tile.tile<64x64xbf16>
  return
}

// -----

func.func @bitcast_width(%a: !tile.tile<16xf32>) {
  // expected-error @+1 {{'tile.bitcast' op cannot bitcast 'f32' to 'i16': bit widths differ}}
  %0 = tile.bitcast %a : !tile.tile<16xf32> -> !tile.tile<16xi16>
  return
}

// -----

func.func @cmp_unsigned_float(%a: !tile.tile<16xf32>) {
  // expected-error @+1 {{'tile.cmp' op unsigned predicate 'ult' needs integer operands}}
  %0 = tile.cmp ult %a, %a : !tile.tile<16xf32> -> !tile.tile<16xi1>
  return
}

// -----

func.func @cast_unsigned_floats(%a: !tile.tile<16xf32>) {
  // expected-error @+1 {{'tile.cast' op 'is_unsigned' needs an integer source or result}}
  %0 = tile.cast %a {is_unsigned} : !tile.tile<16xf32> -> !tile.tile<16xf16>
  return
}

// -----

func.func @shift_float(%a: !tile.tile<16xf32>) {
  // expected-error @+1 {{'tile.shl' op operand #0 must be tile of}}
  %0 = tile.shl %a, %a : !tile.tile<16xf32>
  return
}
