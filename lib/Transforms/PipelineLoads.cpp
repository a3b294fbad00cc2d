//===- PipelineLoads.cpp - prefetch next-iteration loads ------------------===//
//
// Post-condition: every tile.load directly in an scf.for body whose pointer,
// mask and other are computed from the induction variable and loop-invariant
// values only (through pure ops) reads the next iteration's data; its value
// for the current iteration arrives through a new iter_arg. The prologue
// load and each next-iteration load are masked with `iv < ub`, so no
// address outside the loop's range is read. A persistent kernel's loop over
// its programs (tile.persistent) is not pipelined.
//
//===----------------------------------------------------------------------===//
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
/// The ops of `loop`'s body that compute the operands of `load`, in program
/// order; failure when they depend on a loop-carried value or on an op with
/// side effects or regions.
FailureOr<SmallVector<Operation *>> addressSlice(scf::ForOp loop, LoadOp load) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work(load->getOperands());
  Block *body = loop.getBody();
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == loop.getInductionVar())
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == body)
        return failure(); // a loop-carried value
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!loop->isProperAncestor(def))
      continue; // loop invariant
    if (def->getBlock() != body || def->getNumRegions() || !isPure(def))
      return failure();
    if (slice.insert(def))
      work.append(def->operand_begin(), def->operand_end());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

/// Clones the slice with the induction variable set to `iv` and loads,
/// masked with `iv < ub`.
Value loadAt(OpBuilder &b, scf::ForOp loop, LoadOp load,
             ArrayRef<Operation *> slice, Value oldIv, Value iv) {
  Location loc = load.getLoc();
  IRMapping map;
  map.map(oldIv, iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  auto ptrType = cast<TileType>(load.getPtr().getType());
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv,
                                        loop.getUpperBound());
  Value mask = SplatOp::create(
      b, loc, TileType::get(ptrType.getShape(), b.getI1Type()), inRange);
  if (load.getMask())
    mask = AndOp::create(b, loc, map.lookupOrDefault(load.getMask()), mask);
  Value other = load.getOther() ? map.lookupOrDefault(load.getOther()) : Value();
  return LoadOp::create(b, loc, load.getType(),
                        map.lookupOrDefault(load.getPtr()), mask, other);
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
      for (LoadOp ld : loads) {
        // Each success replaces the loop; continue with the new one.
        scf::ForOp current = ld->getParentOfType<scf::ForOp>();
        (void)pipeline(current, ld, rewriter);
      }
    }
  }
};
} // namespace
