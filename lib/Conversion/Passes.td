//===- Passes.td - tile conversion passes -----------------*- tablegen -*-===//
#ifndef TILE_CONVERSION_PASSES
#define TILE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileToGPU : Pass<"convert-tile-to-gpu", "mlir::ModuleOp"> {
  let summary = "Lower laid-out tile kernels to per-thread GPU code";
  let description = [{
    Pipeline stage 6. Each `tile.kernel` function becomes a `gpu.func` kernel
    in a `gpu.module`, run by `32 * num_warps` threads (the kernel's schedule). A tile with a
    `#tile.layout` becomes the vector of the elements one thread holds.
    Elementwise ops become `arith`/`vector` ops on those vectors, `dot`
    becomes `nvvm.mma.sync` m16n8k16 (f16/bf16, f32 accumulation) or FMA
    chains (IEEE fp32), row reductions use `gpu.shuffle`, layout conversions
    between threads go through shared memory, global loads and stores are
    predicated PTX. The dynamic shared memory a kernel needs is recorded as
    `tile.shared_memory` on the `gpu.func`.

    The target comes from `arch`, else from the module's `tile.arch`
    attribute (set by `tilec -arch`), else sm_80. On sm_90a, f16/bf16 `dot`s
    whose layouts fit a warpgroup become `wgmma.mma_async` with B in
    128-byte-swizzled shared memory.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">
  ];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect",
    "mlir::LLVM::LLVMDialect", "mlir::vector::VectorDialect",
    "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect",
    "mlir::scf::SCFDialect"
  ];
}

def TileTensorMapParams : Pass<"tile-tensor-map-params", "mlir::ModuleOp"> {
  let summary = "Make the TMA tensor-map parameters by-value grid constants";
  let description = [{
    Pipeline stage 6b, after convert-gpu-to-nvvm (which drops argument
    attributes it does not know). The trailing parameters that
    `tile.tensor_maps` on an `llvm.func` kernel counts become
    `!llvm.ptr {llvm.byval = !llvm.array<128 x i8>, llvm.align = 64,
    nvvm.grid_constant}`: in PTX a `.param .align 64 .b8 [128]` whose
    generic address (`cvta.param`) the bulk tensor copies use, as for a
    CUDA `const __grid_constant__ CUtensorMap` parameter.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect"];
}

def TileLoopAnnotations : Pass<"tile-loop-annotations", "mlir::ModuleOp"> {
  let summary = "Turn latch branches' llvm.loop_annotation into loop metadata";
  let description = [{
    Pipeline stage 6b, after convert-gpu-to-nvvm. An `scf.for` carrying
    `llvm.loop_annotation` (tile-persistent's loop over programs: LICM off,
    so that values invariant in it are not hoisted and kept in registers
    through the whole kernel) leaves it, after convert-scf-to-cf and
    cf-to-llvm, as a discardable attribute of its latch `llvm.br`; this pass
    makes it the branch's `loop_annotation`, which becomes `!llvm.loop`.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // TILE_CONVERSION_PASSES
