//===- TmaStoreToGPU.cpp - tile.tma_store as an sm_90a bulk tensor copy ---===//
//
// A tile.tma_store's slot is one buffer, no barriers (tile-tma-loads makes
// them for stores of whole rows): the threads write the tile into it with
// the same swizzle, fence it for the async proxy and meet at a barrier;
// one thread then starts a bulk copy to global memory per slab and commits
// it as a bulk group, and waits for the group's reads before the buffer is
// written again (and for the copies at the kernel's exit). Where each
// warpgroup holds its own rows, each does this on its own, with a named
// barrier of its 128 threads and a box of its rows.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/Tma.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

int64_t lowering::storeGroups(LayoutAttr l, int64_t rows, int64_t warps) {
  if (l.getRank() != 2 || warps % 4 || warps < 8)
    return 1;
  int64_t groups = warps / 4, per = rows / groups;
  if (rows % groups || per % 8)
    return 1;
  auto within = [&](ArrayRef<int64_t> bases, size_t from, size_t to) {
    for (size_t i = from; i < to && 2 * i < bases.size(); ++i)
      if (bases[2 * i] >= per)
        return false;
    return true;
  };
  ArrayRef<int64_t> w = l.getWarps();
  if (!within(l.getLanes(), 0, l.getNumLaneBits()) || !within(w, 0, 2))
    return 1;
  for (int64_t r = 1; r < l.getNumRegs(); r *= 2)
    if (regCoords(l, r)[0] >= per)
      return 1;
  for (size_t i = 2; 2 * i < w.size(); ++i)
    if (w[2 * i] != per << (i - 2) || w[2 * i + 1] != 0)
      return 1;
  return groups;
}

namespace {
/// Whether register pairs (2i, 2i + 1) of `l` hold columns (c, c + 1) of a
/// row with c even, so that 16-bit elements go to shared memory in words.
bool pairsAlongRows(LayoutAttr l) {
  if (l.getRank() != 2 || l.getNumRegs() % 2 ||
      regCoords(l, 1) != SmallVector<int64_t>{0, 1})
    return false;
  auto evenCols = [](ArrayRef<int64_t> bases) {
    for (size_t i = 1; i < bases.size(); i += 2)
      if (bases[i] & 1)
        return false;
    return true;
  };
  for (int64_t r = 2; r < l.getNumRegs(); r *= 2)
    if (regCoords(l, r)[1] & 1)
      return false;
  return evenCols(l.getLanes()) && evenCols(l.getWarps());
}

struct TmaStoreLowering : TilePattern<TmaStoreOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(TmaStoreOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    FailureOr<TmaSlot *> found = slotOf(op, "tma_store", op.getSlot(), state, ki);
    if (failed(found))
      return failure();
    if (ki.members > 1)
      return op.emitError("tma_store in a CTA of several programs");
    TmaSlot &slot = **found;
    auto type = cast<TileType>(op.getValue().getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    LayoutAttr l = layoutOf(op.getValue());
    auto c32 = [&](int64_t v) { return i32Const(rw, loc, v); };
    // Each group of warps (a warpgroup of the accumulator layout, or all
    // of them) copies its own rows, `per` from row `group * per`: the
    // first thread of the group issues, the group's barrier orders.
    int64_t groups = storeGroups(l, rows, ki.warps), per = rows / groups;
    Value group = c32(0), issuer = ki.isFirstThread;
    if (groups > 1) {
      group = arith::ShRUIOp::create(rw, loc, ki.warp, c32(2));
      issuer = arith::ExtUIOp::create(
          rw, loc, rw.getI32Type(),
          arith::CmpIOp::create(
              rw, loc, arith::CmpIPredicate::eq,
              arith::OrIOp::create(rw, loc, ki.lane,
                                   arith::AndIOp::create(rw, loc, ki.warp, c32(3))),
              c32(0)));
    }
    auto barrier = [&] {
      if (groups == 1)
        return ctaBarrier(rw, loc, ki);
      ptx(rw, loc, Type(),
          ValueRange{arith::AddIOp::create(rw, loc, group, c32(kStoreBarrier))},
          "bar.sync $0, 128;", "r", /*sideEffects=*/true);
    };
    // The group's previous copy from the buffer has read it (its issuer
    // waits), and the group knows.
    ptxIf(rw, loc, issuer, ValueRange{}, "@p cp.async.bulk.wait_group.read 0;", "");
    barrier();
    // Each thread writes its elements where the copy's 128-byte swizzle
    // reads them: 16-byte chunk (c / 8) % 8 of row r sits at chunk
    // ((c / 8) % 8) ^ (r % 8), each slab of 64 columns after the last.
    SmallVector<Value> vals = unpack(rw, loc, a.getValue());
    Type elt = cast<VectorType>(a.getValue().getType()).getElementType();
    Value r0 = threadCoord(rw, loc, ki, l, 0), c0 = threadCoord(rw, loc, ki, l, 1);
    bool pairs = pairsAlongRows(l);
    for (int64_t reg = 0; reg < int64_t(vals.size()); reg += pairs ? 2 : 1) {
      Value r = elementCoord(rw, loc, r0, l, reg, 0);
      Value c = elementCoord(rw, loc, c0, l, reg, 1);
      auto shr = [&](Value v, int64_t n) {
        return arith::ShRUIOp::create(rw, loc, v, c32(n));
      };
      auto band = [&](Value v, int64_t m) {
        return arith::AndIOp::create(rw, loc, v, c32(m));
      };
      Value chunk = arith::XOrIOp::create(rw, loc, band(shr(c, 3), 7), band(r, 7));
      Value at = arith::AddIOp::create(
          rw, loc, slot.buffer,
          arith::AddIOp::create(
              rw, loc,
              arith::MulIOp::create(rw, loc, shr(c, 6), c32(rows * 128)),
              arith::AddIOp::create(
                  rw, loc, arith::MulIOp::create(rw, loc, r, c32(128)),
                  arith::AddIOp::create(
                      rw, loc, arith::ShLIOp::create(rw, loc, chunk, c32(4)),
                      arith::MulIOp::create(rw, loc, band(c, 7), c32(2))))));
      if (pairs) {
        Value word = toWords(rw, loc, ArrayRef(vals).slice(reg, 2), elt, 1)[0];
        ptx(rw, loc, Type(), ValueRange{at, word}, "st.shared.b32 [$0], $1;",
            "r,r", /*sideEffects=*/true);
      } else {
        Value half = arith::BitcastOp::create(rw, loc, rw.getI16Type(), vals[reg]);
        ptx(rw, loc, Type(), ValueRange{at, half}, "st.shared.b16 [$0], $1;",
            "r,h", /*sideEffects=*/true);
      }
    }
    // Visible to the copy (the async proxy), then the group's issuer
    // copies each slab of 64 columns of its rows.
    ptx(rw, loc, Type(), ValueRange{}, "fence.proxy.async.shared::cta;", "",
        /*sideEffects=*/true);
    barrier();
    Value first = arith::MulIOp::create(rw, loc, group, c32(per));
    Value rowsAt = arith::AddIOp::create(
        rw, loc, slot.buffer, arith::MulIOp::create(rw, loc, first, c32(128)));
    SmallVector<Value> ops = {slot.map,
                              arith::AddIOp::create(rw, loc, a.getCoord(), first)};
    std::string text, cons = "l,r";
    for (int64_t s = 0; s < cols / kSlabElems; ++s) {
      ops.push_back(arith::AddIOp::create(rw, loc, rowsAt, c32(s * rows * 128)));
      size_t at = ops.size();
      std::string x = slabColumn(rw, loc, a.getCol(), s, ops);
      text += "@p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {" +
              x + ", $2}], [$" + std::to_string(at) + "];\n";
    }
    for (size_t i = 2; i < ops.size(); ++i)
      cons += ",r";
    text += "@p cp.async.bulk.commit_group;";
    ptxIf(rw, loc, issuer, ops, text, cons);
    rw.eraseOp(op);
    return success();
  }
};
} // namespace

void lowering::populateTmaStorePatterns(TypeConverter &tc, RewritePatternSet &p,
                                        LoweringState &s) {
  p.add<TmaStoreLowering>(tc, p.getContext(), s);
}
