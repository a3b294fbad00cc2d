//===- SplitMaskedLoops.cpp - unmasked interior iterations ----------------===//
//
// A mask in a loop body (the condition of a tile.where, the mask of a
// tile.load or tile.store, the rows a tile.tma_wait keeps: `valid` =
// bound - y, all of the box when y + rows - 1 < bound, which in the first
// loop becomes the constant box height so that the lowering zeroes
// nothing) is often all true for every iteration but the
// last few: `keys < seqlen` fails only in the block that crosses the end of
// the sequence, a causal `rows >= keys` only in the blocks on the diagonal.
// This pass finds, for each such mask, a loop-invariant bound X with
//
//     iv < X  implies  every element of the mask is true,
//
// and splits the loop at the first iteration at or past min(X): the first
// loop runs the same body with those masks gone (`where(c, a, b)` is `a`, a
// masked load or store is unmasked), the second loop is the original body
// for the remaining iterations, starting from the first loop's results; it
// is marked `tile.masked_tail` (a few iterations: later passes that pay a
// prologue and an epilogue for a faster steady state leave it alone).
//
// A mask can instead hold from a bound on, iv >= X (a loop counting down:
// `range(top, -1, -BN)` runs j from -top with keys = -j + iota, so
// `keys < seqlen` and a causal `rows >= keys` fail in its first blocks).
// Such masks split the other way, at the first iteration at or past
// max(X): the masked first iterations (the original body, marked
// `tile.masked_head`), then the rest with those masks gone, which is split
// again for masks of the first kind. A mask that fails at both ends (an
// `and` of the two kinds) is left alone.
//
// Masks it understands are built with tile.and, broadcast, expand_dims and
// splat from comparisons (lt, le, gt, ge; signed) of integer tiles of the
// form `c * iv + invariant + [lo, hi]` (c in {-1, 0, 1}): iota, splat, add,
// sub, constants and loop-invariant scalars. A comparison whose sides'
// coefficients differ by one gives X (which kind depends on the sign);
// anything else leaves the mask alone. Integer arithmetic is assumed not to
// wrap, as in the program itself. Both loops see the same induction-variable
// values as the original, so iteration-indexed state (TMA stages and
// mbarrier phases, prefetched iter_args) carries over unchanged.
//
// With cta_programs = G > 1 the G programs of a CTA share the TMA copies
// of their loops, so a split that depends on tile.cta_member (causal rows)
// is taken at the smallest of its G values instead (the largest for a
// masked head): every program's loops then split at the same iteration
// (any split with fewer unmasked iterations is as correct).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESPLITMASKEDLOOPS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
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

/// Range analysis relative to one loop; builds bounds before the loop.
class MaskBounds {
public:
  MaskBounds(scf::ForOp loop, OpBuilder &pre) : loop(loop), pre(pre) {}

  /// Where `mask` is all true; nullopt when unknown.
  std::optional<Bound> bound(Value mask) {
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
  std::optional<Bound> validBound(TmaWaitOp wait) {
    auto sub = wait.getValid().getDefiningOp<arith::SubIOp>();
    if (!sub)
      return std::nullopt;
    auto y = range(sub.getRhs()), b = range(sub.getLhs());
    if (!y || !b)
      return std::nullopt;
    y->hi += wait.getType().getDimSize(1 - wait.getInnerDim()) - 1;
    return lessThan(*y, *b, 0);
  }

private:
  static std::optional<arith::CmpIPredicate> toSigned(CmpPredicate p) {
    switch (p) {
    case CmpPredicate::lt: return arith::CmpIPredicate::slt;
    case CmpPredicate::le: return arith::CmpIPredicate::sle;
    case CmpPredicate::gt: return arith::CmpIPredicate::sgt;
    case CmpPredicate::ge: return arith::CmpIPredicate::sge;
    default: return std::nullopt;
    }
  }

  Type ivType() { return loop.getInductionVar().getType(); }

  bool invariant(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return !loop->isAncestor(arg.getOwner()->getParentOp());
    return !loop->isAncestor(v.getDefiningOp());
  }

  std::optional<Range> range(Value v) {
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
  static std::optional<Range> combine(Range a, const Range &b, int64_t sign) {
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

  /// sum(a.terms) - sum(b.terms) + c, built before the loop.
  Value difference(const Range &a, const Range &b, int64_t c) {
    Location loc = loop.getLoc();
    Value x = arith::ConstantOp::create(pre, loc, IntegerAttr::get(ivType(), c));
    auto add = [&](Value t, int64_t sign) {
      if (t.getType() != ivType())
        return false;
      x = sign > 0 ? arith::AddIOp::create(pre, loc, x, t).getResult()
                   : arith::SubIOp::create(pre, loc, x, t).getResult();
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

  /// Where every value of `l` is less than every value of `r` + plus:
  /// (l.coef - r.coef) * iv + Lt - Rt + k < 0 with k = l.hi - r.lo - plus.
  /// Coefficient 1: iv < Rt - Lt - k; -1: iv >= Lt - Rt + k + 1; a mask
  /// that does not move with iv is left alone.
  std::optional<Bound> lessThan(const Range &l, const Range &r, int64_t plus) {
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

  std::optional<Bound> compare(std::optional<arith::CmpIPredicate> pred,
                               Value lhs, Value rhs) {
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

  scf::ForOp loop;
  OpBuilder &pre;
};

/// The mask operand of a masked op of the body, if the pass may drop it
/// (a tile.tma_wait's `valid`).
Value maskOf(Operation *op) {
  if (auto wait = dyn_cast<TmaWaitOp>(op))
    return wait.getValid();
  if (auto w = dyn_cast<WhereOp>(op))
    return w.getCond();
  if (auto ld = dyn_cast<LoadOp>(op))
    return ld.getMask();
  if (auto st = dyn_cast<StoreOp>(op))
    return st.getMask();
  return {};
}

/// The op with its mask gone (all true), in the first loop's body.
void dropMask(Operation *op, RewriterBase &rw) {
  if (auto wait = dyn_cast<TmaWaitOp>(op)) {
    // Every row valid: a constant `valid` lets the lowering drop the
    // zeroing of rows past it.
    OpBuilder b(wait);
    Value rows = arith::ConstantOp::create(
        b, wait.getLoc(),
        b.getI32IntegerAttr(wait.getType().getDimSize(1 - wait.getInnerDim())));
    rw.modifyOpInPlace(wait, [&] { wait.getValidMutable().assign(rows); });
    return;
  }
  if (auto w = dyn_cast<WhereOp>(op)) {
    rw.replaceOp(w, w.getLhs());
    return;
  }
  rw.modifyOpInPlace(op, [&] {
    if (auto ld = dyn_cast<LoadOp>(op)) {
      ld.getMaskMutable().clear();
      ld.getOtherMutable().clear();
    } else {
      cast<StoreOp>(op).getMaskMutable().clear();
    }
  });
}

/// `x` where it does not depend on tile.cta_member, else the smallest (or
/// `largest`) of its values over the CTA's `members` programs (its
/// arithmetic cloned at `pre` for each member index); null when that cannot
/// be built.
Value extremeOverMembers(Value x, OpBuilder &pre, int64_t members,
                         bool largest) {
  Operation *def = x.getDefiningOp();
  if (members <= 1 || !def)
    return x;
  SetVector<Operation *> slice;
  BackwardSliceOptions opts;
  opts.inclusive = true;
  opts.omitBlockArguments = true;
  if (failed(getBackwardSlice(def, &slice, opts)))
    return {};
  DenseSet<Operation *> dep; // ops that depend on a member (slice is in order)
  for (Operation *op : slice)
    if (isa<CtaMemberOp>(op) ||
        llvm::any_of(op->getOperands(), [&](Value v) {
          return v.getDefiningOp() && dep.contains(v.getDefiningOp());
        }))
      dep.insert(op);
  if (!dep.contains(def))
    return x;
  Value best;
  for (int64_t m = 0; m < members; ++m) {
    IRMapping map;
    for (Operation *op : slice) {
      if (!dep.contains(op))
        continue;
      if (auto member = dyn_cast<CtaMemberOp>(op)) {
        map.map(member.getResult(),
                arith::ConstantIntOp::create(pre, x.getLoc(), m, 32).getResult());
        continue;
      }
      if (op->getNumRegions() || !isPure(op))
        return {};
      pre.clone(*op, map);
    }
    Value v = map.lookup(x);
    if (!best)
      best = v;
    else if (largest)
      best = arith::MaxSIOp::create(pre, x.getLoc(), best, v);
    else
      best = arith::MinSIOp::create(pre, x.getLoc(), best, v);
  }
  return best;
}

void split(scf::ForOp loop, RewriterBase &rw) {
  auto stepC = getConstantIntValue(loop.getStep());
  if (!stepC || *stepC <= 0 || !isa<IntegerType>(loop.getStep().getType()))
    return;
  OpBuilder pre(loop);
  MaskBounds bounds(loop, pre);
  // The analysis builds bound arithmetic before the loop as it goes; what
  // ends up unused (a failed half of an `and`, no split at all) is erased.
  Operation *before = loop->getPrevNode();
  auto eraseUnusedBounds = [&] {
    for (Operation *op = loop->getPrevNode(); op && op != before;) {
      Operation *prev = op->getPrevNode();
      if (isOpTriviallyDead(op))
        op->erase();
      op = prev;
    }
  };
  // Positions in the body of masked ops with a known bound, and the bound
  // of each; a mask shared by several ops is bounded once (a wait's bound
  // also depends on its box, so each wait has its own).
  SmallVector<std::pair<unsigned, Bound>> known;
  llvm::DenseMap<Value, std::optional<Bound>> boundOf;
  bool anyHead = false;
  for (auto [i, op] : llvm::enumerate(loop.getBody()->getOperations())) {
    Value mask = maskOf(&op);
    if (!mask)
      continue;
    std::optional<Bound> b;
    if (auto wait = dyn_cast<TmaWaitOp>(op)) {
      b = bounds.validBound(wait);
    } else {
      auto [it, isNew] = boundOf.try_emplace(mask, std::nullopt);
      if (isNew)
        it->second = bounds.bound(mask);
      b = it->second;
    }
    if (!b)
      continue;
    known.push_back({unsigned(i), *b});
    anyHead |= b->kind == Bound::AtOrAbove;
  }
  // Masked first iterations are split off first (the rest is split again
  // for masked last ones), else masked last iterations.
  Bound::Kind kind = anyHead ? Bound::AtOrAbove : Bound::Below;
  SmallVector<unsigned> dropped;
  llvm::SmallPtrSet<Value, 8> seen;
  Value x;
  Location loc = loop.getLoc();
  for (auto &[i, b] : known) {
    if (b.kind != Bound::Always && b.kind != kind)
      continue;
    dropped.push_back(i);
    if (!b.x || !seen.insert(b.x).second)
      continue;
    if (!x)
      x = b.x;
    else if (kind == Bound::Below)
      x = arith::MinSIOp::create(pre, loc, x, b.x);
    else
      x = arith::MaxSIOp::create(pre, loc, x, b.x);
  }
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  if (!dropped.empty() && !x) // only masks that are always true: no tail
    x = ub;
  if (!dropped.empty())
    if (auto fn = loop->getParentOfType<func::FuncOp>())
      x = extremeOverMembers(x, pre, getSchedule(fn).getCtaPrograms(),
                             kind == Bound::AtOrAbove);
  if (dropped.empty() || !x) {
    eraseUnusedBounds();
    return;
  }
  // split = clamp(lb + ceil((max(x, lb) - lb) / step) * step, lb, ub): the
  // first iteration at or past x.
  Value one = arith::ConstantOp::create(pre, loc, IntegerAttr::get(lb.getType(), 1));
  Value dist = arith::SubIOp::create(pre, loc,
                                     arith::MaxSIOp::create(pre, loc, x, lb), lb);
  Value steps = arith::DivSIOp::create(
      pre, loc,
      arith::AddIOp::create(pre, loc, dist,
                            arith::SubIOp::create(pre, loc, step, one)),
      step);
  Value at = arith::AddIOp::create(pre, loc, lb,
                                   arith::MulIOp::create(pre, loc, steps, step));
  Value splitIv = arith::MaxSIOp::create(
      pre, loc, lb, arith::MinSIOp::create(pre, loc, at, ub));

  // The loop before the split is a clone of the original: unmasked for a
  // tail split, the masked head for a head split; the original runs from the
  // split on, continuing the first's state.
  rw.setInsertionPoint(loop);
  auto first = cast<scf::ForOp>(rw.clone(*loop));
  first.getUpperBoundMutable().assign(splitIv);
  scf::ForOp unmasked = kind == Bound::Below ? first : loop;
  SmallVector<Operation *> body;
  for (Operation &op : unmasked.getBody()->getOperations())
    body.push_back(&op);
  for (unsigned i : dropped)
    dropMask(body[i], rw);
  rw.modifyOpInPlace(loop, [&] {
    loop.getLowerBoundMutable().assign(splitIv);
    loop.getInitArgsMutable().assign(first.getResults());
  });
  if (kind == Bound::Below)
    loop->setAttr(kMaskedTailAttr, rw.getUnitAttr());
  else
    first->setAttr(kMaskedHeadAttr, rw.getUnitAttr());
  eraseUnusedBounds();
  if (kind == Bound::AtOrAbove)
    split(loop, rw); // masks at the other end
}

struct SplitMaskedLoopsPass
    : public mlir::tile::impl::TileSplitMaskedLoopsBase<SplitMaskedLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    // Innermost loops only: an outer loop's body holds the inner loop.
    getOperation().walk([&](scf::ForOp loop) {
      bool inner = true;
      loop.getBody()->walk([&](scf::ForOp) { inner = false; });
      if (inner)
        loops.push_back(loop);
    });
    IRRewriter rw(&getContext());
    for (scf::ForOp loop : loops)
      split(loop, rw);
  }
};
} // namespace
