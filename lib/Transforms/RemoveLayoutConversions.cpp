//===- RemoveLayoutConversions.cpp - push conversions to the leaves -------===//
//
// Post-condition: no tile.convert_layout whose operand could have been
// computed directly in the wanted layout by a cheap op (a constant, iota,
// splat, elementwise op, expand_dims or broadcast of such) or by a load
// that every user wants in that one layout. Conversions that remain move
// data between threads, after narrowing casts rather than before them. The recomputed op is placed right after the
// original one, so nothing moves into a loop; a remaining conversion of a
// value defined outside a loop is hoisted out of it (done once, not every
// iteration).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "dialects/tile/TileLayout.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEREMOVELAYOUTCONVERSIONS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Elementwise: every tile operand and result has one shape and layout.
bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, AndOp, OrOp,
             XOrOp, ExpOp, Exp2Op, LogOp, Log2Op, SqrtOp, RsqrtOp, TanhOp,
             AbsOp, NegOp, CmpOp, WhereOp, FmaOp, CastOp, AddPtrOp, LoadOp,
             DivUOp, RemUOp, MaxUOp, MinUOp, ShlOp, ShrSOp, ShrUOp, MulHiUOp,
             BitcastOp>(op);
}

bool isLeaf(Operation *op) { return isa<FullOp, IotaOp, SplatOp>(op); }

/// True when `v` can be recomputed in another layout at little cost: its
/// producers, up to `depth` levels, are leaves, elementwise (non-memory)
/// ops, expand_dims or broadcast.
/// With `throughConversions`, conversions count as free (tile-assign-layouts
/// asks before this pass has removed the ones it inserted).
bool cheapToRecompute(Value v, int depth, bool throughConversions = false) {
  if (!isa<TileType>(v.getType()))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth == 0)
    return false;
  if (isLeaf(def))
    return true;
  if (throughConversions && isa<ConvertLayoutOp>(def))
    return cheapToRecompute(def->getOperand(0), depth, true);
  if (isa<LoadOp>(def) ||
      !(isElementwise(def) || isa<ExpandDimsOp, BroadcastOp>(def)))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) {
    return cheapToRecompute(o, depth - 1, throughConversions);
  });
}

unsigned elementBits(Value v) {
  return cast<TileType>(v.getType()).getElementTypeBitWidth();
}

/// The layout operand `i` of `def` must have for `def` to produce `want`.
LayoutAttr operandLayoutFor(Operation *def, unsigned i, LayoutAttr want) {
  if (auto e = dyn_cast<ExpandDimsOp>(def))
    return sliceLayout(want, e.getAxis());
  if (auto b = dyn_cast<BroadcastOp>(def))
    return broadcastSourceLayout(
        want, cast<TileType>(b.getSrc().getType()).getShape());
  return want;
}

struct SinkConversion : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertLayoutOp cvt,
                                PatternRewriter &rewriter) const override {
    auto want = cast<TileType>(cvt.getType()).getLayout();
    if (!want)
      return rewriter.notifyMatchFailure(cvt, "no target layout");
    Operation *def = cvt.getSrc().getDefiningOp();
    if (!def)
      return rewriter.notifyMatchFailure(cvt, "operand is a block argument");
    if (auto inner = dyn_cast<ConvertLayoutOp>(def)) {
      rewriter.replaceOpWithNewOp<ConvertLayoutOp>(cvt, cvt.getType(),
                                                   inner.getSrc());
      return success();
    }
    bool movable = isLeaf(def) || isElementwise(def) ||
                   isa<ExpandDimsOp, BroadcastOp>(def);
    if (!movable)
      return rewriter.notifyMatchFailure(cvt, "producer cannot be moved");
    // A load read by several users in one layout (e.g. once per loop after
    // tile-split-masked-loops) is still loaded once, in that layout.
    SmallVector<ConvertLayoutOp> sameConversions;
    for (Operation *user : cvt.getSrc().getUsers()) {
      auto other = dyn_cast<ConvertLayoutOp>(user);
      if (!other || other.getType() != cvt.getType()) {
        sameConversions.clear();
        break;
      }
      sameConversions.push_back(other);
    }
    bool soleLayout = !sameConversions.empty();
    if (!soleLayout && (isa<LoadOp>(def) || !cheapToRecompute(cvt.getSrc(), 6)))
      return rewriter.notifyMatchFailure(cvt, "producer is shared and costly");
    // Data that must move moves narrow: not above a cast to fewer bits.
    if (auto c = dyn_cast<CastOp>(def);
        c && elementBits(c.getSrc()) > elementBits(c.getResult()) &&
        !cheapToRecompute(cvt.getSrc(), 6))
      return rewriter.notifyMatchFailure(cvt, "narrowing cast of costly data");

    // Right after the producer (never into a loop the producer is outside
    // of): operands first, so they dominate the clone, then the clone.
    rewriter.setInsertionPointAfter(def);
    IRMapping mapping;
    for (OpOperand &o : def->getOpOperands()) {
      auto t = dyn_cast<TileType>(o.get().getType());
      if (!t)
        continue;
      LayoutAttr l = operandLayoutFor(def, o.getOperandNumber(), want);
      if (t.getEncoding() != l)
        mapping.map(o.get(), ConvertLayoutOp::create(rewriter, cvt.getLoc(),
                                                     t.withEncoding(l), o.get()));
    }
    Operation *clone = rewriter.clone(*def, mapping);
    for (OpResult r : clone->getResults())
      if (auto t = dyn_cast<TileType>(r.getType()))
        r.setType(t.withEncoding(want));
    if (soleLayout)
      for (ConvertLayoutOp other : sameConversions)
        rewriter.replaceOp(other, clone->getResults());
    else
      rewriter.replaceOp(cvt, clone->getResults());
    return success();
  }
};

/// A reduction whose operand is an elementwise tree over loads that were
/// converted out of their (vectorised) layout: the tree and the reduction
/// run in the loads' layout and only the reduced tile is converted. Cost
/// model: otherwise SinkConversion retypes each load into the reduction's
/// layout (for the accumulator layout of a [64, 128] bf16 tile, 4-byte
/// loads where the load's own layout reads 16 bytes per thread); here the
/// tree's elementwise ops cost the same in either layout, the reduction
/// takes a few more shuffles, and the conversion moves M values instead of
/// M x N. Taken only where every value the tree reads is one of those
/// conversions (of one source layout) or cheap to recompute, and every op
/// of the tree feeds only the tree.
void reduceInLoadLayout(ReduceOp red) {
  auto srcTy = cast<TileType>(red.getSrc().getType());
  LayoutAttr from;
  bool anyLoad = false;
  llvm::SetVector<Operation *> tree;
  SmallVector<ConvertLayoutOp> conversions;
  SmallVector<OpOperand *> cheap;
  SmallVector<Value> work{red.getSrc()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (auto cvt = dyn_cast_or_null<ConvertLayoutOp>(def)) {
      auto l = cast<TileType>(cvt.getSrc().getType()).getLayout();
      if (!l || (from && l != from) || !cvt->hasOneUse())
        return;
      from = l;
      anyLoad |= isa_and_nonnull<LoadOp>(cvt.getSrc().getDefiningOp());
      conversions.push_back(cvt);
      continue;
    }
    if (!def || isa<LoadOp>(def) || !isElementwise(def) ||
        def->getNumResults() != 1)
      return;
    if (!tree.insert(def))
      continue;
    if (tree.size() > 64)
      return;
    for (OpOperand &o : def->getOpOperands()) {
      if (!isa<TileType>(o.get().getType()))
        continue;
      // Conversions and single-use elementwise ops join the tree; other
      // cheap values (constants, splats, a mask shared with other users)
      // are recomputed in the loads' layout.
      Operation *d = o.get().getDefiningOp();
      bool joins = d && (isa<ConvertLayoutOp>(d) ||
                         (isElementwise(d) && !isa<LoadOp>(d) && d->hasOneUse()));
      if (!joins && cheapToRecompute(o.get(), 6))
        cheap.push_back(&o);
      else
        work.push_back(o.get());
    }
  }
  if (!from || !anyLoad || from == srcTy.getLayout())
    return;
  // Every op of the tree feeds only the tree or the reduction.
  for (Operation *op : tree)
    for (Operation *user : op->getUsers())
      if (user != red.getOperation() && !tree.contains(user))
        return;
  for (ConvertLayoutOp cvt : conversions) {
    cvt.getResult().replaceAllUsesWith(cvt.getSrc());
    cvt->erase();
  }
  for (OpOperand *o : cheap) {
    OpBuilder b(o->getOwner());
    auto t = cast<TileType>(o->get().getType());
    o->set(ConvertLayoutOp::create(b, o->get().getLoc(), t.withEncoding(from),
                                   o->get()));
  }
  for (Operation *op : tree) {
    auto t = cast<TileType>(op->getResult(0).getType());
    op->getResult(0).setType(t.withEncoding(from));
  }
  auto resTy = cast<TileType>(red.getType());
  LayoutAttr old = resTy.getLayout();
  red.getResult().setType(resTy.withEncoding(sliceLayout(from, red.getAxis())));
  OpBuilder b(red->getContext());
  b.setInsertionPointAfter(red);
  auto back = ConvertLayoutOp::create(b, red.getLoc(), resTy.withEncoding(old),
                                      red.getResult());
  red.getResult().replaceAllUsesExcept(back.getResult(), back);
}

/// Moves a conversion of a value defined outside its loops before them.
void hoistInvariantConversions(Operation *root) {
  root->walk([](ConvertLayoutOp cvt) {
    Operation *outermost = nullptr;
    for (auto loop = cvt->getParentOfType<scf::ForOp>(); loop;
         loop = loop->getParentOfType<scf::ForOp>()) {
      if (loop->isAncestor(cvt.getSrc().getParentRegion()->getParentOp()))
        break;
      outermost = loop;
    }
    if (outermost)
      cvt->moveBefore(outermost);
  });
}

struct RemoveLayoutConversionsPass
    : public mlir::tile::impl::TileRemoveLayoutConversionsBase<
          RemoveLayoutConversionsPass> {
  void runOnOperation() override {
    // Before SinkConversion would retype the loads.
    SmallVector<ReduceOp> reductions;
    getOperation().walk([&](ReduceOp r) {
      if (isa<TileType>(r.getType()))
        reductions.push_back(r);
    });
    for (ReduceOp r : reductions)
      reduceInLoadLayout(r);
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkConversion>(&getContext());
    ConvertLayoutOp::getCanonicalizationPatterns(patterns, &getContext());
    // A conversion sinks one producer per rewrite, and a long chain of
    // index arithmetic (a paged gather's page, slot and row) can take more
    // sweeps than the driver's default 10. Every intermediate state is
    // valid IR, so a driver that stops early leaves conversions in place
    // rather than failing the compile.
    GreedyRewriteConfig config;
    config.setMaxIterations(256);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
    hoistInvariantConversions(getOperation());
  }
};
} // namespace

bool mlir::tile::isCheapToRecompute(Value v, int depth) {
  return cheapToRecompute(v, depth, /*throughConversions=*/true);
}
