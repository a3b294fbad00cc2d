// RUN: tile-opt %s -split-input-file -tile-to-gpu -tile-to-nvvm | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-to-gpu -tile-to-nvvm | FileCheck %s --check-prefix=GONE

// tile-to-nvvm (after tile-to-gpu) leaves, inside gpu.module @tile_kernels,
// only LLVM and NVVM: each kernel is an llvm.func marked nvvm.kernel with
// its block size, loops are branches, shared memory is an addrspace(3)
// global, barriers and shuffles are NVVM intrinsics.

// Nothing of the tile, gpu (other than the module), scf, arith, vector or
// memref dialects, and no conversion cast, survives.
// GONE-NOT: {{= tile\.|^ *tile\.|!tile\.|gpu\.(func|return|barrier|thread_id|block_id|shuffle|dynamic_shared_memory)|scf\.|arith\.|vector\.|memref\.|unrealized_conversion_cast|func\.func}}

#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = [[16]]>
#col = #tile.layout<regs = [[1], [8], [16]], lanes = [[2], [4], [0], [0], [0]], warps = [[0]]>

// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @tile_kernels {
// CHECK: llvm.mlir.global internal @[[SHMEM:.*]]() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.func @loop_and_convert(%{{.*}}: i64, %[[N:.*]]: i32) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>, tile.grid_args = [], tile.schedule = #tile.schedule<num_warps = 2>, tile.shared_memory = 128 : i64}
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.br ^[[HEAD:.*]](
// CHECK: ^[[HEAD]](%[[IV:.*]]: i32, %{{.*}}: vector<2xf32>):
// CHECK: llvm.icmp "slt" %[[IV]], %[[N]] : i32
// CHECK: llvm.cond_br
// CHECK: llvm.inline_asm asm_dialect = att "ex2.approx.ftz.f32 $0, $1;", "=f,f"
// CHECK: llvm.mlir.addressof @[[SHMEM]] : !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.getelementptr {{.*}} : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: llvm.inline_asm has_side_effects {{.*}}st.global.b32
// CHECK: llvm.return
func.func @loop_and_convert(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 2>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = tile.full 1.0 : f32 : !tile.tile<32xf32, #row>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (!tile.tile<32xf32, #row>) : i32 {
    %e = tile.exp2 %a : !tile.tile<32xf32, #row>
    scf.yield %e : !tile.tile<32xf32, #row>
  }
  %y = tile.convert_layout %r : !tile.tile<32xf32, #row> -> !tile.tile<32xf32, #col>
  %ps = tile.splat %p : !tile.tile<32x!tile.ptr<f32>, #col>
  tile.store %ps, %y : !tile.tile<32x!tile.ptr<f32>, #col>, !tile.tile<32xf32, #col>
  return
}

// -----

// A bf16 dot and a row reduction: nvvm.mma.sync stays as an NVVM op (it is
// translated to the intrinsic later), gpu.shuffle xor becomes a butterfly
// shfl.sync over the full warp.
#opa = #tile.layout<regs = [[0, 1], [8, 0], [0, 8]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#opb = #tile.layout<regs = [[1, 0], [8, 0]], lanes = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = []>
#acc = #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>
// CHECK-LABEL: llvm.func @dot_reduce
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK: llvm.inline_asm {{.*}}ld.global.b16
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvvm.shfl.sync bfly
// CHECK: llvm.return
func.func @dot_reduce(%pa: !tile.ptr<bf16>, %pb: !tile.ptr<bf16>, %po: !tile.ptr<f32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 1>} {
  %i = tile.iota : !tile.tile<16xi32, #row>
  %sa = tile.splat %pa : !tile.tile<16x16x!tile.ptr<bf16>, #opa>
  %a = tile.load %sa : !tile.tile<16x16x!tile.ptr<bf16>, #opa> -> !tile.tile<16x16xbf16, #opa>
  %sb = tile.splat %pb : !tile.tile<16x8x!tile.ptr<bf16>, #opb>
  %b = tile.load %sb : !tile.tile<16x8x!tile.ptr<bf16>, #opb> -> !tile.tile<16x8xbf16, #opb>
  %c = tile.full 0.0 : f32 : !tile.tile<16x8xf32, #acc>
  %d = tile.dot %a, %b, %c : !tile.tile<16x16xbf16, #opa>, !tile.tile<16x8xbf16, #opb>, !tile.tile<16x8xf32, #acc>
  %m = tile.reduce max %d {axis = 1 : i32} : !tile.tile<16x8xf32, #acc> -> !tile.tile<16xf32, #row>
  %so = tile.splat %po : !tile.tile<16x!tile.ptr<f32>, #row>
  %o = tile.addptr %so, %i : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xi32, #row>
  tile.store %o, %m : !tile.tile<16x!tile.ptr<f32>, #row>, !tile.tile<16xf32, #row>
  return
}
