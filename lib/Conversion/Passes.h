//===- Passes.h - tile conversion passes ---------------------------*- C++ -*-===//
#pragma once

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tile {
#define GEN_PASS_DECL
#include "lib/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Conversion/Passes.h.inc"

/// Name of the gpu.module that holds the kernels.
inline constexpr llvm::StringLiteral kGpuModuleName = "tile_kernels";
/// Integer attribute on each gpu.func: dynamic shared memory bytes.
inline constexpr llvm::StringLiteral kSharedMemoryAttr = "tile.shared_memory";
/// Array attribute on a gpu.func (kept on its llvm.func) whose kernel ends
/// in one TMA tensor-map parameter per element: a 128-byte CUtensorMap the
/// launcher encodes on the host and passes by value. Each element is an
/// array<i64: arg, elemBytes, rowElems, rowStride, boxElems, boxRows>: the
/// pointer argument mapped as rows of rowElems elements rowStride apart,
/// and the box a copy reads (the manifest's `tensorMaps`).
inline constexpr llvm::StringLiteral kTensorMapsAttr = "tile.tensor_maps";
} // namespace mlir::tile
