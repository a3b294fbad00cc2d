//===- Params.h - a kernel's compile-time values as text -------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace mlir::tile {
/// "BM = 64, CAUSAL = true, T = bf16, SCORE_MOD = alibi" from a kernel's
/// tile.params dictionary (kParamsAttr), for diagnostics; "" when absent.
std::string describeParams(DictionaryAttr params);
} // namespace mlir::tile
