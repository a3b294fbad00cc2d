//===- PipelineLoads.cpp - prefetch next-iteration loads ------------------===//
//
// Post-condition: every tile.load directly in an scf.for body whose pointer,
// mask and other are computed from the induction variable and loop-invariant
// values only (through pure ops and loads of that kind: a gather through
// indices loaded in the loop) reads the next iteration's data; its value
// for the current iteration arrives through a new iter_arg. The prologue
// load and each next-iteration load (and index load) are masked with
// `iv < ub`, so no address outside the loop's range is read. Cost: the
// prefetched tile's registers, live across the whole body. A persistent
// kernel's loop over its programs (tile.persistent) is not pipelined.
//
// With the schedule's `index_ahead`, a gather's index loads (cloned at
// iv + step for its prefetch) are then pipelined too: loaded two
// iterations ahead of their gather's use and carried, so the prefetched
// gather issues without waiting for its indices' round trip to memory.
// Cost: the index tile's registers across the body (paged decode at
// D = 128: 4 more bytes of spills). Opt-in: on an H100 paged decode
// measured -1 to +2 % with it at two programs per SM and -5 % at one
// (docs/schedule.md).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/LoopSlice.h"
#include "lib/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPIPELINELOADS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// True when `op`'s results reach, through pure ops, the pointer or mask of
/// a load (a gather's index load: it moves ahead inside the gather's slice).
bool feedsLoadAddress(Operation *op, int depth = 16) {
  if (depth == 0)
    return false;
  for (OpOperand &use : op->getUses()) {
    Operation *user = use.getOwner();
    if (auto ld = dyn_cast<LoadOp>(user))
      if (use.get() != ld.getOther())
        return true;
    if (isPure(user) && feedsLoadAddress(user, depth - 1))
      return true;
  }
  return false;
}

/// `load` for iteration `iv`, through a clone of its slice.
Value loadAt(OpBuilder &b, scf::ForOp loop, LoadOp load,
             ArrayRef<Operation *> slice, Value oldIv, Value iv) {
  IRMapping map;
  Value inRange = cloneSliceAt(b, loop, slice, oldIv, iv, map);
  return maskedLoad(b, load, map, inRange);
}

LogicalResult pipeline(scf::ForOp loop, LoadOp load, RewriterBase &rewriter) {
  FailureOr<SmallVector<Operation *>> slice = addressSlice(loop, load);
  if (failed(slice))
    return failure();
  Value oldIv = loop.getInductionVar();
  rewriter.setInsertionPoint(loop);
  Value first = loadAt(rewriter, loop, load, *slice, oldIv, loop.getLowerBound());
  Value step = loop.getStep();
  auto newLoop = loop.replaceWithAdditionalYields(
      rewriter, first, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location loc, ArrayRef<BlockArgument>) {
        // Called before the body moves to the new loop: the body still
        // uses the old induction variable (which then becomes the new one).
        Value next = arith::AddIOp::create(b, loc, oldIv, step);
        return SmallVector<Value>{loadAt(b, loop, load, *slice, oldIv, next)};
      });
  if (failed(newLoop))
    return failure();
  auto forOp = cast<scf::ForOp>(newLoop->getOperation());
  rewriter.replaceOp(load, forOp.getRegionIterArgs().back());
  return success();
}

struct PipelineLoadsPass
    : public mlir::tile::impl::TilePipelineLoadsBase<PipelineLoadsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      // A persistent kernel's loop over programs (tile-persistent) is
      // left alone: its loads (Q) would hold registers through the
      // whole inner loop.
      if (loop->hasAttr(kPersistentAttr))
        continue;
      SmallVector<LoadOp> loads;
      for (Operation &op : *loop.getBody())
        if (auto ld = dyn_cast<LoadOp>(op))
          loads.push_back(ld);
      // An index load is not pipelined itself: each gather it feeds clones
      // it for the next iteration (pipelining it first would make it a
      // loop-carried value, which stops the gathers').
      SmallVector<LoadOp> indexLoads;
      for (LoadOp ld : loads)
        if (feedsLoadAddress(ld))
          indexLoads.push_back(ld);
      bool gathered = false;
      for (LoadOp ld : loads) {
        if (llvm::is_contained(indexLoads, ld))
          continue;
        // Each success replaces the loop; continue with the new one.
        scf::ForOp current = ld->getParentOfType<scf::ForOp>();
        gathered |= succeeded(pipeline(current, ld, rewriter)) &&
                    !indexLoads.empty();
      }
      if (gathered && getSchedule(indexLoads.front()).getIndexAhead())
        indicesAhead(indexLoads.front()->getParentOfType<scf::ForOp>(),
                     rewriter);
    }
  }

  /// The gathers now load for the next iteration, through index loads
  /// cloned at iv + step just before them. Those clones (their address a
  /// function of iv) are pipelined in turn: loaded one iteration earlier
  /// (two ahead of the gather's use) and carried in an iter_arg.
  static void indicesAhead(scf::ForOp loop, RewriterBase &rewriter) {
    // The current iteration's index loads lost their gathers: they go
    // first (with the address arithmetic only they used).
    for (Operation &op : llvm::make_early_inc_range(
             llvm::reverse(loop.getBody()->getOperations())))
      if (isOpTriviallyDead(&op))
        op.erase();
    SmallVector<LoadOp> clones;
    for (auto ld : loop.getBody()->getOps<LoadOp>())
      if (feedsLoadAddress(ld))
        clones.push_back(ld);
    for (LoadOp ld : clones) {
      scf::ForOp current = ld->getParentOfType<scf::ForOp>();
      (void)pipeline(current, ld, rewriter);
    }
  }
};
} // namespace
