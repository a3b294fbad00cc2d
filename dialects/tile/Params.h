//===- Params.h - kernel facts: compile-time values, divisibility -*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace mlir::tile {
/// i64 attribute on an integer kernel argument: a power of two that
/// divides it, which the launcher guarantees (a `require(x % C == 0)`
/// the frontend found); AxisInfo reads it.
inline constexpr llvm::StringLiteral kDivisibilityAttr = "tile.divisibility";

/// i64 array attribute on an integer kernel argument x: numbers of integer
/// arguments y with x <= y (signed), which the launcher guarantees (a
/// `require(y >= x)` the frontend found); the TMA box matcher reads it to
/// prove a column bound within a row.
inline constexpr llvm::StringLiteral kAtMostAttr = "tile.at_most";

/// Unit attribute on a float kernel argument: it is positive (> 0, not
/// NaN), which the launcher guarantees (a `require(x > 0.0)` the frontend
/// found); tile-fold-scale reads it to move a multiply by x past a max.
inline constexpr llvm::StringLiteral kPositiveAttr = "tile.positive";

/// "BM = 64, CAUSAL = true, T = bf16, SCORE_MOD = alibi" from a kernel's
/// tile.params dictionary (kParamsAttr), for diagnostics; "" when absent.
std::string describeParams(DictionaryAttr params);
} // namespace mlir::tile
