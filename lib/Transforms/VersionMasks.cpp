//===- VersionMasks.cpp - skip a select when its mask is all true ---------===//
//
// tile-split-masked-loops drops a mask in the iterations where it provably
// holds, when that depends on the induction variable alone. A mask over
// indices the loop reads from memory (a block-sparse kernel's key block
// `idx * BN + iota(BN) < seqlen`, idx loaded) cannot be split that way,
// yet it fails only in one block: the selects run on every score of every
// iteration (at D = 64 the FP32 pipe is the bottleneck, and a compare and
// a select are two of about seven ops per score). This pass versions such
// a `tile.where` in an innermost loop:
//
//     where(m, a, b)  ->  if (all of m) { a } else { where(m, a, b) }
//
// with `all of m` a scalar test built just before it: m is tile.and,
// tile.or (either side's test will do), broadcast, expand_dims and splat
// of signed comparisons of integer tiles
// `sum of scalars + [lo, hi]` (iota, splat, full, add, sub), and
// `max(L) < min(R)` is `sum(L) - sum(R) < min(R) - max(L)` on the scalars.
// The test is uniform across the program's threads (a branch, no
// divergence). Loops split off as masked heads or tails (a few iterations,
// whose masks mostly fail) are left alone, and so are masks that do not
// depend on the loop (tile-split-masked-loops' business, or constant).
// Integer arithmetic is assumed not to wrap, as in the program itself.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/MaskBounds.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEVERSIONMASKS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::masks;

namespace {
using masks::Range; // not mlir::Range
/// `v` as `sum of scalars + [lo, hi]` (coefficient of the induction
/// variable 0: any scalar counts as a term, loop-invariant or not).
std::optional<Range> rangeOf(Value v);

/// The range of `def`'s operand 0 plus `sign` times operand 1's.
std::optional<Range> combineOf(Operation *def, int64_t sign) {
  auto a = rangeOf(def->getOperand(0)), b = rangeOf(def->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  return combine(*a, *b, sign);
}

std::optional<Range> rangeOf(Value v) {
  if (auto c = getConstantIntValue(v))
    return Range{0, {}, *c, *c};
  Operation *def = v.getDefiningOp();
  if (v.getType().isSignlessInteger()) {
    if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
      return combineOf(def, isa<arith::SubIOp>(def) ? -1 : 1);
    return Range{0, {{v, 1}}, 0, 0};
  }
  if (!def)
    return std::nullopt;
  if (isa<BroadcastOp, ExpandDimsOp, SplatOp>(def))
    return rangeOf(def->getOperand(0));
  if (auto iota = dyn_cast<IotaOp>(def))
    return Range{0, {}, 0, cast<TileType>(iota.getType()).getShape()[0] - 1};
  if (auto full = dyn_cast<FullOp>(def))
    if (auto c = dyn_cast<IntegerAttr>(full.getValue()))
      return Range{0, {}, c.getInt(), c.getInt()};
  if (isa<AddOp, SubOp>(def))
    return combineOf(def, isa<SubOp>(def) ? -1 : 1);
  return std::nullopt;
}

/// Builds the scalar tests of a mask before `at`.
struct AllTrue {
  OpBuilder b;
  Location loc;
  scf::ForOp loop;
  bool moves = false; ///< some term is computed in the loop

  /// max(l) < min(r) + plus, as `l.hi - r.lo - plus + sum(l) - sum(r) <
  /// 0`; null when the terms' types differ or there is no term.
  Value lessThan(const Range &l, const Range &r, int64_t plus) {
    Value first = !l.terms.empty()   ? l.terms.front().first
                  : !r.terms.empty() ? r.terms.front().first
                                     : Value();
    if (!first)
      return {};
    for (const Range *side : {&l, &r})
      for (auto [t, s] : side->terms)
        if (loop->isAncestor(t.getParentBlock()->getParentOp()))
          moves = true;
    Value x = signedSum(b, loc, first.getType(), l, r, l.hi - r.lo - plus);
    if (!x)
      return {};
    Value zero = arith::ConstantOp::create(b, loc, IntegerAttr::get(x.getType(), 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  }

  Value test(Value mask) {
    Operation *def = mask.getDefiningOp();
    if (!def)
      return {};
    if (isa<BroadcastOp, ExpandDimsOp, SplatOp>(def))
      return test(def->getOperand(0));
    if (isa<AndOp, arith::AndIOp>(def)) {
      Value x = test(def->getOperand(0)), y = test(def->getOperand(1));
      return x && y ? arith::AndIOp::create(b, loc, x, y).getResult() : Value();
    }
    // `a or b` is all true where either side is: a test of one side is
    // enough (a prefix-LM's `k <= q || k < prefix`).
    if (isa<OrOp, arith::OrIOp>(def)) {
      Value x = test(def->getOperand(0)), y = test(def->getOperand(1));
      if (x && y)
        return arith::OrIOp::create(b, loc, x, y);
      return x ? x : y;
    }
    auto cmp = dyn_cast<CmpOp>(def);
    if (!cmp)
      return {};
    auto l = rangeOf(cmp.getLhs()), r = rangeOf(cmp.getRhs());
    if (!l || !r)
      return {};
    switch (cmp.getPredicate()) {
    case CmpPredicate::lt: return lessThan(*l, *r, 0);
    case CmpPredicate::le: return lessThan(*l, *r, 1);
    case CmpPredicate::gt: return lessThan(*r, *l, 0);
    case CmpPredicate::ge: return lessThan(*r, *l, 1);
    default: return {};
    }
  }
};

void version(scf::ForOp loop, WhereOp w) {
  Operation *before = w->getPrevNode();
  AllTrue all{OpBuilder(w), w.getLoc(), loop};
  Value cond = all.test(w.getCond());
  if (!cond || !all.moves) {
    // Nothing to version: erase the scalars the test built.
    for (Operation *op = w->getPrevNode(); op && op != before;) {
      Operation *prev = op->getPrevNode();
      if (op->use_empty())
        op->erase();
      op = prev;
    }
    return;
  }
  OpBuilder b(w);
  Location loc = w.getLoc();
  auto ifOp = scf::IfOp::create(b, loc, w.getType(), cond,
                                /*withElseRegion=*/true);
  w.getResult().replaceAllUsesWith(ifOp.getResult(0));
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, w.getLhs());
  b.setInsertionPointToEnd(ifOp.elseBlock());
  auto yield = scf::YieldOp::create(b, loc, w.getResult());
  w->moveBefore(yield);
  // The mask's pure ops that only the select used run in the else branch
  // too (in their order).
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> todo = {w.getCond()};
  while (!todo.empty()) {
    Operation *def = todo.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != ifOp->getBlock() || !isPure(def) ||
        def->getNumRegions() || !slice.insert(def))
      continue;
    llvm::append_range(todo, def->getOperands());
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : llvm::make_early_inc_range(slice))
      if (llvm::any_of(op->getUsers(), [&](Operation *u) {
            return !slice.contains(u) && !ifOp.getElseRegion().isAncestor(
                                             u->getParentRegion());
          })) {
        slice.remove(op);
        changed = true;
      }
  }
  SmallVector<Operation *> moved(slice.begin(), slice.end());
  llvm::sort(moved, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  for (Operation *op : moved)
    op->moveBefore(w);
}

struct VersionMasksPass
    : public mlir::tile::impl::TileVersionMasksBase<VersionMasksPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, WhereOp>> work;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kMaskedTailAttr) || loop->hasAttr(kMaskedHeadAttr))
        return;
      bool inner = true;
      loop.getBody()->walk([&](scf::ForOp) { inner = false; });
      if (!inner)
        return;
      for (Operation &op : *loop.getBody())
        if (auto w = dyn_cast<WhereOp>(op))
          work.push_back({loop, w});
    });
    for (auto [loop, w] : work)
      version(loop, w);
  }
};
} // namespace
