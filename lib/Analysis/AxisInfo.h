//===- AxisInfo.h - strides and alignment of index and pointer tiles -*- C++ -*-===//
//
// For integer and pointer tiles built from iota, splat, expand_dims,
// broadcast, add, mul by uniform values and addptr, the value at coordinates
// c is `base + sum_d stride[d] * c[d]` with a uniform `base`. The analysis
// finds the strides (when constant), a power of two dividing each stride
// (also a run-time one: `rows * row_stride`), a power-of-two divisibility
// of `base` (in
// elements for pointers; kernel pointer arguments are assumed 16-byte
// aligned, as Triton does) and, for every tile, along which dimensions its
// value does not change. Loads and stores use it to pick a coalesced layout
// and 16-byte vector accesses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/tile/TileDialect.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tile {

/// The byte alignment the compiler assumes for every pointer argument of a
/// kernel (16: a 16-byte vector load or TMA box may start there). Recorded
/// per pointer in the manifest; the launcher refuses a pointer off it.
constexpr int64_t kPointerArgAlignment = 16;

struct AxisInfo {
  /// Per dimension: the constant stride, or nullopt when not a known
  /// constant.
  SmallVector<std::optional<int64_t>> stride;
  /// Per dimension: a power of two dividing the difference of any two
  /// elements along it: the stride's, also a run-time one (`rows * s`, s a
  /// scalar: the divisibility of s), or, where the value is not affine
  /// along it, what a product with a uniform value guarantees
  /// (`page_ids * 2048`: 2048); 0 when nothing is known.
  SmallVector<int64_t> strideDivisibility;
  /// Per dimension: the value is the same for every coordinate along it.
  SmallVector<bool> constant;
  /// Per dimension: a power of two R such that the value is the same over
  /// each aligned run of R coordinates along it (huge where constant; a
  /// mask `cols < 96` over 128 columns: 32), so that a masked access may
  /// still be a vector of up to R elements.
  SmallVector<int64_t> uniformRun;
  /// Power of two dividing the uniform base (1 when unknown).
  int64_t divisibility = 1;
};

class AxisAnalysis {
public:
  /// Analyses every tile value in `root` (in program order).
  explicit AxisAnalysis(Operation *root);

  /// The info of a tile value; null when it was not analysed.
  const AxisInfo *lookup(Value v) const;

  /// Vector width (elements) for a memory access through `ptr` with
  /// optional `mask`/`other`, given that the thread's first `maxVec`
  /// registers are consecutive along `dim`: 1 when nothing can be merged.
  int64_t vectorWidth(Value ptr, Value mask, Value other, unsigned dim,
                      int64_t maxVec) const;

  /// The dimension along which `ptr` has stride 1, if any.
  std::optional<unsigned> contiguousDim(Value ptr) const;

  /// A power of two that provably divides integer scalar `v` (constants,
  /// loop induction variables, arguments with tile.divisibility, and
  /// products and sums of them).
  int64_t scalarDivisibility(Value v) const;

private:
  void visit(Operation *op);
  llvm::DenseMap<Value, AxisInfo> infos;
};

} // namespace mlir::tile
