// RUN: tile-opt %s -split-input-file -verify-diagnostics -convert-tile-to-gpu | FileCheck %s
// RUN: tile-opt %s -split-input-file -verify-diagnostics -convert-tile-to-gpu | FileCheck %s --check-prefix=GONE
// RUN: tile-opt %s -split-input-file -verify-diagnostics -convert-tile-to-gpu | FileCheck %s --check-prefix=MMA

// convert-tile-to-gpu moves each tile kernel into gpu.module @tile_kernels as
// a gpu.func kernel run by 32 * num_warps threads (its schedule); a laid-out tile
// becomes the vector of the elements one thread holds, pointers i64.

// No tile op or type, no func.func and no conversion cast is left anywhere.
// GONE-NOT: {{= tile\.|!tile\.|^ *tile\.|func\.func|unrealized_conversion_cast}}

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = [[16]]>

// CHECK: module attributes {gpu.container_module}
// CHECK-NOT: func.func
// CHECK: gpu.module @tile_kernels {
// CHECK: gpu.func @store_iota(%[[P:.*]]: i64, %[[N:.*]]: i32) kernel attributes {known_block_size = array<i32: 64, 1, 1>, tile.params = {BM = 32 : i64}, tile.schedule = #tile.schedule<num_warps = 2>, tile.shared_memory = 0 : i64} {
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[TID32:.*]] = arith.index_castui %[[TID]] : index to i32
// CHECK: arith.andi %[[TID32]], %{{.*}} : i32
// CHECK: arith.shrui %[[TID32]], %{{.*}} : i32
// Each thread holds 2 of the 32 elements: two predicated 32-bit stores.
// CHECK-COUNT-2: llvm.inline_asm has_side_effects {{.*}}@p st.global.b32 [$0], $1;{{.*}}"l,r,r"
// CHECK-NOT: st.global
// CHECK: gpu.return
func.func @store_iota(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 2>, tile.params = {BM = 32 : i64}} {
  %0 = tile.iota : !tile.tile<32xi32, #row>
  %1 = tile.splat %p : !tile.tile<32x!tile.ptr<i32>, #row>
  %2 = tile.addptr %1, %0 : !tile.tile<32x!tile.ptr<i32>, #row>, !tile.tile<32xi32, #row>
  %3 = tile.splat %n : !tile.tile<32xi32, #row>
  %4 = tile.cmp lt %0, %3 : !tile.tile<32xi32, #row> -> !tile.tile<32xi1, #row>
  tile.store %2, %0, %4 : !tile.tile<32x!tile.ptr<i32>, #row>, !tile.tile<32xi32, #row>, !tile.tile<32xi1, #row>
  return
}

// -----

// A masked load: one predicated ld.global per element, `other` as the value
// where the mask is off; bf16 goes through 16-bit registers.
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
// CHECK-LABEL: gpu.func @masked_load
// CHECK-COUNT-2: llvm.inline_asm asm_dialect = att "{\0A .reg .pred p;\0A setp.ne.b32 p, $2, 0;\0A mov.b16 $0, $3;\0A @p ld.global.b16 $0, [$1];\0A}", "=h,l,r,h" {{.*}} : (i64, i32, i16) -> i16
// CHECK-NOT: ld.global
// CHECK: gpu.return
func.func @masked_load(%p: !tile.ptr<bf16>, %q: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %0 = tile.iota : !tile.tile<16xi32, #row>
  %1 = tile.splat %p : !tile.tile<16x!tile.ptr<bf16>, #row>
  %2 = tile.addptr %1, %0 : !tile.tile<16x!tile.ptr<bf16>, #row>, !tile.tile<16xi32, #row>
  %3 = tile.splat %n : !tile.tile<16xi32, #row>
  %4 = tile.cmp lt %0, %3 : !tile.tile<16xi32, #row> -> !tile.tile<16xi1, #row>
  %z = tile.full 0.0 : bf16 : !tile.tile<16xbf16, #row>
  %5 = tile.load %2, %4, %z : !tile.tile<16x!tile.ptr<bf16>, #row>, !tile.tile<16xi1, #row>, !tile.tile<16xbf16, #row> -> !tile.tile<16xbf16, #row>
  %6 = tile.splat %q : !tile.tile<16x!tile.ptr<bf16>, #row>
  tile.store %6, %5 : !tile.tile<16x!tile.ptr<bf16>, #row>, !tile.tile<16xbf16, #row>
  return
}

// -----

// bf16 dot, M=16 N=16 K=32 on one warp: 2 fragments of 16x8 times 2 k-steps
// of 16 = 4 mma.sync m16n8k16 (row.col, bf16 pairs packed in i32); a
// fragment's second k-step accumulates onto its first one's result. A is
// used from registers; B is staged in shared memory (its registers run
// along K, so K-major: [N=16][K=32 + 8 padding] bf16 = 1280 bytes) and read
// with ldmatrix.
#opa = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#opb = #tile.layout<regs = [[1, 0], [8, 0], [0, 8], [16, 0]], lanes = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = []>
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
// CHECK-LABEL: gpu.func @mma_bf16
// CHECK-SAME: tile.shared_memory = 1280 : i64
// CHECK: %[[BUF:.*]] = memref.view {{.*}} to memref<640xbf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK: llvm.inline_asm {{.*}}"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {$0, $1}, [$2];", "=r,=r,r"
// CHECK: %[[M0:.*]] = nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[C0:.*]] = llvm.extractvalue %[[M0]][0]
// CHECK: %[[C1:.*]] = llvm.extractvalue %[[M0]][1]
// CHECK: %[[C2:.*]] = llvm.extractvalue %[[M0]][2]
// CHECK: %[[C3:.*]] = llvm.extractvalue %[[M0]][3]
// CHECK: nvvm.mma.sync {{.*}} C[%[[C0]], %[[C1]], %[[C2]], %[[C3]]] {{.*}}<bf16>{{.*}}<m = 16, n = 8, k = 16>
// CHECK-NOT: llvm.intr.fma
// CHECK: gpu.return
// MMA-LABEL: gpu.func @mma_bf16
// MMA-COUNT-4: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// MMA-NOT: nvvm.mma.sync
func.func @mma_bf16(%a: !tile.ptr<bf16>, %o: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %pa = tile.splat %a : !tile.tile<16x32x!tile.ptr<bf16>, #opa>
  %x = tile.load %pa : !tile.tile<16x32x!tile.ptr<bf16>, #opa> -> !tile.tile<16x32xbf16, #opa>
  %pb = tile.splat %a : !tile.tile<32x16x!tile.ptr<bf16>, #opb>
  %y = tile.load %pb : !tile.tile<32x16x!tile.ptr<bf16>, #opb> -> !tile.tile<32x16xbf16, #opb>
  %c = tile.full 0.0 : f32 : !tile.tile<16x16xf32, #acc>
  %d = tile.dot %x, %y, %c : !tile.tile<16x32xbf16, #opa>, !tile.tile<32x16xbf16, #opb>, !tile.tile<16x16xf32, #acc>
  %po = tile.splat %o : !tile.tile<16x16x!tile.ptr<f32>, #acc>
  tile.store %po, %d : !tile.tile<16x16x!tile.ptr<f32>, #acc>, !tile.tile<16x16xf32, #acc>
  return
}

// -----

// f16 operands: the same instruction shape with f16 multiplicands, packed as
// vector<2xf16> (the PTX types are implied by the operand types).
#opa = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#opb = #tile.layout<regs = [[1, 0], [8, 0]], lanes = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = []>
#acc = #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
// CHECK-LABEL: gpu.func @mma_f16
// CHECK: nvvm.mma.sync {{.*}}layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// MMA-LABEL: gpu.func @mma_f16
// MMA-COUNT-1: nvvm.mma.sync
// MMA-NOT: nvvm.mma.sync
func.func @mma_f16(%x: !tile.ptr<f16>, %o: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 1.0 : f16 : !tile.tile<16x16xf16, #opa>
  %b = tile.full 1.0 : f16 : !tile.tile<16x8xf16, #opb>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32, #acc>
  %d = tile.dot %a, %b, %c : !tile.tile<16x16xf16, #opa>, !tile.tile<16x8xf16, #opb>, !tile.tile<16x8xf32, #acc>
  %po = tile.splat %o : !tile.tile<16x8x!tile.ptr<f32>, #acc>
  tile.store %po, %d : !tile.tile<16x8x!tile.ptr<f32>, #acc>, !tile.tile<16x8xf32, #acc>
  return
}

// -----

// IEEE fp32 dot, M=16 N=8 K=8 on one warp: A and B are staged in shared
// memory (16x8 + 8x8 f32 = 768 bytes) and a k-loop of 8 iterations does one
// FMA per accumulator element the thread holds (4): no tensor core.
#acc = #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#b8 = #tile.layout<regs = [[0, 1]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
// CHECK-LABEL: gpu.func @fma_f32
// CHECK-SAME: tile.shared_memory = 768 : i64
// CHECK: %[[BUF:.*]] = memref.view {{.*}} to memref<192xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8_i32{{[_0-9]*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>) : i32 {
// CHECK: memref.load %[[BUF]]
// CHECK-COUNT-4: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield %{{.*}} : vector<4xf32>
// CHECK-NOT: llvm.intr.fma
// CHECK: gpu.return
// MMA-LABEL: gpu.func @fma_f32
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
func.func @fma_f32(%o: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %a = tile.full 1.0 : f32 : !tile.tile<16x8xf32, #acc>
  %b = tile.full 2.0 : f32 : !tile.tile<8x8xf32, #b8>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32, #acc>
  %d = tile.dot %a, %b, %c : !tile.tile<16x8xf32, #acc>, !tile.tile<8x8xf32, #b8>, !tile.tile<16x8xf32, #acc>
  %po = tile.splat %o : !tile.tile<16x8x!tile.ptr<f32>, #acc>
  tile.store %po, %d : !tile.tile<16x8x!tile.ptr<f32>, #acc>, !tile.tile<16x8xf32, #acc>
  return
}

// -----

// Row reduction on one warp: registers first, then butterfly shuffles over
// the two lane bits that walk the columns (xor 1, xor 2), for each of the 2
// row registers. No shared memory. A thread's 4 values of a row combine as
// a tree, max(max(v0, v1), max(v2, v3)), not a chain.
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
// CHECK-LABEL: gpu.func @reduce_rows
// CHECK-SAME: tile.shared_memory = 0 : i64
// CHECK: %[[A:[0-9a-z_]+]] = arith.maximumf
// CHECK-NEXT: %[[B:[0-9a-z_]+]] = arith.maximumf
// CHECK-NEXT: arith.maximumf %[[A]], %[[B]]
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[W:.*]] = arith.constant 32 : i32
// CHECK: gpu.shuffle xor %{{.*}}, %[[ONE]], %[[W]] : f32
// CHECK: gpu.shuffle xor %{{.*}}, %[[ONE]], %[[W]] : f32
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: gpu.shuffle xor %{{.*}}, %[[TWO]], %{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.*}}, %[[TWO]], %{{.*}} : f32
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @reduce_rows(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %s = tile.full 1.0 : f32 : !tile.tile<16x16xf32, #acc>
  %0 = tile.reduce max %s {axis = 1 : i32} : !tile.tile<16x16xf32, #acc> -> !tile.tile<16xf32, #row>
  %ps = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #row>
  tile.store %ps, %0 : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xf32, #row>
  return
}

// -----

// Column reduction over 2 warps: shuffles over the row lanes (xor 4, 8, 16),
// then the two warps' partials meet in shared memory (2 x 16 f32 = 128 B).
#acc = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0]]>
#colv = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = [[0]]>
// CHECK-LABEL: gpu.func @reduce_across_warps
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-SAME: tile.shared_memory = 128 : i64
// CHECK-COUNT-4: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK-COUNT-4: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK-COUNT-4: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[BUF:.*]] = memref.view {{.*}} to memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[BUF]]
// CHECK: gpu.return
func.func @reduce_across_warps(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 2>} {
  %s = tile.full 1.0 : f32 : !tile.tile<32x16xf32, #acc>
  %0 = tile.reduce sum %s {axis = 0 : i32} : !tile.tile<32x16xf32, #acc> -> !tile.tile<16xf32, #colv>
  %ps = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #colv>
  tile.store %ps, %0 : !tile.tile<16x!tile.ptr<f32>, #colv>, !tile.tile<16xf32, #colv>
  return
}

// -----

// A conversion that moves elements to other lanes goes through shared
// memory between two barriers (16 f32 = 64 B), each side's consecutive
// registers as one access (#col: two pairs, 8-byte vector loads); one that
// only permutes the registers of each thread is a vector.shuffle.
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
#col = #tile.layout<regs = [[1], [8]], lanes = [[2], [4], [0], [0], [0]], warps = []>
#col2 = #tile.layout<regs = [[8], [1]], lanes = [[2], [4], [0], [0], [0]], warps = []>
// CHECK-LABEL: gpu.func @convert_layouts
// CHECK-SAME: tile.shared_memory = 64 : i64
// CHECK: gpu.dynamic_shared_memory
// CHECK: %[[BUF:.*]] = memref.view {{.*}} to memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-2: memref.store %{{.*}}, %[[BUF]][%{{.*}}] : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: %[[P0:.*]] = vector.load %[[BUF]][%{{.*}}] {alignment = 8 : i64} : memref<16xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: %[[L0:.*]] = vector.extract %[[P0]][0]
// CHECK-NEXT: %[[L1:.*]] = vector.extract %[[P0]][1]
// CHECK: %[[P1:.*]] = vector.load %[[BUF]][%{{.*}}] {alignment = 8 : i64}
// CHECK-NEXT: %[[L2:.*]] = vector.extract %[[P1]][0]
// CHECK-NEXT: %[[L3:.*]] = vector.extract %[[P1]][1]
// CHECK-NEXT: %[[V:.*]] = vector.from_elements %[[L0]], %[[L1]], %[[L2]], %[[L3]] : vector<4xf32>
// CHECK-NEXT: vector.shuffle %[[V]], %[[V]] [0, 2, 1, 3] : vector<4xf32>, vector<4xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @convert_layouts(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %x = tile.full 1.0 : f32 : !tile.tile<16xf32, #row>
  %y = tile.convert_layout %x : !tile.tile<16xf32, #row> -> !tile.tile<16xf32, #col>
  %z = tile.convert_layout %y : !tile.tile<16xf32, #col> -> !tile.tile<16xf32, #col2>
  %ps = tile.splat %p : !tile.tile<16x!tile.ptr<f32>, #col2>
  tile.store %ps, %z : !tile.tile<16x!tile.ptr<f32>, #col2>, !tile.tile<16xf32, #col2>
  return
}

// -----

// A transposing conversion: the source holds 8 consecutive elements down a
// column, the destination pairs along a row. The buffer is column-major
// (one 16-byte store and 8 loads, not 8 stores and 4 loads).
#down = #tile.layout<regs = [[1, 0], [2, 0], [4, 0]], lanes = [[8, 0], [0, 1], [0, 2], [0, 4], [0, 8]], warps = []>
#frag = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
// CHECK-LABEL: gpu.func @convert_transposing
// CHECK: %[[BUF:.*]] = memref.view {{.*}} to memref<256xbf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[BUF]][%{{.*}}] {alignment = 16 : i64} : memref<256xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: memref.load %[[BUF]]
// CHECK-NOT: vector.load
// CHECK: gpu.return
func.func @convert_transposing(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %x = tile.full 1.0 : bf16 : !tile.tile<16x16xbf16, #down>
  %y = tile.convert_layout %x : !tile.tile<16x16xbf16, #down> -> !tile.tile<16x16xbf16, #frag>
  %ps = tile.splat %p : !tile.tile<16x16x!tile.ptr<bf16>, #frag>
  tile.store %ps, %y : !tile.tile<16x16x!tile.ptr<bf16>, #frag>, !tile.tile<16x16xbf16, #frag>
  return
}

// -----

// Rows of 64 bytes or more are padded by 16 bytes (16 x 32 bf16 across two
// warps: rows 40 elements apart, 1280 bytes): the destination's pairs of 8
// rows fall in different banks; each side still moves whole vectors.
#rows = #tile.layout<regs = [[0, 1], [0, 2], [0, 4]], lanes = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warps = [[8, 0]]>
#pairs = #tile.layout<regs = [[0, 1], [0, 8], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[0, 16]]>
// CHECK-LABEL: gpu.func @convert_padded
// CHECK-SAME: tile.shared_memory = 1280 : i64
// CHECK: %[[BUF:.*]] = memref.view {{.*}} to memref<640xbf16, #gpu.address_space<workgroup>>
// CHECK: arith.constant 40 : i32
// CHECK: vector.store %{{.*}}, %[[BUF]][%{{.*}}] {alignment = 16 : i64} : memref<640xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: vector.load %[[BUF]][%{{.*}}] {alignment = 4 : i64} : memref<640xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: gpu.return
func.func @convert_padded(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 2>} {
  %x = tile.full 1.0 : bf16 : !tile.tile<16x32xbf16, #rows>
  %y = tile.convert_layout %x : !tile.tile<16x32xbf16, #rows> -> !tile.tile<16x32xbf16, #pairs>
  %ps = tile.splat %p : !tile.tile<16x32x!tile.ptr<bf16>, #pairs>
  tile.store %ps, %y : !tile.tile<16x32x!tile.ptr<bf16>, #pairs>, !tile.tile<16x32xbf16, #pairs>
  return
}

// -----

// A conversion that trades register bases for lane bases inside the warp
// (here the m16n8 accumulator to 8 consecutive bf16 per thread, as wide
// stores want) exchanges 32-bit words (two bf16 each) with gpu.shuffle xor:
// one round per traded pair (lane bits 0 and 1: offsets 1 and 2), in each
// the thread keeps one word of a pair and takes the other from its partner;
// then the registers are permuted. No shared memory, no barrier.
#acc16 = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#wide = #tile.layout<regs = [[0, 1], [0, 2], [0, 4]], lanes = [[0, 8], [8, 0], [1, 0], [2, 0], [4, 0]], warps = []>
// CHECK-LABEL: gpu.func @convert_across_lanes
// CHECK-SAME: tile.shared_memory = 0 : i64
// CHECK: vector.bitcast %{{.*}} : vector<8xbf16> to vector<4xi32>
// CHECK: %[[HI:.*]] = arith.cmpi ne
// CHECK: %[[SEND:.*]] = arith.select %[[HI]], %[[W0:.*]], %[[W2:.*]] : i32
// CHECK: %[[R:.*]], %{{.*}} = gpu.shuffle  xor %[[SEND]], %c1_i32{{.*}}, %c32_i32 : i32
// CHECK: arith.select %[[HI]], %[[R]], %[[W0]] : i32
// CHECK: arith.select %[[HI]], %[[W2]], %[[R]] : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK-NOT: gpu.shuffle
// CHECK: vector.bitcast %{{.*}} : vector<4xi32> to vector<8xbf16>
// CHECK: vector.shuffle %{{.*}} [0, 1, 4, 5, 2, 3, 6, 7] : vector<8xbf16>, vector<8xbf16>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @convert_across_lanes(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %x = tile.full 1.0 : bf16 : !tile.tile<16x16xbf16, #acc16>
  %y = tile.convert_layout %x : !tile.tile<16x16xbf16, #acc16> -> !tile.tile<16x16xbf16, #wide>
  %ps = tile.splat %p : !tile.tile<16x16x!tile.ptr<bf16>, #wide>
  tile.store %ps, %y : !tile.tile<16x16x!tile.ptr<bf16>, #wide>, !tile.tile<16x16xbf16, #wide>
  return
}

// -----

func.func @no_layout(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  // expected-error @below {{tile value without a layout: run tile-assign-layouts before convert-tile-to-gpu}}
  %x = tile.full 1.0 : f32 : !tile.tile<16xf32>
  return
}
