//===- CtaSharedLoops.cpp - the programs of a CTA walk one loop -----------===//
//
// sm_90a, stage 3 (after tile-persistent, before tile-tma-loads), in kernels
// whose schedule has cta_programs = G > 1. The G programs of a CTA wait for
// the same producer copies, so every loop with a ring must run the same
// iterations in all of them. A loop whose upper bound depends on
// program_id(0) (tile.cta_member: a causal query block reads mb + 1 key
// blocks) does not. This pass makes it run to the largest of the G bounds,
// and makes the iterations past the program's own bound change nothing:
//
//     for iv in [lb, ub(m))  { body }
//  -> for iv in [lb, max over m' of ub(m'))  {
//       active = iv < ub(m)
//       body, its stores and atomics, and its loads whose address depends
//       on the member, masked with `active` (loads the programs share, the
//       copies' candidates, read what another program of the CTA reads)
//       yield where(active, new, old) for every loop-carried value
//     }
//
// `active` is a mask tile-split-masked-loops understands (`iv < ub`): the
// loop's unmasked part (below the smallest of the G split points) carries
// no select; only the masked tail pays one per loop-carried element, and
// the work of the iterations a shorter program skips (at most
// ceil((G - 1) * BM / BN) blocks of a causal program: under 2 % of a 16k
// causal forward at G = 3, BM = 64, BN = 128). In exchange the CTA issues
// each copy once for G programs.
//
// Left alone (tile-warp-specialize then refuses the schedule, saying why):
// loops whose lower bound or step depends on the member, and loops with an
// op of memory effects this cannot mask (a nested region with one, a TMA
// op). Loops with no load the programs could share are left alone too:
// there is nothing to gain.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/CtaMembers.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILECTASHAREDLOOPS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::members;

namespace {
/// The values the body uses or makes that depend on tile.cta_member (the
/// loop's carried values and operands from outside included); null when
/// an op with memory effects cannot be masked.
std::optional<DenseSet<Value>> memberValues(scf::ForOp loop) {
  // What the loop carries is taken as the member's own (a load through it
  // is masked; such a load is no copy the programs could share anyway).
  DenseSet<Value> dep(loop.getRegionIterArgs().begin(),
                      loop.getRegionIterArgs().end());
  DenseSet<Value> independent; // values from outside the loop, checked
  auto depends = [&](Value v) {
    if (dep.contains(v))
      return true;
    if (independent.contains(v) ||
        loop->isAncestor(v.getParentRegion()->getParentOp()))
      return false; // checked, or defined in the body and not marked
    if (!dependsOnMember(v))
      return !independent.insert(v).second;
    dep.insert(v); // an operand from outside: in the set too
    return true;
  };
  bool ok = true;
  loop.getBody()->walk([&](Operation *op) {
    bool nested = op->getParentOp() != loop;
    if (!isPure(op) && !isa<scf::YieldOp>(op) &&
        (nested || !isa<LoadOp, StoreOp, AtomicAddOp, ScalarLoadOp,
                        ScalarStoreOp>(op)))
      ok = false;
    bool any = false;
    for (Value v : op->getOperands()) // every one: the set holds them all
      any |= depends(v);
    if (any)
      for (Value r : op->getResults())
        dep.insert(r);
  });
  if (!ok)
    return std::nullopt;
  return dep;
}

/// `mask && active` for a tile op over `ptrType`'s shape (active alone
/// when there is no mask).
Value andActive(OpBuilder &b, Location loc, Value mask, Value active,
                Type ptrType) {
  auto shape = cast<TileType>(ptrType).getShape();
  Value a = SplatOp::create(b, loc, TileType::get(shape, b.getI1Type()), active);
  return mask ? Value(AndOp::create(b, loc, mask, a)) : a;
}

void share(scf::ForOp loop, int64_t members) {
  Value ub = loop.getUpperBound();
  if (!dependsOnMember(ub) || dependsOnMember(loop.getLowerBound()) ||
      dependsOnMember(loop.getStep()) || loop.getUnsignedCmp())
    return;
  auto step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0)
    return;
  std::optional<DenseSet<Value>> dep = memberValues(loop);
  if (!dep)
    return;
  auto shared = [&](LoadOp l) {
    return llvm::none_of(l->getOperands(),
                         [&](Value v) { return dep->contains(v); });
  };
  bool anyShared = false;
  for (auto l : loop.getBody()->getOps<LoadOp>())
    anyShared |= shared(l);
  if (!anyShared)
    return;
  OpBuilder pre(loop);
  Value top = extremeOverMembers(ub, pre, members, /*largest=*/true);
  if (!top)
    return;

  Location loc = loop.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       loop.getInductionVar(), ub);
  for (Operation &op : llvm::make_early_inc_range(loop.getBody()->getOperations())) {
    b.setInsertionPoint(&op);
    Location l = op.getLoc();
    if (auto ld = dyn_cast<LoadOp>(op)) {
      if (!shared(ld))
        ld.getMaskMutable().assign(
            andActive(b, l, ld.getMask(), active, ld.getPtr().getType()));
    } else if (auto st = dyn_cast<StoreOp>(op)) {
      st.getMaskMutable().assign(
          andActive(b, l, st.getMask(), active, st.getPtr().getType()));
    } else if (auto at = dyn_cast<AtomicAddOp>(op)) {
      at.getMaskMutable().assign(
          andActive(b, l, at.getMask(), active, at.getPtr().getType()));
    } else if (auto sl = dyn_cast<ScalarLoadOp>(op)) {
      if (llvm::any_of(sl->getOperands(), [&](Value v) { return dep->contains(v); }))
        sl.getMaskMutable().assign(
            sl.getMask() ? Value(arith::AndIOp::create(b, l, sl.getMask(), active))
                         : active);
    } else if (auto ss = dyn_cast<ScalarStoreOp>(op)) {
      ss.getMaskMutable().assign(
          ss.getMask() ? Value(arith::AndIOp::create(b, l, ss.getMask(), active))
                       : active);
    }
  }
  // Iterations past the program's own bound carry every value through.
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  b.setInsertionPoint(yield);
  for (auto [operand, arg] :
       llvm::zip(yield->getOpOperands(), loop.getRegionIterArgs())) {
    Value v = operand.get();
    Value kept;
    if (auto t = dyn_cast<TileType>(v.getType())) {
      Value cond = SplatOp::create(
          b, loc, TileType::get(t.getShape(), b.getI1Type()), active);
      kept = WhereOp::create(b, loc, TypeRange{t}, ValueRange{cond, v, arg});
    } else {
      kept = arith::SelectOp::create(b, loc, active, v, arg);
    }
    operand.set(kept);
  }
  loop.getUpperBoundMutable().assign(top);
}

struct CtaSharedLoopsPass
    : public mlir::tile::impl::TileCtaSharedLoopsBase<CtaSharedLoopsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      int64_t members = getSchedule(fn).getCtaPrograms();
      if (members <= 1)
        return;
      SmallVector<scf::ForOp> loops;
      fn.walk([&](scf::ForOp loop) {
        if (!loop->hasAttr(kPersistentAttr))
          loops.push_back(loop);
      });
      for (scf::ForOp loop : loops)
        share(loop, members);
    });
  }
};
} // namespace
