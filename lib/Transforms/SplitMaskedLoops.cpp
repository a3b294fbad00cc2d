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
// `and` of the two kinds) is left alone, and so are masks of the second
// kind that are only tile.where conditions when the loop also has masks of
// the first kind (one split instead of two; tile-version-masks skips those
// selects at run time where they are all true).
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
// The range analysis: MaskBounds.cpp.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/CtaMembers.h"
#include "lib/Transforms/MaskBounds.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESPLITMASKEDLOOPS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::masks;

namespace {
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
  bool anyHead = false, anyTail = false, headOnlySelects = true;
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
    anyTail |= b->kind == Bound::Below;
    if (b->kind == Bound::AtOrAbove && !isa<WhereOp>(op))
      headOnlySelects = false;
  }
  // Masked first iterations are split off first (the rest is split again
  // for masked last ones), else masked last iterations. A loop masked at
  // both ends whose head masks are only selects (a sliding window's left
  // edge before a causal diagonal) splits only its tail: each split loop
  // runs unpipelined (a masked end) or pays a pipeline prologue and
  // epilogue (the interior), which a short loop cannot amortise, while
  // tile-version-masks turns the head's selects into a uniform branch per
  // iteration of the one pipelined interior loop.
  bool splitHead = anyHead && !(anyTail && headOnlySelects);
  Bound::Kind kind = splitHead ? Bound::AtOrAbove : Bound::Below;
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
      x = members::extremeOverMembers(x, pre, getSchedule(fn).getCtaPrograms(),
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
