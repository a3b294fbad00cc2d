//===- StageReleases.cpp - tile.tma_release where a stage's dot is done --===//
//
// In tile-warp-specialize's consumer region each tile.tma_wait of a ring
// gets a tile.tma_release of its stage where the dot reading the stage is
// complete: after the dot (synchronous) or after its tile.dot_wait, which
// may be in the next iteration of a loop that carries the dot's value (the
// loop then carries the stage too, -1 for none: a release of -1 is none)
// or after the loop. The producer waits for these releases before it
// overwrites a stage.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/WarpSpecialize.h"

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Releases `stage` of `slot` after `after`.
void release(Operation *after, Value stage, int64_t slot) {
  OpBuilder b(after->getContext());
  b.setInsertionPointAfter(after);
  TmaReleaseOp::create(b, after->getLoc(), stage, slot);
}

/// The stage a dot value read, if an asynchronous dot read a ring stage
/// (its B operand from a tile.tma_wait of `slot`).
Value stageOf(Value v, int64_t slot) {
  auto dot = v.getDefiningOp<DotOp>();
  auto w = dot ? dot.getB().getDefiningOp<TmaWaitOp>() : TmaWaitOp();
  return w && dot.getAsync() && int64_t(w.getSlot()) == slot ? w.getStage()
                                                              : Value();
}

/// `loop` carries the dots of iter_args `args` (-> their slots) to their
/// waits: it carries their stages as well (the init's, or -1), and each
/// stage is released after the wait, in the body (the previous
/// iteration's dot) and after the loop (the last one).
LogicalResult carryStages(scf::ForOp loop,
                          const llvm::MapVector<unsigned, int64_t> &args) {
  IRRewriter rw(loop->getContext());
  rw.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value none = arith::ConstantIntOp::create(rw, loc, -1, 32);
  SmallVector<Value> inits;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [arg, slot] : args) {
    Value init = stageOf(loop.getInitArgs()[arg], slot);
    inits.push_back(init ? init : none);
  }
  unsigned first = loop.getNumRegionIterArgs();
  SmallVector<NamedAttribute> attrs(loop->getDiscardableAttrs());
  auto grown = loop.replaceWithAdditionalYields(
      rw, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        SmallVector<Value> out;
        for (auto [arg, slot] : args) {
          Value next = stageOf(yield.getOperand(arg), slot);
          out.push_back(next ? next : none);
        }
        return out;
      });
  if (failed(grown))
    return loop.emitError("producer = true: cannot carry TMA stages here");
  auto grownLoop = cast<scf::ForOp>(grown->getOperation());
  for (NamedAttribute a : attrs)
    grownLoop->setDiscardableAttr(a.getName(), a.getValue());
  for (auto [i, entry] : llvm::enumerate(args)) {
    auto [arg, slot] = entry;
    Value in = grownLoop.getRegionIterArgs()[arg];
    Value out = grownLoop.getResult(arg);
    auto inWait = in.hasOneUse() ? dyn_cast<DotWaitOp>(*in.user_begin())
                                 : DotWaitOp();
    auto outWait = out.hasOneUse() ? dyn_cast<DotWaitOp>(*out.user_begin())
                                   : DotWaitOp();
    if (!inWait || !outWait)
      return grownLoop.emitError(
          "producer = true needs a dot this loop carries to be waited for "
          "(tile.dot_wait) in the next iteration and after the loop");
    release(inWait, grownLoop.getRegionIterArgs()[first + i], slot);
    release(outWait, grownLoop.getResult(first + i), slot);
  }
  return success();
}
} // namespace

/// Each wait of a ring stage gets a tile.tma_release of the stage where
/// the dot that reads it is complete: after the dot (synchronous) or
/// after its tile.dot_wait, which may be in the next iteration of a loop
/// that carries the dot's value (the loop then carries the stage too, -1
/// for none: a release of -1 is none) or after the loop.
LogicalResult wspec::placeReleases(Block *consumer,
                                   const DenseMap<int64_t, int64_t> &stages) {
  SmallVector<TmaWaitOp> waits;
  consumer->walk([&](TmaWaitOp w) { waits.push_back(w); });
  // Loops carrying dots that read a stage: iter_arg -> slot.
  llvm::MapVector<Operation *, llvm::MapVector<unsigned, int64_t>> carried;
  for (TmaWaitOp w : waits) {
    int64_t slot = w.getSlot();
    if (stages.lookup(slot) <= 1)
      continue; // a one-stage slot is copied once and never released
    auto dot = w->hasOneUse() ? dyn_cast<DotOp>(*w->user_begin()) : DotOp();
    if (dot && !dot.getAsync()) {
      release(dot, w.getStage(), slot);
      continue;
    }
    OpOperand *use = dot && dot->hasOneUse() ? &*dot->use_begin() : nullptr;
    Operation *user = use ? use->getOwner() : nullptr;
    if (auto done = dyn_cast_or_null<DotWaitOp>(user)) {
      release(done, w.getStage(), slot);
      continue;
    }
    auto loop = user ? dyn_cast<scf::ForOp>(user->getParentOp()) : nullptr;
    std::optional<unsigned> arg;
    if (isa_and_nonnull<scf::YieldOp>(user) && loop)
      arg = use->getOperandNumber();
    else if (auto l = dyn_cast_or_null<scf::ForOp>(user)) {
      if (use->getOperandNumber() >= l.getNumControlOperands()) {
        loop = l;
        arg = use->getOperandNumber() - l.getNumControlOperands();
      }
    }
    if (!arg)
      return w.emitError("producer = true needs the dot reading each TMA "
                         "stage to be waited for (tile.dot_wait) in its "
                         "block, the next iteration or after its loop");
    auto [it, fresh] = carried[loop].insert({*arg, slot});
    if (!fresh && it->second != slot)
      return loop.emitError("producer = true: a loop carries dots reading "
                            "two TMA slots in one value");
  }
  for (auto &[op, args] : carried)
    if (failed(carryStages(cast<scf::ForOp>(op), args)))
      return failure();
  return success();
}
