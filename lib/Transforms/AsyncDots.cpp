//===- AsyncDots.cpp - wait for wgmma products where they are used --------===//
//
// sm_90a. A tile.dot whose B operand is read in place from a TMA slot is
// issued as an asynchronous wgmma group (`async`); a tile.dot_wait before
// its first user waits for it, letting the tensor cores run while the
// instructions in between issue:
//   * first user in the same block: the wait goes right before it, with
//     `pending` = the asynchronous dots issued in between;
//   * only yielded by an scf.for body (an accumulator): the wait moves to
//     the first use of the iter_arg in the next iteration (pending = dots
//     after it in its iteration plus dots before that use) and after the
//     loop; the product of the last iteration overlaps the loop's next
//     iteration's start.
// A TMA copy into the slot a waiting dot reads from must not overwrite the
// stage under it: copies of that slot between the dot and its wait move
// right after the wait (with the scf.if around them, in persistent kernels:
// left in place, the copy overwrote the stage under P·V and two-stage
// persistent kernels hung on an H100).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEASYNCDOTS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Asynchronous dots strictly between `from` and `to` (ops of one block, in
/// order); std::nullopt when an op with regions in between holds a dot.
std::optional<int64_t> asyncDotsBetween(Operation *from, Operation *to) {
  int64_t n = 0;
  for (Operation *op = from ? from->getNextNode() : &to->getBlock()->front();
       op && op != to; op = op->getNextNode()) {
    if (auto d = dyn_cast<DotOp>(op)) {
      n += d.getAsync() ? 1 : 0;
      continue;
    }
    bool nested = false;
    for (Region &r : op->getRegions())
      r.walk([&](DotOp) { nested = true; });
    if (nested)
      return std::nullopt;
  }
  return n;
}

/// The first op of `block` that uses `v` (directly or in a nested region).
Operation *firstUserIn(Value v, Block *block) {
  Operation *first = nullptr;
  for (Operation *user : v.getUsers()) {
    Operation *anc = block->findAncestorOpInBlock(*user);
    if (anc && (!first || anc->isBeforeInBlock(first)))
      first = anc;
  }
  return first;
}

/// dot_wait(v) before `at`, its first user; every use of v reads the wait.
Value waitBefore(RewriterBase &rw, Value v, Operation *at, int64_t pending) {
  rw.setInsertionPoint(at);
  auto w = DotWaitOp::create(rw, at->getLoc(), v, pending);
  rw.replaceAllUsesExcept(v, w.getResult(), w);
  return w;
}

/// Moves copies into `slot` that sit between `from` (exclusive; null = the
/// block's start) and `wait` to right after `wait`.
void delayCopies(Operation *from, Operation *wait, int64_t slot) {
  SmallVector<Operation *> copies;
  for (Operation *op = from ? from->getNextNode() : &wait->getBlock()->front();
       op && op != wait; op = op->getNextNode())
    if (tmaCopySlot(op) == slot)
      copies.push_back(op);
  Operation *after = wait;
  for (Operation *c : copies) {
    c->moveAfter(after);
    after = c;
  }
}

void placeWaits(DotOp dot, int64_t stages, RewriterBase &rw) {
  Block *block = dot->getBlock();
  int64_t slot = dot.getB().getDefiningOp<TmaWaitOp>().getSlot();
  Value r = dot.getResult();
  Operation *first = firstUserIn(r, block);
  if (!first)
    return; // unused: nothing reads it (and the next wait_group drains it)
  auto loop = dyn_cast<scf::ForOp>(block->getParentOp());
  // Only yielded: wait in the next iteration, at the accumulator's first
  // use, if this is the body's only asynchronous dot or its slot has two
  // stages. Otherwise (the overlapped loop of tile-overlap-dots over
  // three-stage rings) the wait stays at the end of the iteration, as
  // FlashAttention-3 does: ptxas cannot follow a product in flight across
  // the back edge between other groups and serializes every wgmma of the
  // kernel (warning C7514). With two stages the serialized form measured
  // faster (flash_fwd at D = 64 on H100).
  bool alone = llvm::none_of(*block, [&](Operation &op) {
    auto d = dyn_cast<DotOp>(op);
    return d && d != dot && d.getB().getDefiningOp<TmaWaitOp>();
  });
  bool onlyYielded = loop && first == block->getTerminator() &&
                     r.hasOneUse() && (alone || stages == 2);
  if (onlyYielded) {
    unsigned i = r.getUses().begin()->getOperandNumber();
    BlockArgument carried = loop.getRegionIterArgs()[i];
    Operation *use = firstUserIn(carried, block);
    auto after = asyncDotsBetween(dot, block->getTerminator());
    auto before = use ? asyncDotsBetween(nullptr, use) : std::nullopt;
    if (use && after && before) {
      Operation *w = waitBefore(rw, carried, use, *after + *before)
                         .getDefiningOp();
      // The copy of the next iteration's stage waits for this product.
      delayCopies(nullptr, w, slot);
      rw.setInsertionPointAfter(loop);
      Value res = loop.getResult(i);
      auto done = DotWaitOp::create(rw, loop.getLoc(), res, 0);
      rw.replaceAllUsesExcept(res, done.getResult(), done);
      return;
    }
  }
  auto pending = asyncDotsBetween(dot, first);
  Operation *w = waitBefore(rw, r, first, pending.value_or(0)).getDefiningOp();
  delayCopies(dot, w, slot);
}

struct AsyncDotsPass
    : public mlir::tile::impl::TileAsyncDotsBase<AsyncDotsPass> {
  using TileAsyncDotsBase::TileAsyncDotsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!targetsSm90a(module, arch))
      return;
    SmallVector<DotOp> dots;
    module.walk([&](DotOp d) {
      if (d.getB().getDefiningOp<TmaWaitOp>())
        dots.push_back(d);
    });
    for (DotOp d : dots)
      d.setAsync(true);
    // Ring depth of each slot, from its copies (tile-tma-loads gives every
    // copy of a kernel the same `stages`).
    DenseMap<std::pair<Operation *, int64_t>, int64_t> stages;
    module.walk([&](TmaCopyOp c) {
      stages[{c->getParentOfType<FunctionOpInterface>(), c.getSlot()}] =
          c.getStages();
    });
    IRRewriter rw(&getContext());
    for (DotOp d : dots) {
      int64_t slot = d.getB().getDefiningOp<TmaWaitOp>().getSlot();
      placeWaits(d,
                 stages.lookup_or({d->getParentOfType<FunctionOpInterface>(),
                                   slot},
                                  2),
                 rw);
    }
  }
};
} // namespace
