//===- TmaStores.cpp - stores of whole rows as TMA bulk stores -----------===//
//
// With tma_store = true (the default), a tile.store outside loops (or once
// per program in the loop over programs) of a 2-D f16/bf16 box along its
// rows, masked by `row < bound` like the loads (TmaBox.h), becomes
// `if (0 <= row0 && row0 + rows <= bound) tile.tma_store else the store`:
// the threads write the tile into a buffer of its own and a bulk copy
// writes the whole box (docs/dialect.md). tile-tma-loads picks the stores
// where that paid on H100 (see TmaLoads.cpp).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::tma {

/// A store outside loops (in the kernel's body, or in the body of the
/// loop over programs of a persistent kernel) of a 2-D f16/bf16 box along
/// its rows, masked by `row < bound`. Its first row need not be provably
/// non-negative: the rewrite checks the whole box at run time.
std::optional<Match> matchStore(StoreOp st, const AxisAnalysis &axes) {
  auto type = cast<TileType>(st.getValue().getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()) ||
      !(isa<func::FuncOp>(st->getParentOp()) || programLoopOf(st)))
    return std::nullopt;
  std::optional<Match> m = matchBox(nullptr, st.getPtr(), st.getMask(), Value(),
                                    type, axes, /*needNonNegativeRows=*/false);
  if (!m || m->inner != 1)
    return std::nullopt;
  return m;
}

/// `if (0 <= y0 && y0 + rows <= bound) tma_store else store`: the copy
/// writes whole boxes, so a box the mask cuts keeps the masked store.
LogicalResult rewriteStore(StoreOp st, Match mt, int64_t slot) {
  Location loc = st.getLoc();
  OpBuilder b(st);
  IRMapping none;
  FailureOr<BoxOrigin> origin = boxOrigin(b, nullptr, mt, none);
  if (failed(origin))
    return failure();
  auto type = cast<TileType>(st.getValue().getType());
  auto c32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value y0 = origin->y0;
  Value whole = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, y0, c32(0)),
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sle,
          arith::AddIOp::create(b, loc, y0, c32(type.getDimSize(0))), mt.bound));
  auto ifOp = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  TmaStoreOp::create(b, loc, origin->arg,
                     arith::AddIOp::create(b, loc, origin->rowBase, y0),
                     st.getValue(), origin->col, b.getI64IntegerAttr(slot),
                     b.getI64IntegerAttr(mt.inner),
                     b.getI64IntegerAttr(mt.stride), strideArgsAttr(b, mt),
                     rowElemsAttr(b, mt));
  st->moveBefore(ifOp.elseBlock()->getTerminator());
  return success();
}

} // namespace mlir::tile::tma
