//===- MaskBounds.cpp - where a loop's masks are all true -----------------===//
//
// See MaskBounds.h. A comparison whose sides' coefficients of the
// induction variable differ by one gives X (which kind depends on the
// sign); anything else leaves the mask alone. Integer arithmetic is
// assumed not to wrap, as in the program itself.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/MaskBounds.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::masks {

/// Where `mask` is all true; nullopt when unknown.
std::optional<Bound> MaskBounds::bound(Value mask) {
  if (auto c = getConstantIntValue(mask); c && *c)
    return Bound{};
  Operation *def = mask.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<BroadcastOp, ExpandDimsOp, SplatOp>(def))
    return bound(def->getOperand(0));
  if (auto full = dyn_cast<FullOp>(def)) {
    auto v = dyn_cast<IntegerAttr>(full.getValue());
    return v && v.getInt() ? std::optional<Bound>(Bound{}) : std::nullopt;
  }
  if (isa<AndOp, arith::AndIOp>(def)) {
    auto a = bound(def->getOperand(0)), b = bound(def->getOperand(1));
    if (!a || !b)
      return std::nullopt;
    if (a->kind == Bound::Always)
      return b;
    if (b->kind == Bound::Always)
      return a;
    if (a->kind != b->kind) // masked at both ends: left alone
      return std::nullopt;
    Location loc = loop.getLoc();
    Value x = a->kind == Bound::Below
                  ? arith::MinSIOp::create(pre, loc, a->x, b->x).getResult()
                  : arith::MaxSIOp::create(pre, loc, a->x, b->x).getResult();
    return Bound{a->kind, x};
  }
  if (auto cmp = dyn_cast<CmpOp>(def))
    return compare(toSigned(cmp.getPredicate()), cmp.getLhs(), cmp.getRhs());
  if (auto cmp = dyn_cast<arith::CmpIOp>(def))
    return compare(cmp.getPredicate(), cmp.getLhs(), cmp.getRhs());
  return std::nullopt;
}

/// Where a tile.tma_wait keeps every row of its box: its `valid` is
/// `bound - y` (tile-tma-loads) and all `rows` rows are kept iff
/// y + rows - 1 < bound; nullopt when unknown.
std::optional<Bound> MaskBounds::validBound(TmaWaitOp wait) {
  auto sub = wait.getValid().getDefiningOp<arith::SubIOp>();
  if (!sub)
    return std::nullopt;
  auto y = range(sub.getRhs()), b = range(sub.getLhs());
  if (!y || !b)
    return std::nullopt;
  y->hi += wait.getType().getDimSize(1 - wait.getInnerDim()) - 1;
  return lessThan(*y, *b, 0);
}

std::optional<arith::CmpIPredicate> MaskBounds::toSigned(CmpPredicate p) {
  switch (p) {
  case CmpPredicate::lt: return arith::CmpIPredicate::slt;
  case CmpPredicate::le: return arith::CmpIPredicate::sle;
  case CmpPredicate::gt: return arith::CmpIPredicate::sgt;
  case CmpPredicate::ge: return arith::CmpIPredicate::sge;
  default: return std::nullopt;
  }
}

Type MaskBounds::ivType() { return loop.getInductionVar().getType(); }

bool MaskBounds::invariant(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return !loop->isAncestor(arg.getOwner()->getParentOp());
  return !loop->isAncestor(v.getDefiningOp());
}

std::optional<Range> MaskBounds::range(Value v) {
  if (v == loop.getInductionVar())
    return Range{1, {}, 0, 0};
  if (auto c = getConstantIntValue(v))
    return Range{0, {}, *c, *c};
  Operation *def = v.getDefiningOp();
  if (isa<IntegerType, IndexType>(v.getType())) {
    if (def && isa<arith::AddIOp, arith::SubIOp>(def)) {
      auto a = range(def->getOperand(0)), b = range(def->getOperand(1));
      if (a && b)
        return combine(*a, *b, isa<arith::SubIOp>(def) ? -1 : 1);
    }
    if (invariant(v))
      return Range{0, {{v, 1}}, 0, 0};
    return std::nullopt;
  }
  if (!def)
    return std::nullopt;
  if (isa<BroadcastOp, ExpandDimsOp, SplatOp>(def))
    return range(def->getOperand(0));
  if (auto iota = dyn_cast<IotaOp>(def))
    return Range{0, {}, 0, cast<TileType>(iota.getType()).getShape()[0] - 1};
  if (auto full = dyn_cast<FullOp>(def))
    if (auto c = dyn_cast<IntegerAttr>(full.getValue()))
      return Range{0, {}, c.getInt(), c.getInt()};
  if (isa<AddOp, SubOp>(def)) {
    auto a = range(def->getOperand(0)), b = range(def->getOperand(1));
    if (a && b)
      return combine(*a, *b, isa<SubOp>(def) ? -1 : 1);
  }
  return std::nullopt;
}

/// a + sign * b, when the induction variable's coefficient stays -1, 0
/// or 1.
std::optional<Range> combine(Range a, const Range &b, int64_t sign) {
  a.coef += sign * b.coef;
  if (a.coef < -1 || a.coef > 1)
    return std::nullopt;
  for (auto [v, s] : b.terms)
    a.terms.push_back({v, s * sign});
  int64_t lo = sign > 0 ? b.lo : -b.hi, hi = sign > 0 ? b.hi : -b.lo;
  a.lo += lo;
  a.hi += hi;
  return a;
}

Value signedSum(OpBuilder &builder, Location loc, Type type, const Range &a,
                const Range &b, int64_t c) {
  Value x = arith::ConstantOp::create(builder, loc, IntegerAttr::get(type, c));
  auto add = [&](Value t, int64_t sign) {
    if (t.getType() != type)
      return false;
    x = sign > 0 ? arith::AddIOp::create(builder, loc, x, t).getResult()
                 : arith::SubIOp::create(builder, loc, x, t).getResult();
    return true;
  };
  for (auto [t, s] : a.terms)
    if (!add(t, s))
      return {};
  for (auto [t, s] : b.terms)
    if (!add(t, -s))
      return {};
  return x;
}

/// sum(a.terms) - sum(b.terms) + c, built before the loop.
Value MaskBounds::difference(const Range &a, const Range &b, int64_t c) {
  return signedSum(pre, loop.getLoc(), ivType(), a, b, c);
}

/// Where every value of `l` is less than every value of `r` + plus:
/// (l.coef - r.coef) * iv + Lt - Rt + k < 0 with k = l.hi - r.lo - plus.
/// Coefficient 1: iv < Rt - Lt - k; -1: iv >= Lt - Rt + k + 1; a mask
/// that does not move with iv is left alone.
std::optional<Bound> MaskBounds::lessThan(const Range &l, const Range &r,
                                          int64_t plus) {
  int64_t k = l.hi - r.lo - plus;
  Value x;
  switch (l.coef - r.coef) {
  case 1:
    x = difference(r, l, -k);
    return x ? std::optional<Bound>(Bound{Bound::Below, x}) : std::nullopt;
  case -1:
    x = difference(l, r, k + 1);
    return x ? std::optional<Bound>(Bound{Bound::AtOrAbove, x}) : std::nullopt;
  default:
    return std::nullopt;
  }
}

std::optional<Bound>
MaskBounds::compare(std::optional<arith::CmpIPredicate> pred, Value lhs,
                    Value rhs) {
  using P = arith::CmpIPredicate;
  if (!pred)
    return std::nullopt;
  auto l = range(lhs), r = range(rhs);
  if (!l || !r)
    return std::nullopt;
  // All true iff max(L) < min(R) (lt), max(L) < min(R) + 1 (le), ...
  switch (*pred) {
  case P::slt: return lessThan(*l, *r, 0);
  case P::sle: return lessThan(*l, *r, 1);
  case P::sgt: return lessThan(*r, *l, 0);
  case P::sge: return lessThan(*r, *l, 1);
  default: return std::nullopt;
  }
}

} // namespace mlir::tile::masks
