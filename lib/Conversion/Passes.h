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
/// Integer attribute on a gpu.func: global scratch bytes per program; when
/// present and > 0 the kernel has one more, trailing, i64 parameter: the
/// scratch buffer (program p owns bytes [p * n, (p + 1) * n)).
inline constexpr llvm::StringLiteral kScratchBytesAttr = "tile.scratch_bytes";
} // namespace mlir::tile
