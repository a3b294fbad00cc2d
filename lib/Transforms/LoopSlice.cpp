//===- LoopSlice.cpp - a loop load's address computation, at another iv ---===//
#include "lib/Transforms/LoopSlice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tile;

FailureOr<SmallVector<Operation *>> mlir::tile::addressSlice(scf::ForOp loop,
                                                             Operation *op) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work(op->getOperands());
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
    // A load in the slice (a gather's indices: page ids from a block
    // table) is cloned for the other iteration too, masked like the load.
    if (def->getBlock() != body || def->getNumRegions() ||
        !(isPure(def) || isa<LoadOp>(def)))
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

Value mlir::tile::andSplat(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                           Value cond, Value mask) {
  Value m = SplatOp::create(b, loc, TileType::get(shape, b.getI1Type()), cond);
  return mask ? Value(AndOp::create(b, loc, mask, m)) : m;
}

Value mlir::tile::maskedLoad(OpBuilder &b, LoadOp load, IRMapping &map,
                             Value inRange) {
  Location loc = load.getLoc();
  auto ptrType = cast<TileType>(load.getPtr().getType());
  Value mask = andSplat(
      b, loc, ptrType.getShape(), inRange,
      load.getMask() ? map.lookupOrDefault(load.getMask()) : Value());
  Value other = load.getOther() ? map.lookupOrDefault(load.getOther()) : Value();
  return LoadOp::create(b, loc, load.getType(),
                        map.lookupOrDefault(load.getPtr()), mask, other);
}

Value mlir::tile::cloneSliceAt(OpBuilder &b, scf::ForOp loop,
                               ArrayRef<Operation *> slice, Value oldIv,
                               Value iv, IRMapping &map) {
  map.map(oldIv, iv);
  Value inRange;
  auto inRangeNow = [&] {
    if (!inRange)
      inRange = arith::CmpIOp::create(b, loop.getLoc(), arith::CmpIPredicate::slt,
                                      iv, loop.getUpperBound());
    return inRange;
  };
  for (Operation *op : slice) {
    if (auto inner = dyn_cast<LoadOp>(op))
      map.map(inner.getResult(), maskedLoad(b, inner, map, inRangeNow()));
    else
      b.clone(*op, map);
  }
  return inRangeNow();
}
