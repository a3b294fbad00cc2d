//===- HoistInvariantLoads.cpp - loop-invariant loads leave the loop ------===//
//
// A load whose address, mask and fill value are the same on every trip of
// an scf.for (ALiBi's `slope[h]`, the document id of a query row, a
// prefix length: hook code inlined into the key loop) would wait on memory
// once per iteration. Where nothing in the loop writes memory, the load
// reads the same values on every trip, so it runs once before the loop
// instead, together with the pure scalar or tile ops that compute its
// operands from values defined outside (cloned; the originals stay for
// other users, CSE merges what is left). The hoisted load is masked by
// `lb < ub` as well: a loop that runs no trip reads nothing, as before.
//
// Cost model: one load and its address arithmetic per program instead of
// per iteration; the result is live across the loop (a hoisted [BM, 1]
// tile costs BM / threads registers). Loads inside nested regions (an
// scf.if in the body) are conditional and stay. Inner loops go first, so
// a load invariant in two nested loops leaves both.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEHOISTINVARIANTLOADS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// True when nothing in `loop` may write memory (ops with unknown effects
/// count as writes).
bool writesNothing(scf::ForOp loop) {
  WalkResult r = loop.getBody()->walk([](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->getNumRegions() || op->hasTrait<OpTrait::IsTerminator>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    return effects.hasEffect<MemoryEffects::Write>() ? WalkResult::interrupt()
                                                     : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// Collects, in def-before-use order, the ops of `loop`'s body that compute
/// `v` from values defined outside it; false when one is not a pure op of
/// the body itself (a block argument, a load, a nested op).
bool invariantSlice(scf::ForOp loop, Value v, SetVector<Operation *> &slice) {
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions() ||
      !isMemoryEffectFree(def))
    return false;
  if (slice.contains(def))
    return true;
  for (Value operand : def->getOperands())
    if (!invariantSlice(loop, operand, slice))
      return false;
  slice.insert(def);
  return true;
}

/// Hoists the invariant loads directly in `loop`'s body; true if any.
bool hoistLoads(scf::ForOp loop) {
  SmallVector<Operation *> loads;
  for (Operation &op : loop.getBody()->without_terminator())
    if (isa<LoadOp, ScalarLoadOp>(op))
      loads.push_back(&op);
  if (loads.empty() || !writesNothing(loop))
    return false;
  bool changed = false;
  OpBuilder b(loop);
  Value guard;
  for (Operation *load : loads) {
    SetVector<Operation *> slice;
    if (!llvm::all_of(load->getOperands(), [&](Value v) {
          return invariantSlice(loop, v, slice);
        }))
      continue;
    Location loc = load->getLoc();
    if (!guard)
      guard = arith::CmpIOp::create(
          b, loop.getLoc(),
          loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                : arith::CmpIPredicate::slt,
          loop.getLowerBound(), loop.getUpperBound());
    IRMapping map;
    for (Operation *op : slice)
      b.clone(*op, map);
    Value result;
    if (auto l = dyn_cast<LoadOp>(load)) {
      auto ptrType = cast<TileType>(l.getPtr().getType());
      auto maskType = TileType::get(ptrType.getShape(), b.getI1Type());
      Value mask = SplatOp::create(b, loc, maskType, guard);
      if (l.getMask())
        mask = AndOp::create(b, loc, map.lookupOrDefault(l.getMask()), mask);
      result = LoadOp::create(b, loc, l.getType(),
                              map.lookupOrDefault(l.getPtr()), mask,
                              l.getOther() ? map.lookupOrDefault(l.getOther())
                                           : Value());
    } else {
      auto s = cast<ScalarLoadOp>(load);
      Value mask = guard;
      if (s.getMask())
        mask = arith::AndIOp::create(b, loc, map.lookupOrDefault(s.getMask()),
                                     mask);
      result = ScalarLoadOp::create(
          b, loc, s.getType(), map.lookupOrDefault(s.getPtr()), mask,
          s.getOther() ? map.lookupOrDefault(s.getOther()) : Value());
    }
    result.getDefiningOp()->setDiscardableAttrs(
        load->getDiscardableAttrDictionary());
    load->getResult(0).replaceAllUsesWith(result);
    load->erase();
    changed = true;
  }
  return changed;
}

struct HoistInvariantLoads
    : mlir::tile::impl::TileHoistInvariantLoadsBase<HoistInvariantLoads> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) // post-order: inner loops first
      hoistLoads(loop);
  }
};
} // namespace
