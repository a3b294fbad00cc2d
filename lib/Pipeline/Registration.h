//===- Registration.h - dialects, passes and pipelines of tilec ---*- C++ -*-===//
#pragma once

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace tile {
/// Every dialect, interface and translation the compiler uses.
void registerAllDialects(mlir::DialectRegistry &registry);
/// tile passes, the upstream passes the pipeline uses, and the named
/// pipelines `tile-optimize`, `tile-layout`, `tile-to-gpu`, `tile-to-nvvm`.
void registerAllPasses();

/// Stage 3: canonicalise, CSE, fold scale chains.
void buildTileOptPipeline(mlir::OpPassManager &pm);
/// Stage 4: layout assignment and conversion clean-up.
void buildLayoutPipeline(mlir::OpPassManager &pm);
/// Stage 6a: tile to gpu.func with per-thread code.
void buildGPUPipeline(mlir::OpPassManager &pm);
/// Stage 6b: gpu.module to the LLVM and NVVM dialects.
void buildNVVMPipeline(mlir::OpPassManager &pm);
} // namespace tile
