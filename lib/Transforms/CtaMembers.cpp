//===- CtaMembers.cpp - values across the programs of a CTA ---------------===//
//
// See CtaMembers.h. Both walk the backward slice of a value (block
// arguments omitted: loop-carried and kernel arguments are the same for
// every program of a CTA, as tile-persistent hands all of them one ticket).
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
/// The backward slice of `def` (in order, `def` included) and which of its
/// ops depend on tile.cta_member; false when the slice cannot be built.
bool memberSlice(Operation *def, SetVector<Operation *> &slice,
                 DenseSet<Operation *> &dep) {
  BackwardSliceOptions opts;
  opts.inclusive = true;
  opts.omitBlockArguments = true;
  if (failed(getBackwardSlice(def, &slice, opts)))
    return false;
  for (Operation *op : slice)
    if (isa<CtaMemberOp>(op) ||
        llvm::any_of(op->getOperands(), [&](Value v) {
          return v.getDefiningOp() && dep.contains(v.getDefiningOp());
        }))
      dep.insert(op);
  return true;
}
} // namespace

bool dependsOnMember(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  SetVector<Operation *> slice;
  DenseSet<Operation *> dep;
  // A slice that cannot be built is taken as dependent (the safe answer).
  return !memberSlice(def, slice, dep) || dep.contains(def);
}

Value extremeOverMembers(Value x, OpBuilder &pre, int64_t members,
                         bool largest) {
  Operation *def = x.getDefiningOp();
  if (members <= 1 || !def)
    return x;
  SetVector<Operation *> slice;
  DenseSet<Operation *> dep;
  if (!memberSlice(def, slice, dep))
    return {};
  if (!dep.contains(def))
    return x;
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
