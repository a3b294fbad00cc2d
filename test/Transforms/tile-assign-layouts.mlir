// RUN: tile-opt %s -split-input-file -verify-diagnostics -tile-assign-layouts | FileCheck %s

// tile-assign-layouts gives every tile of a kernel a #tile.layout: the
// mma.sync accumulator layout (warps stacked along rows) for 2-D tiles, its
// row slice for 1-D tiles, blocked 16-byte layouts for loads along a
// contiguous dimension, the mma A-operand layout for bf16/f16 dots, and
// explicit tile.convert_layout where an operand differs.

// 2-D default: the m16n8 accumulator, repeated over columns by registers,
// 4 warps (the default without a tile.schedule) along rows. 1-D default: the
// row slice, with the column lanes replicated.
// CHECK-LABEL: func.func @defaults
// CHECK: tile.full 0.000000e+00 : f32 : <64x64xf32, #tile.layout<regs = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = {{\[}}[16, 0], [32, 0]]>>
// CHECK: tile.iota : <64xi32, #tile.layout<regs = {{\[}}[8]], lanes = {{\[}}[0], [0], [1], [2], [4]], warps = {{\[}}[16], [32]]>>
// CHECK-NOT: tile.convert_layout
// CHECK: return
func.func @defaults() attributes {tile.kernel} {
  %0 = tile.full 0.0 : f32 : !tile.tile<64x64xf32>
  %1 = tile.iota : !tile.tile<64xi32>
  return
}

// -----

// the schedule's num_warps sets the number of warp bases; a tile smaller than the
// fragment has its lanes replicated (zero bases) and no extra registers.
// CHECK-LABEL: func.func @two_warps_small_tile
// CHECK: tile.full {{.*}} : <32x8xf32, #tile.layout<regs = {{\[}}[0, 1], [8, 0]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = {{\[}}[16, 0]]>>
// CHECK: tile.full {{.*}} : <8x2xf32, #tile.layout<regs = {{\[}}[0, 1]], lanes = {{\[}}[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warps = {{\[}}[0, 0]]>>
func.func @two_warps_small_tile() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 2>} {
  %0 = tile.full 0.0 : f32 : !tile.tile<32x8xf32>
  %1 = tile.full 0.0 : f32 : !tile.tile<8x2xf32>
  return
}

// -----

// Elementwise ops, splat, addptr and store share the default layout of
// their shape; expand_dims takes the slice of its result's layout (axis 1:
// the row layout, no conversion); broadcast takes the layout that makes it a
// register copy; reduce yields the slice of its operand's layout. A load
// whose pointers are contiguous along a dimension (here rows: p + i) reads
// 16 bytes (4 f32) per thread along it: its pointers are converted to that
// blocked layout and its result back for the elementwise user.
// CHECK-LABEL: func.func @rows_and_broadcast
// CHECK: %[[IOTA:.*]] = tile.iota : <16xi32, [[ROW:#tile.layout<regs = \[\[8\]\], lanes = \[\[0\], \[0\], \[1\], \[2\], \[4\]\], warps = \[\]>]]>
// CHECK: %[[COL:.*]] = tile.expand_dims %[[IOTA]] {axis = 1 : i32} : <16xi32, [[ROW]]> -> <16x1xi32, [[COL1:#tile.layout<regs = \[\[8, 0\]\], lanes = \[\[0, 0\], \[0, 0\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\]>]]>
// CHECK: %[[BC:.*]] = tile.broadcast %[[COL]] : <16x1xi32, [[COL1]]> -> <16x16xi32, [[ACC:#tile.layout<regs = \[\[0, 1\], \[8, 0\], \[0, 8\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\]>]]>
// CHECK: %[[SPLAT:.*]] = tile.splat %{{.*}} : <16x16x!tile.ptr<f32>, [[ACC]]>
// CHECK: %[[PTRS:.*]] = tile.addptr %[[SPLAT]], %[[BC]] : !tile.tile<16x16x!tile.ptr<f32>, [[ACC]]>, !tile.tile<16x16xi32, [[ACC]]>
// CHECK: %[[PB:.*]] = tile.convert_layout %[[PTRS]] : <16x16x!tile.ptr<f32>, [[ACC]]> -> <16x16x!tile.ptr<f32>, [[BLK:#tile.layout<regs = \[\[1, 0\], \[2, 0\], \[0, 8\]\], lanes = \[\[4, 0\], \[8, 0\], \[0, 1\], \[0, 2\], \[0, 4\]\], warps = \[\]>]]>
// CHECK: %[[V:.*]] = tile.load %[[PB]] : <16x16x!tile.ptr<f32>, [[BLK]]> -> <16x16xf32, [[BLK]]>
// CHECK: %[[VA:.*]] = tile.convert_layout %[[V]] : <16x16xf32, [[BLK]]> -> <16x16xf32, [[ACC]]>
// CHECK: %[[E:.*]] = tile.exp2 %[[VA]] : <16x16xf32, [[ACC]]>
// CHECK: %[[R:.*]] = tile.reduce max %[[E]] {axis = 1 : i32} : <16x16xf32, [[ACC]]> -> <16xf32, [[ROW]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store %[[PTRS]], %[[E]] : <16x16x!tile.ptr<f32>, [[ACC]]>, <16x16xf32, [[ACC]]>
func.func @rows_and_broadcast(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %0 = tile.iota : !tile.tile<16xi32>
  %1 = tile.expand_dims %0 {axis = 1 : i32} : !tile.tile<16xi32> -> !tile.tile<16x1xi32>
  %2 = tile.broadcast %1 : !tile.tile<16x1xi32> -> !tile.tile<16x16xi32>
  %3 = tile.splat %p : !tile.tile<16x16x!tile.ptr<f32>>
  %4 = tile.addptr %3, %2 : !tile.tile<16x16x!tile.ptr<f32>>, !tile.tile<16x16xi32>
  %5 = tile.load %4 : !tile.tile<16x16x!tile.ptr<f32>> -> !tile.tile<16x16xf32>
  %6 = tile.exp2 %5 : !tile.tile<16x16xf32>
  %7 = tile.reduce max %6 {axis = 1 : i32} : !tile.tile<16x16xf32> -> !tile.tile<16xf32>
  tile.store %4, %6 : !tile.tile<16x16x!tile.ptr<f32>>, !tile.tile<16x16xf32>
  return
}

// -----

// A row-major [64, 64] bf16 load (p + 64 * row + col) on 4 warps: 8
// consecutive columns (16 bytes) per thread, 8 lanes across the 64 columns,
// the other lanes and the warps down the rows. A load from one splat
// address has no contiguous dimension and keeps the default layout.
// CHECK-LABEL: func.func @coalesced_load
// CHECK: %[[P:.*]] = tile.addptr %{{.*}}, %{{.*}} : !tile.tile<64x64x!tile.ptr<bf16>, [[ACC:#tile.layout<[^>]*>]]>
// CHECK: %[[PB:.*]] = tile.convert_layout %[[P]] : <64x64x!tile.ptr<bf16>, [[ACC]]> -> <64x64x!tile.ptr<bf16>, [[BLK:#tile.layout<regs = \[\[0, 1\], \[0, 2\], \[0, 4\], \[16, 0\], \[32, 0\]\], lanes = \[\[0, 8\], \[0, 16\], \[0, 32\], \[1, 0\], \[2, 0\]\], warps = \[\[4, 0\], \[8, 0\]\]>]]>
// CHECK: tile.load %[[PB]] : <64x64x!tile.ptr<bf16>, [[BLK]]> -> <64x64xbf16, [[BLK]]>
// CHECK: %[[S:.*]] = tile.splat %{{.*}} : <64x64x!tile.ptr<bf16>, [[ACC]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.load %[[S]] : <64x64x!tile.ptr<bf16>, [[ACC]]> -> <64x64xbf16, [[ACC]]>
func.func @coalesced_load(%p: !tile.ptr<bf16>) attributes {tile.kernel} {
  %i = tile.iota : !tile.tile<64xi32>
  %r = tile.expand_dims %i {axis = 1 : i32} : !tile.tile<64xi32> -> !tile.tile<64x1xi32>
  %ld = tile.full 64 : i32 : !tile.tile<64x1xi32>
  %ro = tile.mul %r, %ld : !tile.tile<64x1xi32>
  %c = tile.expand_dims %i {axis = 0 : i32} : !tile.tile<64xi32> -> !tile.tile<1x64xi32>
  %rb = tile.broadcast %ro : !tile.tile<64x1xi32> -> !tile.tile<64x64xi32>
  %cb = tile.broadcast %c : !tile.tile<1x64xi32> -> !tile.tile<64x64xi32>
  %off = tile.add %rb, %cb : !tile.tile<64x64xi32>
  %s = tile.splat %p : !tile.tile<64x64x!tile.ptr<bf16>>
  %ptrs = tile.addptr %s, %off : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi32>
  %v = tile.load %ptrs : !tile.tile<64x64x!tile.ptr<bf16>> -> !tile.tile<64x64xbf16>
  %s2 = tile.splat %p : !tile.tile<64x64x!tile.ptr<bf16>>
  %w = tile.load %s2 : !tile.tile<64x64x!tile.ptr<bf16>> -> !tile.tile<64x64xbf16>
  return
}

// -----

// expand_dims along axis 0 needs the column slice of a [1, 64] tile, which
// the 1-D default (rows) is not: a conversion is inserted on its operand.
// The broadcast operand's layout drops the row bases (registers) and zeroes
// the row lanes and warps (replication).
// CHECK-LABEL: func.func @expand_axis0
// CHECK: %[[IOTA:.*]] = tile.iota : <64xi32, [[ROW:#tile.layout<regs = \[\[8\]\], lanes = \[\[0\], \[0\], \[1\], \[2\], \[4\]\], warps = \[\[16\], \[32\]\]>]]>
// CHECK: %[[CVT:.*]] = tile.convert_layout %[[IOTA]] : <64xi32, [[ROW]]> -> <64xi32, [[COLS:#tile.layout<regs = \[\[1\], \[8\], \[16\], \[32\]\], lanes = \[\[2\], \[4\], \[0\], \[0\], \[0\]\], warps = \[\[0\], \[0\]\]>]]>
// CHECK: %[[E:.*]] = tile.expand_dims %[[CVT]] {axis = 0 : i32} : <64xi32, [[COLS]]> -> <1x64xi32, [[ROW1:#tile.layout<regs = \[\[0, 1\], \[0, 8\], \[0, 16\], \[0, 32\]\], lanes = \[\[0, 2\], \[0, 4\], \[0, 0\], \[0, 0\], \[0, 0\]\], warps = \[\[0, 0\], \[0, 0\]\]>]]>
// CHECK: tile.broadcast %[[E]] : <1x64xi32, [[ROW1]]> -> <64x64xi32, #tile.layout<regs = {{\[}}[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = {{\[}}[16, 0], [32, 0]]>>
func.func @expand_axis0() attributes {tile.kernel} {
  %0 = tile.iota : !tile.tile<64xi32>
  %1 = tile.expand_dims %0 {axis = 0 : i32} : !tile.tile<64xi32> -> !tile.tile<1x64xi32>
  %2 = tile.broadcast %1 : !tile.tile<1x64xi32> -> !tile.tile<64x64xi32>
  return
}

// -----

// bf16 dot: A (MxK) in the m16k16 operand layout, which is the default layout
// of its shape (no conversion); B (KxN) keeps the layout it has (the
// lowering stages it through shared memory); the accumulator and the result
// in the accumulator layout, whose bases equal A's here.
// CHECK-LABEL: func.func @dot_bf16
// CHECK: %[[A:.*]] = tile.load %{{.*}} -> <64x16xbf16, [[OPA:#tile.layout<regs = \[\[0, 1\], \[8, 0\], \[0, 8\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\[16, 0\], \[32, 0\]\]>]]>
// B has 16 rows, too few for 4 warps: its default layout splits the
// columns among 2 of them (8 each, a multiple of the mma n8) and copies the
// rest.
// CHECK: %[[B:.*]] = tile.load %{{.*}} -> <16x16xbf16, [[BDEF:#tile.layout<regs = \[\[0, 1\], \[8, 0\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\[0, 8\], \[0, 0\]\]>]]>
// CHECK: %[[C:.*]] = tile.full 0.000000e+00 : f32 : <64x16xf32, [[OPA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.dot %[[A]], %[[B]], %[[C]] : <64x16xbf16, [[OPA]]>, <16x16xbf16, [[BDEF]]>, <64x16xf32, [[OPA]]>
func.func @dot_bf16(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
  %pa = tile.splat %p : !tile.tile<64x16x!tile.ptr<bf16>>
  %a = tile.load %pa : !tile.tile<64x16x!tile.ptr<bf16>> -> !tile.tile<64x16xbf16>
  %pb = tile.splat %p : !tile.tile<16x16x!tile.ptr<bf16>>
  %b = tile.load %pb : !tile.tile<16x16x!tile.ptr<bf16>> -> !tile.tile<16x16xbf16>
  %c = tile.full 0.0 : f32 : !tile.tile<64x16xf32>
  %d = tile.dot %a, %b, %c : !tile.tile<64x16xbf16>, !tile.tile<16x16xbf16>, !tile.tile<64x16xf32>
  return
}

// -----

// A bf16 A operand that is not in the operand layout (a transposed tile) is
// converted to it.
// CHECK-LABEL: func.func @dot_bf16_converts_a
// CHECK: %[[T:.*]] = tile.trans %{{.*}} -> <16x16xbf16, [[TR:#tile.layout<regs = \[\[1, 0\], \[0, 8\], \[8, 0\]\][^>]*>]]>
// CHECK: %[[AC:.*]] = tile.convert_layout %[[T]] : <16x16xbf16, [[TR]]> -> <16x16xbf16, #tile.layout<regs = {{\[}}[0, 1], [8, 0], [0, 8]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>>
// CHECK: tile.dot %[[AC]],
func.func @dot_bf16_converts_a() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 1.0 : bf16 : !tile.tile<16x16xbf16>
  %t = tile.trans %a : !tile.tile<16x16xbf16> -> !tile.tile<16x16xbf16>
  %b = tile.full 1.0 : bf16 : !tile.tile<16x8xbf16>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32>
  %d = tile.dot %t, %b, %c : !tile.tile<16x16xbf16>, !tile.tile<16x8xbf16>, !tile.tile<16x8xf32>
  return
}

// -----

// IEEE fp32 dot: the lowering stages both operands in shared memory, so A
// and B are in their default layouts (converted if need be) and the
// accumulator in the accumulator layout.
// CHECK-LABEL: func.func @dot_f32
// CHECK: %[[A:.*]] = tile.full 1.000000e+00 : f32 : <16x8xf32, [[ACC:#tile.layout<regs = \[\[0, 1\], \[8, 0\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\]>]]>
// CHECK: %[[T:.*]] = tile.trans %{{.*}} : <8x8xf32, [[B8:#tile.layout<regs = \[\[0, 1\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\]>]]> -> <8x8xf32, [[B8T:#tile.layout<[^>]*>]]>
// CHECK: %[[C:.*]] = tile.full 0.000000e+00 : f32 : <16x8xf32, [[ACC]]>
// CHECK: %[[BC:.*]] = tile.convert_layout %[[T]] : <8x8xf32, [[B8T]]> -> <8x8xf32, [[B8]]>
// CHECK-NEXT: tile.dot %[[A]], %[[BC]], %[[C]] : <16x8xf32, [[ACC]]>, <8x8xf32, [[B8]]>, <16x8xf32, [[ACC]]>
func.func @dot_f32() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 1.0 : f32 : !tile.tile<16x8xf32>
  %b = tile.full 2.0 : f32 : !tile.tile<8x8xf32>
  %t = tile.trans %b : !tile.tile<8x8xf32> -> !tile.tile<8x8xf32>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32>
  %d = tile.dot %a, %t, %c : !tile.tile<16x8xf32>, !tile.tile<8x8xf32>, !tile.tile<16x8xf32>
  return
}

// -----

// Loop-carried tiles take the default layout: the iter_args, the loop
// results and the yielded values agree; a transposed value yielded into an
// accumulator-layout iter_arg is converted before scf.yield.
// CHECK-LABEL: func.func @loop_carried
// CHECK: %[[INIT:.*]] = tile.full {{.*}} : <16x16xf32, [[ACC:#tile.layout<regs = \[\[0, 1\], \[8, 0\], \[0, 8\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\]>]]>
// CHECK: %[[M0:.*]] = tile.full {{.*}} : <16xf32, [[ROW:#tile.layout<regs = \[\[8\]\], lanes = \[\[0\], \[0\], \[1\], \[2\], \[4\]\], warps = \[\]>]]>
// CHECK: scf.for {{.*}} iter_args(%[[ACCV:.*]] = %[[INIT]], %[[M:.*]] = %[[M0]]) -> (!tile.tile<16x16xf32, [[ACC]]>, !tile.tile<16xf32, [[ROW]]>)
// CHECK: %[[T:.*]] = tile.trans %[[ACCV]] : <16x16xf32, [[ACC]]> -> <16x16xf32, [[TR:#tile.layout<regs = \[\[1, 0\], \[0, 8\], \[8, 0\]\], lanes = \[\[2, 0\], \[4, 0\], \[0, 1\], \[0, 2\], \[0, 4\]\], warps = \[\]>]]>
// CHECK: %[[S:.*]] = tile.reduce sum %[[ACCV]] {axis = 1 : i32} : <16x16xf32, [[ACC]]> -> <16xf32, [[ROW]]>
// CHECK: %[[MAX:.*]] = tile.max %[[M]], %[[S]] : <16xf32, [[ROW]]>
// CHECK: %[[TC:.*]] = tile.convert_layout %[[T]] : <16x16xf32, [[TR]]> -> <16x16xf32, [[ACC]]>
// CHECK: scf.yield %[[TC]], %[[MAX]] : !tile.tile<16x16xf32, [[ACC]]>, !tile.tile<16xf32, [[ROW]]>
func.func @loop_carried(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = tile.full 0.0 : f32 : !tile.tile<16x16xf32>
  %m0 = tile.full 0.0 : f32 : !tile.tile<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init, %m = %m0) -> (!tile.tile<16x16xf32>, !tile.tile<16xf32>) : i32 {
    %t = tile.trans %acc : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
    %s = tile.reduce sum %acc {axis = 1 : i32} : !tile.tile<16x16xf32> -> !tile.tile<16xf32>
    %m2 = tile.max %m, %s : !tile.tile<16xf32>
    scf.yield %t, %m2 : !tile.tile<16x16xf32>, !tile.tile<16xf32>
  }
  return
}

// -----

// Functions without tile.kernel are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK: tile.iota : <16xi32>
func.func @not_a_kernel() {
  %0 = tile.iota : !tile.tile<16xi32>
  return
}

// -----

func.func @non_power_of_two() attributes {tile.kernel} {
  // expected-error @below {{tile shape [24] is not supported: tiles must have rank 1 or 2 and power-of-two dimensions}}
  %0 = tile.iota : !tile.tile<24xi32>
  return
}

// -----

func.func @rank_three() attributes {tile.kernel} {
  // expected-error @below {{tile shape [2, 4, 8] is not supported: tiles must have rank 1 or 2 and power-of-two dimensions}}
  %0 = tile.full 0.0 : f32 : !tile.tile<2x4x8xf32>
  return
}

// -----

func.func @mma_m_not_multiple_of_16() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 0.0 : bf16 : !tile.tile<8x16xbf16>
  %b = tile.full 0.0 : bf16 : !tile.tile<16x8xbf16>
  %c = tile.full 0.0 : f32 : !tile.tile<8x8xf32>
  // expected-error @below {{tensor-core dot needs M % 16 == 0, N % 8 == 0 and K % 16 == 0, got M=8 N=8 K=16}}
  %d = tile.dot %a, %b, %c : !tile.tile<8x16xbf16>, !tile.tile<16x8xbf16>, !tile.tile<8x8xf32>
  return
}

// -----

func.func @mma_k_not_multiple_of_16() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 0.0 : f16 : !tile.tile<16x8xf16>
  %b = tile.full 0.0 : f16 : !tile.tile<8x8xf16>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32>
  // expected-error @below {{tensor-core dot needs M % 16 == 0, N % 8 == 0 and K % 16 == 0, got M=16 N=8 K=8}}
  %d = tile.dot %a, %b, %c : !tile.tile<16x8xf16>, !tile.tile<8x8xf16>, !tile.tile<16x8xf32>
  return
}

// -----

func.func @tf32_unsupported() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 0.0 : f32 : !tile.tile<16x8xf32>
  %b = tile.full 0.0 : f32 : !tile.tile<8x8xf32>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32>
  // expected-error @below {{allow_tf32 dots are not supported yet}}
  %d = tile.dot %a, %b, %c {allow_tf32} : !tile.tile<16x8xf32>, !tile.tile<8x8xf32>, !tile.tile<16x8xf32>
  return
}

// -----

// expected-error @below {{invalid schedule: num_warps must be a power of two in [1, 32], got 3}}
func.func @three_warps() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 3>} {
  %0 = tile.iota : !tile.tile<16xi32>
  return
}

// -----

// A row-major [64, 128] bf16 store on 4 warps would be 32 stores of 4 bytes
// per thread in the default layout: it is given that layout with lanes and
// registers traded inside each warp (columns 2 and 4 into registers, 8 and
// 16 onto lanes: 8 consecutive columns, 16 bytes, per thread), and its
// operands are converted to it. A [64, 64] store (16 stores per thread)
// keeps the default layout.
// CHECK-LABEL: func.func @wide_store
// CHECK: %[[P:.*]] = tile.addptr %{{.*}} : !tile.tile<64x128x!tile.ptr<bf16>, [[ACC:#tile.layout<[^>]*>]]>
// CHECK: %[[V:.*]] = tile.full {{.*}} : <64x128xbf16, [[ACC]]>
// CHECK: %[[PW:.*]] = tile.convert_layout %[[P]] : <64x128x!tile.ptr<bf16>, [[ACC]]> -> <64x128x!tile.ptr<bf16>, [[WIDE:#tile.layout<regs = \[\[0, 1\], \[0, 2\], \[0, 4\], \[8, 0\], \[0, 32\], \[0, 64\]\], lanes = \[\[0, 8\], \[0, 16\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\[16, 0\], \[32, 0\]\]>]]>
// CHECK: %[[VW:.*]] = tile.convert_layout %[[V]] : <64x128xbf16, [[ACC]]> -> <64x128xbf16, [[WIDE]]>
// CHECK: tile.store %[[PW]], %[[VW]] : <64x128x!tile.ptr<bf16>, [[WIDE]]>, <64x128xbf16, [[WIDE]]>
// CHECK: %[[Q:.*]] = tile.addptr %{{.*}} : !tile.tile<64x64x!tile.ptr<bf16>, [[ACC64:#tile.layout<[^>]*>]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store %[[Q]], %{{.*}} : <64x64x!tile.ptr<bf16>, [[ACC64]]>, <64x64xbf16, [[ACC64]]>
func.func @wide_store(%p: !tile.ptr<bf16>) attributes {tile.kernel} {
  %i = tile.iota : !tile.tile<64xi32>
  %r = tile.expand_dims %i {axis = 1 : i32} : !tile.tile<64xi32> -> !tile.tile<64x1xi32>
  %ld = tile.full 128 : i32 : !tile.tile<64x1xi32>
  %ro = tile.mul %r, %ld : !tile.tile<64x1xi32>
  %j = tile.iota : !tile.tile<128xi32>
  %c = tile.expand_dims %j {axis = 0 : i32} : !tile.tile<128xi32> -> !tile.tile<1x128xi32>
  %rb = tile.broadcast %ro : !tile.tile<64x1xi32> -> !tile.tile<64x128xi32>
  %cb = tile.broadcast %c : !tile.tile<1x128xi32> -> !tile.tile<64x128xi32>
  %off = tile.add %rb, %cb : !tile.tile<64x128xi32>
  %s = tile.splat %p : !tile.tile<64x128x!tile.ptr<bf16>>
  %ptrs = tile.addptr %s, %off : !tile.tile<64x128x!tile.ptr<bf16>>, !tile.tile<64x128xi32>
  %v = tile.full 1.0 : bf16 : !tile.tile<64x128xbf16>
  tile.store %ptrs, %v : !tile.tile<64x128x!tile.ptr<bf16>>, !tile.tile<64x128xbf16>
  %ld64 = tile.full 64 : i32 : !tile.tile<64x1xi32>
  %ro64 = tile.mul %r, %ld64 : !tile.tile<64x1xi32>
  %c64 = tile.expand_dims %i {axis = 0 : i32} : !tile.tile<64xi32> -> !tile.tile<1x64xi32>
  %rb64 = tile.broadcast %ro64 : !tile.tile<64x1xi32> -> !tile.tile<64x64xi32>
  %cb64 = tile.broadcast %c64 : !tile.tile<1x64xi32> -> !tile.tile<64x64xi32>
  %off64 = tile.add %rb64, %cb64 : !tile.tile<64x64xi32>
  %s64 = tile.splat %p : !tile.tile<64x64x!tile.ptr<bf16>>
  %q = tile.addptr %s64, %off64 : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xi32>
  %v64 = tile.full 2.0 : bf16 : !tile.tile<64x64xbf16>
  tile.store %q, %v64 : !tile.tile<64x64x!tile.ptr<bf16>>, !tile.tile<64x64xbf16>
  return
}

// -----

// The same [64, 128] store through a pointer tile carried by a loop keeps
// the default layout: its pointers could not be recomputed in the wide one
// (they would cross lanes, 64 bits each, or go through shared memory).
// CHECK-LABEL: func.func @wide_store_needs_cheap_pointers
// CHECK: scf.for
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store %{{.*}}, %{{.*}} : <64x128x!tile.ptr<bf16>, [[ACC:#tile.layout<regs = \[\[0, 1\], \[8, 0\][^>]*>]]>, <64x128xbf16, [[ACC]]>
func.func @wide_store_needs_cheap_pointers(%p: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %i = tile.iota : !tile.tile<64xi32>
  %r = tile.expand_dims %i {axis = 1 : i32} : !tile.tile<64xi32> -> !tile.tile<64x1xi32>
  %ld = tile.full 128 : i32 : !tile.tile<64x1xi32>
  %ro = tile.mul %r, %ld : !tile.tile<64x1xi32>
  %j = tile.iota : !tile.tile<128xi32>
  %c = tile.expand_dims %j {axis = 0 : i32} : !tile.tile<128xi32> -> !tile.tile<1x128xi32>
  %rb = tile.broadcast %ro : !tile.tile<64x1xi32> -> !tile.tile<64x128xi32>
  %cb = tile.broadcast %c : !tile.tile<1x128xi32> -> !tile.tile<64x128xi32>
  %off = tile.add %rb, %cb : !tile.tile<64x128xi32>
  %s = tile.splat %p : !tile.tile<64x128x!tile.ptr<bf16>>
  %ptrs = tile.addptr %s, %off : !tile.tile<64x128x!tile.ptr<bf16>>, !tile.tile<64x128xi32>
  %step = tile.full 8192 : i32 : !tile.tile<64x128xi32>
  %v = tile.full 1.0 : bf16 : !tile.tile<64x128xbf16>
  %last = scf.for %k = %c0 to %n step %c1 iter_args(%q = %ptrs) -> (!tile.tile<64x128x!tile.ptr<bf16>>) : i32 {
    tile.store %q, %v : !tile.tile<64x128x!tile.ptr<bf16>>, !tile.tile<64x128xbf16>
    %next = tile.addptr %q, %step : !tile.tile<64x128x!tile.ptr<bf16>>, !tile.tile<64x128xi32>
    scf.yield %next : !tile.tile<64x128x!tile.ptr<bf16>>
  }
  return
}

// -----

// A 16-row product at 4 warps (decode: the query heads of one KV head): the
// result splits its 64 columns among the warps (16 each) instead of every
// warp holding all of it; A keeps the operand layout, whole rows in every
// warp (warps replicate it), converted once from its default.
// CHECK-LABEL: func.func @dot_16_rows
// CHECK: %[[A:.*]] = tile.load %{{.*}} -> <16x32xbf16, [[ADEF:#tile.layout<[^>]*warps = \[\[0, 8\], \[0, 16\]\]>]]>
// CHECK: %[[AOP:.*]] = tile.convert_layout %[[A]] : <16x32xbf16, [[ADEF]]> -> <16x32xbf16, [[OPA:#tile.layout<regs = \[\[0, 1\], \[8, 0\], \[0, 8\], \[0, 16\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\[0, 0\], \[0, 0\]\]>]]>
// CHECK: tile.dot %[[AOP]], %{{.*}}, %{{.*}} : <16x32xbf16, [[OPA]]>, {{.*}}, <16x64xf32, [[ACC:#tile.layout<regs = \[\[0, 1\], \[8, 0\], \[0, 8\]\], lanes = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warps = \[\[0, 16\], \[0, 32\]\]>]]>
func.func @dot_16_rows(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
  %pa = tile.splat %p : !tile.tile<16x32x!tile.ptr<bf16>>
  %a = tile.load %pa : !tile.tile<16x32x!tile.ptr<bf16>> -> !tile.tile<16x32xbf16>
  %pb = tile.splat %p : !tile.tile<32x64x!tile.ptr<bf16>>
  %b = tile.load %pb : !tile.tile<32x64x!tile.ptr<bf16>> -> !tile.tile<32x64xbf16>
  %c = tile.full 0.0 : f32 : !tile.tile<16x64xf32>
  %d = tile.dot %a, %b, %c : !tile.tile<16x32xbf16>, !tile.tile<32x64xbf16>, !tile.tile<16x64xf32>
  return
}
