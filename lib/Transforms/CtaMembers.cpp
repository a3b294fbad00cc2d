//===- CtaMembers.cpp - values across the programs of a CTA ---------------===//
//
// See CtaMembers.h. Both walk the backward slice of a value; a block
// argument on the way is judged by argDepends.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/CtaMembers.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::members {

namespace {
/// A block argument's value may differ between the programs of a CTA: an
/// induction variable whose loop starts or steps by the member, or any
/// value a loop carries or a region receives (not followed: taken as
/// dependent), but those of the loop over programs (tile.persistent, one
/// ticket for the whole CTA) and the kernel's own arguments.
bool argDepends(BlockArgument arg) {
  Operation *owner = arg.getOwner()->getParentOp();
  if (isa<func::FuncOp>(owner) || owner->hasAttr(kPersistentAttr))
    return false;
  if (auto loop = dyn_cast<scf::ForOp>(owner); loop && arg == loop.getInductionVar())
    return dependsOnMember(loop.getLowerBound()) || dependsOnMember(loop.getStep());
  return true;
}

/// The backward slice of `def` (in order, `def` included), which of its ops
/// depend on tile.cta_member, and whether one does through a block argument
/// (`throughArg`: its value over the members cannot be rebuilt by cloning);
/// false when the slice cannot be built.
bool memberSlice(Operation *def, SetVector<Operation *> &slice,
                 DenseSet<Operation *> &dep, bool &throughArg) {
  BackwardSliceOptions opts;
  opts.inclusive = true;
  opts.omitBlockArguments = true;
  if (failed(getBackwardSlice(def, &slice, opts)))
    return false;
  throughArg = false;
  for (Operation *op : slice) {
    bool viaArg = llvm::any_of(op->getOperands(), [](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && argDepends(arg);
    });
    throughArg |= viaArg;
    if (viaArg || isa<CtaMemberOp>(op) ||
        llvm::any_of(op->getOperands(), [&](Value v) {
          return v.getDefiningOp() && dep.contains(v.getDefiningOp());
        }))
      dep.insert(op);
  }
  return true;
}
} // namespace

bool dependsOnMember(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return isa<BlockArgument>(v) && argDepends(cast<BlockArgument>(v));
  SetVector<Operation *> slice;
  DenseSet<Operation *> dep;
  bool throughArg;
  // A slice that cannot be built is taken as dependent (the safe answer).
  return !memberSlice(def, slice, dep, throughArg) || dep.contains(def);
}

Value extremeOverMembers(Value x, OpBuilder &pre, int64_t members,
                         bool largest) {
  Operation *def = x.getDefiningOp();
  if (members <= 1)
    return x;
  if (!def) // a block argument: independent, or not rebuildable
    return dependsOnMember(x) ? Value() : x;
  SetVector<Operation *> slice;
  DenseSet<Operation *> dep;
  bool throughArg;
  if (!memberSlice(def, slice, dep, throughArg))
    return {};
  if (!dep.contains(def))
    return x;
  if (throughArg)
    return {}; // cloning with a constant member would not rebuild it
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

} // namespace mlir::tile::members
