//===- RequireFacts.h - what a checked require(...) tells the compiler -*- C++ -*-===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tile::frontend {
/// Records on `fn`'s arguments what the run-time condition `c` of a
/// require(...) (checked by the launcher) guarantees: divisibility
/// (`x % C == 0`), order (`y >= x`) and positivity (`x > 0.0`).
void recordRequireFacts(mlir::func::FuncOp fn, mlir::Value c);
} // namespace tile::frontend
