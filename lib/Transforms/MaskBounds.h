//===- MaskBounds.h - where a loop's masks are all true -------*- C++ -*-===//
//
// The range analysis of tile-split-masked-loops (SplitMaskedLoops.cpp): for
// a mask in a loop body, a loop-invariant bound X with `iv < X` (or
// `iv >= X`) implying every element of the mask is true. Masks are
// tile.and, broadcast, expand_dims and splat of signed comparisons of
// integer tiles `c * iv + invariant + [lo, hi]` (c in {-1, 0, 1}); the
// bounds are built before the loop (MaskBounds.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Transforms/Passes.h"

namespace mlir::tile::masks {

/// Values in [coef * iv + sum(terms) + lo, coef * iv + sum(terms) + hi].
struct Range {
  int64_t coef = 0;
  SmallVector<std::pair<Value, int64_t>> terms; ///< invariant scalar, sign
  int64_t lo = 0, hi = 0;
};

/// Where a mask is all true: in every iteration, in those with iv < x (the
/// masked ones come last: a tail), or in those with iv >= x (a head).
struct Bound {
  enum Kind { Always, Below, AtOrAbove } kind = Always;
  Value x;
};

/// a + sign * b, when the induction variable's coefficient stays -1, 0
/// or 1 (MaskBounds.cpp).
std::optional<Range> combine(Range a, const Range &b, int64_t sign);
/// c + sum(a.terms) - sum(b.terms) in `type`, built at `b`; null when a
/// term has another type (shared with tile-version-masks).
Value signedSum(OpBuilder &builder, Location loc, Type type, const Range &a,
                const Range &b, int64_t c);

/// Range analysis relative to one loop; builds bounds before the loop.
class MaskBounds {
public:
  MaskBounds(scf::ForOp loop, OpBuilder &pre) : loop(loop), pre(pre) {}

  /// Where `mask` is all true; nullopt when unknown.
  std::optional<Bound> bound(Value mask);

  /// Where a tile.tma_wait keeps every row of its box: its `valid` is
  /// `bound - y` (tile-tma-loads) and all `rows` rows are kept iff
  /// y + rows - 1 < bound; nullopt when unknown.
  std::optional<Bound> validBound(TmaWaitOp wait);

private:
  static std::optional<arith::CmpIPredicate> toSigned(CmpPredicate p);
  Type ivType();
  bool invariant(Value v);
  std::optional<Range> range(Value v);
  /// sum(a.terms) - sum(b.terms) + c, built before the loop.
  Value difference(const Range &a, const Range &b, int64_t c);
  /// Where every value of `l` is less than every value of `r` + plus.
  std::optional<Bound> lessThan(const Range &l, const Range &r, int64_t plus);
  std::optional<Bound> compare(std::optional<arith::CmpIPredicate> pred,
                               Value lhs, Value rhs);

  scf::ForOp loop;
  OpBuilder &pre;
};

} // namespace mlir::tile::masks
