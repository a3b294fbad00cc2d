//===- Resources.h - refuse kernels the target cannot run ---------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinOps.h"

namespace tile {
/// After lowering to the GPU dialect: each kernel's shared memory per
/// program and threads per CTA against the target's limits (TargetInfo.h).
/// A kernel over a limit gets an error at its location naming its
/// compile-time values, schedule, the need and the budget: the compile
/// stops before LLVM and ptxas spend time on it.
mlir::LogicalResult checkResources(mlir::ModuleOp module,
                                   llvm::StringRef arch);
} // namespace tile
