//===- PadShapes.cpp - tiles of any size on power-of-two layouts ----------===//
//
// First pass of stage 3. Layouts (tile-assign-layouts) spread power-of-two
// tile dimensions over threads; a kernel may use others (a head dim of 80,
// 96, 160 or 192). This pass pads every such dimension to the next power
// of two and keeps the padding lanes out of every result:
//   * loads and stores (and atomic adds) are masked to the kernel's lanes;
//     a padded load reads zeros there (`other` 0 where it had none);
//   * a reduction along a padded dimension sees its identity there (0 for
//     sum, -inf/+inf or the integer extremes for max/min);
//   * a dot contracting over a padded K sees zeros there in both operands
//     (operands loaded by a padded load already are);
//   * a dot records the K and N it uses (`k_used`, `n_used`): wgmma skips
//     the padded k steps and issues an N of the used columns only;
//   * every other op is lane-wise (or moves lanes with them: expand_dims,
//     broadcast, trans), so padding lanes only ever meet padding lanes.
// Cost model: the padded lanes' lane-wise arithmetic (products on wgmma do
// only the used work; on mma.sync D = 96 does the MMA work of 128), one i1
// tile per padded shape and a select before reductions and dots whose
// operand is not a padded load; memory traffic stays that of the kernel's
// own lanes.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPADSHAPES
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

bool needsPadding(Type t) {
  auto tt = dyn_cast<TileType>(t);
  return tt && llvm::any_of(tt.getShape(),
                            [](int64_t d) { return !llvm::isPowerOf2_64(d); });
}

TileType padded(TileType t) {
  SmallVector<int64_t> shape;
  for (int64_t d : t.getShape())
    shape.push_back(int64_t(llvm::PowerOf2Ceil(uint64_t(d))));
  return TileType::get(t.getContext(), shape, t.getElementType(),
                       t.getEncoding());
}

/// The lanes of the kernel's shape `orig` in its padded shape: an i1 tile
/// (null when nothing is padded), built at `b`.
Value validLanes(OpBuilder &b, Location loc, TileType orig) {
  if (!needsPadding(orig))
    return Value();
  TileType pad = padded(orig);
  MLIRContext *ctx = b.getContext();
  auto i1 = IntegerType::get(ctx, 1), i32 = IntegerType::get(ctx, 32);
  Value all;
  for (int64_t d = 0; d < orig.getRank(); ++d) {
    int64_t n = orig.getDimSize(d), p = pad.getDimSize(d);
    if (n == p)
      continue;
    auto line = [&](Type elt) { return TileType::get(ctx, {p}, elt, {}); };
    Value iota = IotaOp::create(b, loc, line(i32));
    Value bound = FullOp::create(b, loc, line(i32), b.getI32IntegerAttr(n));
    Value ok = CmpOp::create(b, loc, line(i1), CmpPredicate::lt, iota, bound);
    if (orig.getRank() == 2) {
      SmallVector<int64_t> unit = {1, 1};
      unit[d] = p;
      ok = ExpandDimsOp::create(b, loc, TileType::get(ctx, unit, i1, {}), ok,
                                uint32_t(1 - d));
      ok = BroadcastOp::create(b, loc, pad.clone(i1), ok);
    }
    all = all ? Value(AndOp::create(b, loc, TypeRange{pad.clone(i1)},
                                    ValueRange{all, ok}))
              : ok;
  }
  return all;
}

/// `mask && lanes` (either may be null).
Value andMask(OpBuilder &b, Location loc, Value mask, Value lanes) {
  if (!mask || !lanes)
    return mask ? mask : lanes;
  return AndOp::create(b, loc, TypeRange{lanes.getType()},
                       ValueRange{mask, lanes});
}

TypedAttr zeroOf(OpBuilder &b, Type elt) {
  if (isa<FloatType>(elt))
    return b.getFloatAttr(elt, 0.0);
  return b.getIntegerAttr(elt, 0);
}

TypedAttr identityOf(OpBuilder &b, ReduceKind kind, Type elt) {
  if (kind == ReduceKind::Sum)
    return zeroOf(b, elt);
  bool max = kind == ReduceKind::Max;
  if (auto f = dyn_cast<FloatType>(elt))
    return b.getFloatAttr(
        elt, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/max));
  unsigned w = elt.getIntOrFloatBitWidth();
  return b.getIntegerAttr(elt, max ? APInt::getSignedMinValue(w)
                                   : APInt::getSignedMaxValue(w));
}

struct PadShapesPass
    : public mlir::tile::impl::TilePadShapesBase<PadShapesPass> {
  /// Values whose padding lanes are known to be zero (padded loads).
  DenseSet<Value> zeroPadded;

  /// A padded load's value, or one that moves its lanes (expand_dims,
  /// broadcast, trans) or converts them (cast): zero in the padding.
  bool isZeroPadded(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (zeroPadded.contains(v))
        return true;
      if (!isa<ExpandDimsOp, BroadcastOp, TransOp, CastOp>(def))
        return false;
      v = def->getOperand(0);
    }
    return false;
  }

  /// `where(lanes of orig, v, id)` at `op` (v's padded lanes hold `id`).
  Value fill(OpBuilder &b, Operation *op, Value v, TileType orig,
             TypedAttr id) {
    Location loc = op->getLoc();
    TileType pad = padded(orig);
    Value lanes = validLanes(b, loc, orig);
    Value idTile = FullOp::create(b, loc, pad, id);
    return WhereOp::create(b, loc, TypeRange{pad},
                           ValueRange{lanes, v, idTile});
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool any = false;
    module.walk([&](Operation *op) {
      any = any || llvm::any_of(op->getResultTypes(), needsPadding);
    });
    if (!any)
      return;
    // Masks and fills first, with the original shapes at hand; new ops
    // are built with padded types, the rest retyped below.
    // The kernel's shapes, before any op is rebuilt with padded types.
    SmallVector<Operation *> ops;
    DenseMap<Operation *, SmallVector<Type>> before;
    module.walk([&](Operation *op) {
      ops.push_back(op);
      before[op] = SmallVector<Type>(op->getOperandTypes());
    });
    for (Operation *op : ops) {
      auto orig = [&](unsigned i) { return cast<TileType>(before[op][i]); };
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto ld = dyn_cast<LoadOp>(op)) {
        auto t = cast<TileType>(ld.getType());
        Value lanes = validLanes(b, loc, t);
        if (!lanes)
          continue;
        Value other = ld.getOther();
        if (!other)
          other = FullOp::create(b, loc, padded(t), zeroOf(b, t.getElementType()));
        auto nl = LoadOp::create(b, loc, padded(t), ld.getPtr(),
                                 andMask(b, loc, ld.getMask(), lanes), other);
        nl->setDiscardableAttrs(ld->getDiscardableAttrDictionary());
        ld.replaceAllUsesWith(nl.getResult());
        ld.erase();
        // Zero in the padding only where `other` is (a full zero).
        if (auto f = other.getDefiningOp<FullOp>())
          if (auto a = dyn_cast<FloatAttr>(f.getValue()); a && a.getValue().isZero())
            zeroPadded.insert(nl.getResult());
        if (auto f = other.getDefiningOp<FullOp>())
          if (auto a = dyn_cast<IntegerAttr>(f.getValue()); a && a.getValue().isZero())
            zeroPadded.insert(nl.getResult());
      } else if (auto st = dyn_cast<StoreOp>(op)) {
        Value lanes = validLanes(b, loc, orig(1));
        if (lanes)
          st.getMaskMutable().assign(andMask(b, loc, st.getMask(), lanes));
      } else if (auto at = dyn_cast<AtomicAddOp>(op)) {
        Value lanes = validLanes(b, loc, orig(1));
        if (lanes)
          at.getMaskMutable().assign(andMask(b, loc, at.getMask(), lanes));
      } else if (auto r = dyn_cast<ReduceOp>(op)) {
        TileType t = orig(0);
        int64_t axis = r.getAxis();
        if (llvm::isPowerOf2_64(uint64_t(t.getDimSize(axis))))
          continue; // padding lanes along other dims stay lane-wise
        if (r.getKind() == ReduceKind::Sum && isZeroPadded(r.getSrc()))
          continue; // a padded load's zeros are the sum's identity
        r.getSrcMutable().assign(fill(b, op, r.getSrc(), t,
                                      identityOf(b, r.getKind(), t.getElementType())));
      } else if (auto d = dyn_cast<DotOp>(op)) {
        TileType ta = orig(0), tb = orig(1);
        // The used extents, for a lowering that can skip the rest.
        if (int64_t n = tb.getDimSize(1); !llvm::isPowerOf2_64(uint64_t(n)))
          d.setNUsed(uint64_t(n));
        int64_t k = ta.getDimSize(1);
        if (llvm::isPowerOf2_64(uint64_t(k)))
          continue; // only a padded K mixes lanes
        d.setKUsed(uint64_t(k));
        if (!isZeroPadded(d.getA()))
          d.getAMutable().assign(fill(b, op, d.getA(), ta, zeroOf(b, ta.getElementType())));
        if (!isZeroPadded(d.getB()))
          d.getBMutable().assign(fill(b, op, d.getB(), tb, zeroOf(b, tb.getElementType())));
      }
    }
    // Every tile value of a non-power-of-two shape takes its padded type.
    auto retype = [](Value v) {
      if (needsPadding(v.getType()))
        v.setType(padded(cast<TileType>(v.getType())));
    };
    module.walk([&](Operation *op) {
      for (Value r : op->getResults())
        retype(r);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument a : block.getArguments())
            retype(a);
    });
    // Functions with tile arguments or results (helpers, tests) follow.
    module.walk([&](func::FuncOp fn) {
      if (fn.isExternal())
        return;
      SmallVector<Type> results(fn.getResultTypes());
      for (Type &t : results)
        if (needsPadding(t))
          t = padded(cast<TileType>(t));
      fn.setType(FunctionType::get(
          fn.getContext(), fn.front().getArgumentTypes(), results));
    });
  }
};

} // namespace
