// RUN: tile-opt %s -split-input-file -tile-remove-layout-conversions | FileCheck %s

// tile-remove-layout-conversions recomputes cheap producers (iota, full,
// splat, elementwise ops, expand_dims, broadcast, a single-use load) in the
// layout a tile.convert_layout asks for, and folds conversions of
// conversions. What stays needs data movement between threads.

// Two layouts of a 16-element vector over one warp: rows of the mma
// accumulator (8 lanes, replicated over the other 4) and its columns.
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// iota, splat and the add of both are recomputed in #col; nothing converts.
// CHECK-LABEL: func.func @remat_iota_splat_elementwise
// CHECK-SAME: (%[[X:.*]]: i32)
// CHECK-NOT: tile.convert_layout
// CHECK-DAG: %[[I:.*]] = tile.iota : <16xi32, [[COL:#tile.layout<regs = \[\[1\], \[8\]\], lanes = \[\[2\], \[4\], \[0\], \[0\], \[0\]\], warps = \[\]>]]>
// CHECK-DAG: %[[S:.*]] = tile.splat %[[X]] : <16xi32, [[COL]]>
// CHECK: %[[A:.*]] = tile.add %[[I]], %[[S]] : <16xi32, [[COL]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[A]]
func.func @remat_iota_splat_elementwise(%x: i32) -> !tile.tile<16xi32, #col> {
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.splat %x : !tile.tile<16xi32, #row>
  %2 = tile.add %0, %1 : !tile.tile<16xi32, #row>
  %3 = tile.convert_layout %2 : !tile.tile<16xi32, #row> -> !tile.tile<16xi32, #col>
  return %3 : !tile.tile<16xi32, #col>
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A constant is rematerialised too (and a multi-use cheap value is cloned,
// the original kept for its other user).
// CHECK-LABEL: func.func @remat_shared_cheap_value
// CHECK-DAG: %[[FR:.*]] = tile.full 1.000000e+00 : f32 : <16xf32, [[ROW:#tile.layout<regs = \[\[8\]\], lanes = \[\[0\], \[0\], \[1\], \[2\], \[4\]\], warps = \[\]>]]>
// CHECK-DAG: %[[FC:.*]] = tile.full 1.000000e+00 : f32 : <16xf32, [[COL:#tile.layout<regs = \[\[1\], \[8\]\], lanes = \[\[2\], \[4\], \[0\], \[0\], \[0\]\], warps = \[\]>]]>
// CHECK-DAG: %[[ER:.*]] = tile.exp %[[FR]] : <16xf32, [[ROW]]>
// CHECK-DAG: %[[EC:.*]] = tile.exp %[[FC]] : <16xf32, [[COL]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[ER]], %[[EC]]
func.func @remat_shared_cheap_value() -> (!tile.tile<16xf32, #row>, !tile.tile<16xf32, #col>) {
  %0 = tile.full 1.0 : f32 : !tile.tile<16xf32, #row>
  %1 = tile.exp %0 : !tile.tile<16xf32, #row>
  %2 = tile.convert_layout %1 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
  return %1, %2 : !tile.tile<16xf32, #row>, !tile.tile<16xf32, #col>
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A load with one use is issued directly in the wanted layout, and so are
// its pointer computation and mask (the iota they share is recomputed once
// for each: the pass does not CSE).
// CHECK-LABEL: func.func @sink_into_single_use_load
// CHECK-SAME: (%[[P:.*]]: !tile.ptr<f32>, %[[N:.*]]: i32)
// CHECK-NOT: tile.convert_layout
// CHECK-DAG: %[[S:.*]] = tile.splat %[[P]] : <16x!tile.ptr<f32>, [[COL:#tile.layout<regs = \[\[1\], \[8\]\], lanes = \[\[2\], \[4\], \[0\], \[0\], \[0\]\], warps = \[\]>]]>
// CHECK-DAG: %[[I:.*]] = tile.iota : <16xi32, #tile.layout<regs = {{\[}}[1], [8]], lanes = {{\[}}[2], [4], [0], [0], [0]], warps = []>>
// CHECK-DAG: %[[PTRS:.*]] = tile.addptr %[[S]], %[[I]] : !tile.tile<16x!tile.ptr<f32>, [[COL]]>, !tile.tile<16xi32, [[COL]]>
// CHECK-DAG: %[[I2:.*]] = tile.iota : <16xi32, [[COL]]>
// CHECK-DAG: %[[NS:.*]] = tile.splat %[[N]] : <16xi32, [[COL]]>
// CHECK-DAG: %[[M:.*]] = tile.cmp lt %[[I2]], %[[NS]] : <16xi32, [[COL]]> -> <16xi1, [[COL]]>
// CHECK: %[[L:.*]] = tile.load %[[PTRS]], %[[M]] : <16x!tile.ptr<f32>, [[COL]]>, !tile.tile<16xi1, [[COL]]> -> <16xf32, [[COL]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[L]]
func.func @sink_into_single_use_load(%p: !tile.ptr<f32>, %n: i32) -> !tile.tile<16xf32, #col> {
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #row>
  %2 = tile.addptr %1, %0 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xi32, #row>
  %3 = tile.splat %n : !tile.tile<16xi32, #row>
  %4 = tile.cmp lt %0, %3 : !tile.tile<16xi32, #row> -> !tile.tile<16xi1, #row>
  %5 = tile.load %2, %4 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xi1, #row> -> !tile.tile<16xf32, #row>
  %6 = tile.convert_layout %5 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
  return %6 : !tile.tile<16xf32, #col>
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A load with two uses is not duplicated (that would read memory twice):
// its conversion stays.
// CHECK-LABEL: func.func @multi_use_load_keeps_conversion
// CHECK: %[[L:.*]] = tile.load %{{.*}} : <16x!tile.ptr<f32>, [[ROW:#tile.layout<regs = \[\[8\]\], lanes = \[\[0\], \[0\], \[1\], \[2\], \[4\]\], warps = \[\]>]]> -> <16xf32, [[ROW]]>
// CHECK-NOT: tile.load
// CHECK: %[[C:.*]] = tile.convert_layout %[[L]] : <16xf32, [[ROW]]> -> <16xf32, #tile.layout<regs = {{\[}}[1], [8]], lanes = {{\[}}[2], [4], [0], [0], [0]], warps = []>>
// CHECK: tile.store %{{.*}}, %[[L]]
// CHECK: return %[[C]]
func.func @multi_use_load_keeps_conversion(%p: !tile.ptr<f32>) -> !tile.tile<16xf32, #col> {
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #row>
  %2 = tile.addptr %1, %0 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xi32, #row>
  %3 = tile.load %2 : !tile.tile<16x!tile.ptr<f32>, #row> -> !tile.tile<16xf32, #row>
  %4 = tile.convert_layout %3 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
  tile.store %2, %3 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xf32, #row>
  return %4 : !tile.tile<16xf32, #col>
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>
#rep = #tile.layout<regs = [[1], [2], [4], [8]], lanes = [[0], [0], [0], [0], [0]], warps = []>

// convert(convert(x)) is one conversion from x; a round trip is x itself.
// CHECK-LABEL: func.func @convert_of_convert
// CHECK-SAME: (%[[X:[^:]*]]: !tile.tile
// CHECK: %[[C:.*]] = tile.convert_layout %[[X]] : <16xf32, #tile.layout<regs = {{\[}}[8]], {{.*}}>> -> <16xf32, #tile.layout<regs = {{\[}}[1], [2], [4], [8]], lanes = {{\[}}[0], [0], [0], [0], [0]], warps = []>>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[C]], %[[X]]
func.func @convert_of_convert(%x: !tile.tile<16xf32, #row>) -> (!tile.tile<16xf32, #rep>, !tile.tile<16xf32, #row>) {
  %0 = tile.convert_layout %x : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
  %1 = tile.convert_layout %0 : !tile.tile<16xf32, #col> -> !tile.tile<16xf32, #rep>
  %2 = tile.convert_layout %0 : !tile.tile<16xf32, #col> -> !tile.tile<16xf32, #row>
  return %1, %2 : !tile.tile<16xf32, #rep>, !tile.tile<16xf32, #row>
}

// -----

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#tr = #tile.layout<regs = [[1, 0], [0, 8], [8, 0]], lanes = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = []>
#col1 = #tile.layout<regs = [[8, 0]], lanes = [[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>

// Through broadcast and expand_dims: the operands take the layouts that make
// them register copies of the wanted result (the broadcast source drops the
// column bases, expand_dims takes the slice).
// CHECK-LABEL: func.func @remat_through_broadcast
// CHECK-NOT: tile.convert_layout
// CHECK: %[[I:.*]] = tile.iota : <16xi32, [[V:#tile.layout<regs = \[\[1\], \[8\]\], lanes = \[\[2\], \[4\], \[0\], \[0\], \[0\]\], warps = \[\]>]]>
// CHECK: %[[E:.*]] = tile.expand_dims %[[I]] {axis = 1 : i32} : <16xi32, [[V]]> -> <16x1xi32, [[V2:#tile.layout<regs = \[\[1, 0\], \[8, 0\]\], lanes = \[\[2, 0\], \[4, 0\], \[0, 0\], \[0, 0\], \[0, 0\]\], warps = \[\]>]]>
// CHECK: %[[B:.*]] = tile.broadcast %[[E]] : <16x1xi32, [[V2]]> -> <16x16xi32, #tile.layout<regs = {{\[}}[1, 0], [0, 8], [8, 0]], lanes = {{\[}}[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = []>>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[B]]
func.func @remat_through_broadcast() -> !tile.tile<16x16xi32, #tr> {
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.expand_dims %0 {axis = 1 : i32} : !tile.tile<16xi32, #row> -> !tile.tile<16x1xi32, #col1>
  %2 = tile.broadcast %1 : !tile.tile<16x1xi32, #col1> -> !tile.tile<16x16xi32, #acc>
  %3 = tile.convert_layout %2 : !tile.tile<16x16xi32, #acc> -> !tile.tile<16x16xi32, #tr>
  return %3 : !tile.tile<16x16xi32, #tr>
}

// -----

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A reduction is not recomputed: its conversion stays, and so does the
// conversion of an elementwise op that depends on it (only the conversion
// moves above the elementwise op).
// CHECK-LABEL: func.func @reduce_result_keeps_conversion
// CHECK: %[[R:.*]] = tile.reduce max %{{.*}} {axis = 1 : i32} : <16x16xf32, {{.*}}> -> <16xf32, [[ROW:#tile.layout<regs = \[\[8\]\][^>]*>]]>
// CHECK: %[[C:.*]] = tile.convert_layout %[[R]] : <16xf32, [[ROW]]> -> <16xf32, [[COL:#tile.layout<regs = \[\[1\], \[8\]\][^>]*>]]>
// CHECK: %[[E:.*]] = tile.exp2 %[[C]] : <16xf32, [[COL]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[E]]
func.func @reduce_result_keeps_conversion(%s: !tile.tile<16x16xf32, #acc>) -> !tile.tile<16xf32, #col> {
  %0 = tile.reduce max %s {axis = 1 : i32} : !tile.tile<16x16xf32, #acc> -> !tile.tile<16xf32, #row>
  %1 = tile.exp2 %0 : !tile.tile<16xf32, #row>
  %2 = tile.convert_layout %1 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
  return %2 : !tile.tile<16xf32, #col>
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A conversion inside a loop of a load made before it: the load is reissued
// in the wanted layout where it was, not in the loop body.
// CHECK-LABEL: func.func @remat_stays_before_loop
// CHECK: tile.load {{.*}} -> <16xf32, #tile.layout<regs = {{\[}}[1], [8]]
// CHECK: scf.for
// CHECK-NOT: tile.load
// CHECK-NOT: tile.convert_layout
// CHECK: scf.yield
func.func @remat_stays_before_loop(%p: !tile.ptr<f32>, %n: i32, %init: !tile.tile<16xf32, #col>) -> !tile.tile<16xf32, #col> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #row>
  %2 = tile.addptr %1, %0 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xi32, #row>
  %3 = tile.load %2 : !tile.tile<16x!tile.ptr<f32>, #row> -> !tile.tile<16xf32, #row>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!tile.tile<16xf32, #col>) : i32 {
    %4 = tile.convert_layout %3 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
    %5 = tile.add %acc, %4 : !tile.tile<16xf32, #col>
    scf.yield %5 : !tile.tile<16xf32, #col>
  }
  return %r : !tile.tile<16xf32, #col>
}

// -----

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A load read in one other layout by two loops (as after
// tile-split-masked-loops): loaded once, in that layout, before the loops.
// CHECK-LABEL: func.func @shared_load_one_layout
// CHECK: %[[L:.*]] = tile.load {{.*}} -> <16xf32, #tile.layout<regs = {{\[}}[1], [8]]
// CHECK-NOT: tile.load
// CHECK-NOT: tile.convert_layout
// CHECK: scf.for {{.*}} iter_args
// CHECK: tile.add %{{.*}}, %[[L]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: tile.add %{{.*}}, %[[L]]
func.func @shared_load_one_layout(%p: !tile.ptr<f32>, %n: i32, %init: !tile.tile<16xf32, #col>) -> !tile.tile<16xf32, #col> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #row>
  %2 = tile.addptr %1, %0 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xi32, #row>
  %3 = tile.load %2 : !tile.tile<16x!tile.ptr<f32>, #row> -> !tile.tile<16xf32, #row>
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!tile.tile<16xf32, #col>) : i32 {
    %4 = tile.convert_layout %3 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
    %5 = tile.add %acc, %4 : !tile.tile<16xf32, #col>
    scf.yield %5 : !tile.tile<16xf32, #col>
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (!tile.tile<16xf32, #col>) : i32 {
    %4 = tile.convert_layout %3 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
    %5 = tile.add %acc, %4 : !tile.tile<16xf32, #col>
    scf.yield %5 : !tile.tile<16xf32, #col>
  }
  return %b : !tile.tile<16xf32, #col>
}

// -----

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>

// A conversion that must move data, of a value made before the loop, is
// done once before the loop rather than every iteration.
// CHECK-LABEL: func.func @invariant_conversion_hoisted
// CHECK: %[[R:.*]] = tile.reduce max
// CHECK: %[[C:.*]] = tile.convert_layout %[[R]]
// CHECK: scf.for
// CHECK-NOT: tile.convert_layout
// CHECK: tile.add %{{.*}}, %[[C]]
func.func @invariant_conversion_hoisted(%s: !tile.tile<16x16xf32, #acc>, %n: i32, %init: !tile.tile<16xf32, #col>) -> !tile.tile<16xf32, #col> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %0 = tile.reduce max %s {axis = 1 : i32} : !tile.tile<16x16xf32, #acc> -> !tile.tile<16xf32, #row>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (!tile.tile<16xf32, #col>) : i32 {
    %1 = tile.convert_layout %0 : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
    %2 = tile.add %acc, %1 : !tile.tile<16xf32, #col>
    scf.yield %2 : !tile.tile<16xf32, #col>
  }
  return %r : !tile.tile<16xf32, #col>
}

// -----

#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#wide = #tile.layout<regs = [[0, 1], [0, 2], [0, 4]], lanes = [[0, 8], [8, 0], [1, 0], [2, 0], [4, 0]], warps = []>

// A conversion of a narrowing cast's only result stays after the cast when
// the cast's operand is costly (here a function argument): bf16 moves, not
// f32. A cast of cheap data is still recomputed in the wanted layout.
// CHECK-LABEL: func.func @narrow_after_cast
// CHECK: %[[F:.*]] = tile.full 2.000000e+00 : f32 : <16x16xf32, [[WIDE:#tile.layout<regs = \[\[0, 1\], \[0, 2\], \[0, 4\]\][^>]*>]]>
// CHECK: %[[N:.*]] = tile.cast %arg0 : <16x16xf32, [[ACC:#tile.layout<[^>]*>]]> -> <16x16xbf16, [[ACC]]>
// CHECK: %[[W:.*]] = tile.convert_layout %[[N]] : <16x16xbf16, [[ACC]]> -> <16x16xbf16, [[WIDE]]>
// CHECK: %[[M:.*]] = tile.cast %[[F]] : <16x16xf32, [[WIDE]]> -> <16x16xbf16, [[WIDE]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return %[[W]], %[[M]]
func.func @narrow_after_cast(%x: !tile.tile<16x16xf32, #acc>) -> (!tile.tile<16x16xbf16, #wide>, !tile.tile<16x16xbf16, #wide>) {
  %0 = tile.cast %x : !tile.tile<16x16xf32, #acc> -> !tile.tile<16x16xbf16, #acc>
  %1 = tile.convert_layout %0 : !tile.tile<16x16xbf16, #acc> -> !tile.tile<16x16xbf16, #wide>
  %f = tile.full 2.0 : f32 : !tile.tile<16x16xf32, #acc>
  %2 = tile.cast %f : !tile.tile<16x16xf32, #acc> -> !tile.tile<16x16xbf16, #acc>
  %3 = tile.convert_layout %2 : !tile.tile<16x16xbf16, #acc> -> !tile.tile<16x16xbf16, #wide>
  return %1, %3 : !tile.tile<16x16xbf16, #wide>, !tile.tile<16x16xbf16, #wide>
}

// -----

// A reduction of an elementwise tree over loads converted out of their
// 16-byte layout (#vec: 8 bf16 per thread along a row) into the
// accumulator layout (#acc: 2 per thread): the loads keep #vec, the casts,
// the product and the reduction run in #vec, and only the reduced 16
// values convert (#vrow -> #arow). A tree whose value has another user
// outside it (@reduce_tree_shared below) is left to SinkConversion, which
// issues the loads in #acc.
#vec = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [4, 0], [8, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = []>
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#arow = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
// CHECK-LABEL: func.func @reduce_in_load_layout
// CHECK: %[[A:.*]] = tile.load %{{.*}} : <16x64x!tile.ptr<bf16>, [[VEC:#tile.layout<regs = \[\[0, 1\], \[0, 2\], \[0, 4\], \[4, 0\], \[8, 0\]\][^>]*>]]>
// CHECK: %[[FA:.*]] = tile.cast %[[A]] : <16x64xbf16, [[VEC]]> -> <16x64xf32, [[VEC]]>
// CHECK: %[[B:.*]] = tile.load %{{.*}} : <16x64x!tile.ptr<bf16>, [[VEC]]>
// CHECK: %[[FB:.*]] = tile.cast %[[B]] : <16x64xbf16, [[VEC]]> -> <16x64xf32, [[VEC]]>
// CHECK: %[[P:.*]] = tile.mul %[[FA]], %[[FB]] : <16x64xf32, [[VEC]]>
// CHECK: %[[R:.*]] = tile.reduce sum %[[P]] {axis = 1 : i32} : <16x64xf32, [[VEC]]> -> <16xf32, [[VROW:#tile.layout<regs = \[\[4\], \[8\]\][^>]*>]]>
// CHECK: %[[C:.*]] = tile.convert_layout %[[R]] : <16xf32, [[VROW]]> -> <16xf32, [[AROW:#tile.layout<regs = \[\[8\]\][^>]*>]]>
// CHECK: return %[[C]] : !tile.tile<16xf32, [[AROW]]>
func.func @reduce_in_load_layout(%pa: !tile.tile<16x64x!tile.ptr<bf16>, #vec>, %pb: !tile.tile<16x64x!tile.ptr<bf16>, #vec>) -> !tile.tile<16xf32, #arow> {
  %a = tile.load %pa : <16x64x!tile.ptr<bf16>, #vec> -> <16x64xbf16, #vec>
  %ca = tile.convert_layout %a : <16x64xbf16, #vec> -> <16x64xbf16, #acc>
  %fa = tile.cast %ca : <16x64xbf16, #acc> -> <16x64xf32, #acc>
  %b = tile.load %pb : <16x64x!tile.ptr<bf16>, #vec> -> <16x64xbf16, #vec>
  %cb = tile.convert_layout %b : <16x64xbf16, #vec> -> <16x64xbf16, #acc>
  %fb = tile.cast %cb : <16x64xbf16, #acc> -> <16x64xf32, #acc>
  %p = tile.mul %fa, %fb : <16x64xf32, #acc>
  %r = tile.reduce sum %p {axis = 1 : i32} : <16x64xf32, #acc> -> <16xf32, #arow>
  return %r : !tile.tile<16xf32, #arow>
}

// -----

#vec = #tile.layout<regs = [[0, 1], [0, 2], [0, 4], [4, 0], [8, 0]], lanes = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warps = []>
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#arow = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
// CHECK-LABEL: func.func @reduce_tree_shared
// CHECK: tile.load %{{.*}} : <16x64x!tile.ptr<bf16>, [[ACC:#tile.layout<regs = \[\[0, 1\], \[8, 0\][^>]*>]]> -> <16x64xbf16, [[ACC]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.reduce sum %{{.*}} {axis = 1 : i32} : <16x64xf32, [[ACC]]>
func.func @reduce_tree_shared(%pa: !tile.tile<16x64x!tile.ptr<bf16>, #vec>) -> (!tile.tile<16xf32, #arow>, !tile.tile<16x64xf32, #acc>) {
  %a = tile.load %pa : <16x64x!tile.ptr<bf16>, #vec> -> <16x64xbf16, #vec>
  %ca = tile.convert_layout %a : <16x64xbf16, #vec> -> <16x64xbf16, #acc>
  %fa = tile.cast %ca : <16x64xbf16, #acc> -> <16x64xf32, #acc>
  %r = tile.reduce sum %fa {axis = 1 : i32} : <16x64xf32, #acc> -> <16xf32, #arow>
  return %r, %fa : !tile.tile<16xf32, #arow>, !tile.tile<16x64xf32, #acc>
}
