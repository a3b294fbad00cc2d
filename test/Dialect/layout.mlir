// RUN: tile-opt %s -split-input-file | tile-opt -split-input-file | FileCheck %s

// #tile.layout encodings: linear maps over GF(2) from (register, lane, warp)
// bits to tile coordinates. Each basis has one component per tile dimension;
// a zero lane or warp basis replicates the element over those threads.

// The m16n8 mma.sync accumulator of one warp: 2 registers along columns, 1
// along rows (+8), 2 lanes along columns, 3 along rows.
// CHECK-LABEL: func.func @accumulator_one_warp
// CHECK-SAME: !tile.tile<16x8xf32, #tile.layout<regs = {{\[}}[0, 1], [8, 0]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>>
func.func @accumulator_one_warp(%a: !tile.tile<16x8xf32, #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>>) {
  return
}

// -----

// A 64x64 accumulator over 4 warps stacked along rows; the extra register
// bases repeat the m16n8 fragment over the columns.
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
// CHECK-LABEL: func.func @accumulator_four_warps
// CHECK-SAME: #tile.layout<regs = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = {{\[}}[16, 0], [32, 0]]>
func.func @accumulator_four_warps(%a: !tile.tile<64x64xf32, #acc>) -> !tile.tile<64x64xf32, #acc> {
  return %a : !tile.tile<64x64xf32, #acc>
}

// -----

// The mma.sync B operand (k16 x n8) replicated over 4 warps: zero warp bases.
#opb = #tile.layout<regs = [[1, 0], [8, 0]], lanes = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = [[0, 0], [0, 0]]>
// CHECK-LABEL: func.func @replicated_over_warps
// CHECK-SAME: warps = {{\[}}[0, 0], [0, 0]]>
func.func @replicated_over_warps(%b: !tile.tile<16x8xbf16, #opb>) {
  return
}

// -----

// A row vector sliced out of the accumulator (the result of a row reduction):
// lanes that walked the columns now hold copies.
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = [[16], [32]]>
// CHECK-LABEL: func.func @sliced_row
// CHECK-SAME: !tile.tile<64xf32, #tile.layout<regs = {{\[}}[8]], lanes = {{\[}}[0], [0], [1], [2], [4]], warps = {{\[}}[16], [32]]>>
func.func @sliced_row(%m: !tile.tile<64xf32, #row>) {
  return
}

// -----

// Coalesced global access: 8 contiguous bf16 (16 bytes) per thread.
#blocked = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [8, 0], [16, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = [[4, 0]]>
// CHECK-LABEL: func.func @blocked_load
// CHECK: tile.load %{{.*}} : <32x64x!tile.ptr<bf16>, #tile.layout<regs = {{\[}}[0, 1], [0, 2], [0, 4], [8, 0], [16, 0]], lanes = {{\[}}[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = {{\[}}[4, 0]]>> -> <32x64xbf16, #tile.layout<{{.*}}>>
func.func @blocked_load(%p: !tile.tile<32x64x!tile.ptr<bf16>, #blocked>) -> !tile.tile<32x64xbf16, #blocked> {
  %0 = tile.load %p : !tile.tile<32x64x!tile.ptr<bf16>, #blocked> -> !tile.tile<32x64xbf16, #blocked>
  return %0 : !tile.tile<32x64xbf16, #blocked>
}

// -----

// A basis with several set components (an XOR swizzle) and a rank-3 layout.
#swz = #tile.layout<regs = [[0, 1], [1, 2]], lanes = [[2, 0], [4, 0], [8, 4], [16, 0], [0, 0]], warps = []>
#r3 = #tile.layout<regs = [[0, 0, 1]], lanes = [[0, 0, 2], [0, 1, 0], [0, 2, 0], [1, 0, 0], [0, 0, 0]], warps = [[2, 0, 0]]>
// CHECK-LABEL: func.func @swizzle_and_rank3
// CHECK-SAME: regs = {{\[}}[0, 1], [1, 2]], lanes = {{\[}}[2, 0], [4, 0], [8, 4], [16, 0], [0, 0]]
// CHECK-SAME: !tile.tile<4x4x4xf16, #tile.layout<regs = {{\[}}[0, 0, 1]], lanes = {{\[}}[0, 0, 2], [0, 1, 0], [0, 2, 0], [1, 0, 0], [0, 0, 0]], warps = {{\[}}[2, 0, 0]]>>
func.func @swizzle_and_rank3(%a: !tile.tile<32x8xf16, #swz>, %b: !tile.tile<4x4x4xf16, #r3>) {
  return
}

// -----

// A layout is also an ordinary attribute.
// CHECK-LABEL: func.func @as_attribute
// CHECK: some.layout = #tile.layout<regs = [], lanes = {{\[}}[1], [2], [4], [8], [16]], warps = []>
func.func @as_attribute() attributes {some.layout = #tile.layout<regs = [], lanes = [[1], [2], [4], [8], [16]], warps = []>} {
  return
}

// -----

// Layout-carrying tiles through ops and loops: the accumulator feeds a row
// reduction, the P tile moves from the accumulator layout to the A-operand
// layout, and scf.for carries encoded tiles.
#acc = #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#opa = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[8, 0]], lanes = [[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warps = []>
// CHECK-LABEL: func.func @encoded_loop
// CHECK: scf.for {{.*}} -> (!tile.tile<16xf32, #tile.layout<regs = {{\[}}[8]]
// CHECK:   tile.reduce max %{{.*}} {axis = 1 : i32} : <16x8xf32, #tile.layout<{{.*}}>> -> <16xf32, #tile.layout<regs = {{\[}}[8]], lanes = {{\[}}[0], [0], [1], [2], [4]], warps = []>>
// CHECK:   tile.expand_dims %{{.*}} {axis = 1 : i32} : <16xf32, #tile.layout<{{.*}}>> -> <16x1xf32, #tile.layout<regs = {{\[}}[8, 0]], lanes = {{\[}}[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warps = []>>
// CHECK:   tile.convert_layout %{{.*}} : <16x16xbf16, #tile.layout<regs = {{\[}}[0, 1], [8, 0], [0, 8]]{{.*}}>> -> <16x16xbf16>
func.func @encoded_loop(%s: !tile.tile<16x8xf32, #acc>, %p: !tile.tile<16x16xbf16, #opa>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = tile.full 0xFF800000 : f32 : !tile.tile<16xf32, #row>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %init) -> (!tile.tile<16xf32, #row>) {
    %rm = tile.reduce max %s {axis = 1 : i32} : !tile.tile<16x8xf32, #acc> -> !tile.tile<16xf32, #row>
    %e = tile.expand_dims %rm {axis = 1 : i32} : !tile.tile<16xf32, #row> -> !tile.tile<16x1xf32, #col>
    %x = tile.convert_layout %p : !tile.tile<16x16xbf16, #opa> -> !tile.tile<16x16xbf16>
    %mn = tile.max %m, %rm : !tile.tile<16xf32, #row>
    scf.yield %mn : !tile.tile<16xf32, #row>
  }
  return
}
