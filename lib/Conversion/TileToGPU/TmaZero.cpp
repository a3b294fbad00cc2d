//===- TmaZero.cpp - a TMA box's masked-off rows or columns as zeros -------===//
//
// A copy lands a whole box; a tile.tma_wait keeps its first `valid` rows
// (or, with clip_columns, the first `valid` elements of every row), as the
// masked load it replaced read zeros past them. Only the box that crosses
// the bound does any work: the program's warps store zeros over the rest,
// 16 bytes per store (byte- or half-wide stores in the one chunk per row a
// column bound cuts), then a proxy fence (wgmma and later copies read
// through the async proxy) and a barrier of the program's warps.
//
// A stage holds the box in slabs of 128-byte rows (`rows * 128` bytes
// each, 1024-byte aligned); 128-byte swizzling puts the 16-byte chunk c of
// row r at chunk c ^ (r % 8) of that row.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/Tma.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// `if (valid < limit) { body(max(valid, 0), tid); fence; barrier }`.
void ifPartial(OpBuilder &b, Location loc, KernelInfo &ki, Value valid,
               int64_t limit, function_ref<void(Value, Value)> body) {
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  auto partial = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, valid, c32(limit)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(partial.thenBlock()->getTerminator());
  Value tid = arith::AddIOp::create(
      b, loc, ki.lane, arith::MulIOp::create(b, loc, ki.warp, c32(32)));
  body(arith::MaxSIOp::create(b, loc, valid, c32(0)), tid);
  ptx(b, loc, Type(), ValueRange{}, "fence.proxy.async.shared::cta;", "", true);
  ctaBarrier(b, loc, ki);
}

/// `for i in [from, to) step step` over i32 values; body(i).
void forI32(OpBuilder &b, Location loc, Value from, Value to, int64_t step,
            function_ref<void(Value)> body) {
  auto idx = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto loop = scf::ForOp::create(b, loc, idx(from), idx(to),
                                 idx(i32Const(b, loc, step)));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(arith::IndexCastOp::create(b, loc, b.getI32Type(), loop.getInductionVar()));
}

void zeroChunk(OpBuilder &b, Location loc, Value at) {
  ptx(b, loc, Type(), ValueRange{at, i32Const(b, loc, 0)},
      "st.shared.v4.b32 [$0], {$1, $1, $1, $1};", "r,r", true);
}
} // namespace

void lowering::zeroRowsFrom(OpBuilder &b, Location loc, KernelInfo &ki,
                            Value buffer, Value valid, TileType tile,
                            int64_t innerDim) {
  int64_t rows = tile.getDimSize(1 - innerDim);
  int64_t slabs = tile.getDimSize(innerDim) / slabElemsOf(tile.getElementType());
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  ifPartial(b, loc, ki, valid, rows, [&](Value from, Value tid) {
    // Thread t zeroes chunk t % 8 of rows from + t / 8, + 4 * warps, ...:
    // a whole row, whatever its swizzle.
    Value first = arith::AddIOp::create(b, loc, from,
                                        arith::ShRUIOp::create(b, loc, tid, c32(3)));
    Value chunk = arith::MulIOp::create(
        b, loc, arith::AndIOp::create(b, loc, tid, c32(7)), c32(16));
    forI32(b, loc, first, c32(rows), 4 * ki.warps, [&](Value row) {
      Value at = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, buffer, chunk),
          arith::MulIOp::create(b, loc, row, c32(128)));
      for (int64_t s = 0; s < slabs; ++s)
        zeroChunk(b, loc, arith::AddIOp::create(b, loc, at, c32(s * rows * 128)));
    });
  });
}

void lowering::zeroColumnsFrom(OpBuilder &b, Location loc, KernelInfo &ki,
                               Value buffer, Value valid, TileType tile,
                               int64_t innerDim) {
  int64_t rows = tile.getDimSize(1 - innerDim), cols = tile.getDimSize(innerDim);
  int64_t bytes = byteSize(tile.getElementType()), perChunk = 16 / bytes;
  int64_t chunksPerRow = cols / perChunk;
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  ifPartial(b, loc, ki, valid, cols, [&](Value from, Value tid) {
    // Chunks qf .. chunksPerRow - 1 of every row: n per row, item i is
    // row i / n, chunk qf + i % n (a run-time division, in this box only).
    Value qf = arith::DivUIOp::create(b, loc, from, c32(perChunk));
    Value n = arith::SubIOp::create(b, loc, c32(chunksPerRow), qf);
    Value items = arith::MulIOp::create(b, loc, n, c32(rows));
    forI32(b, loc, tid, items, 32 * ki.warps, [&](Value i) {
      Value row = arith::DivUIOp::create(b, loc, i, n);
      Value q = arith::AddIOp::create(b, loc, qf, arith::RemUIOp::create(b, loc, i, n));
      Value slab = arith::ShRUIOp::create(b, loc, q, c32(3));
      Value swz = arith::XOrIOp::create(b, loc, arith::AndIOp::create(b, loc, q, c32(7)),
                                        arith::AndIOp::create(b, loc, row, c32(7)));
      Value at = arith::AddIOp::create(
          b, loc, buffer,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, slab, c32(rows * 128)),
              arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, c32(128)),
                                    arith::MulIOp::create(b, loc, swz, c32(16)))));
      Value firstElem = arith::MulIOp::create(b, loc, q, c32(perChunk));
      auto whole = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, firstElem, from),
          /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(whole.thenBlock()->getTerminator());
      zeroChunk(b, loc, at);
      // The chunk the bound cuts: its elements from the bound on.
      b.setInsertionPoint(whole.elseBlock()->getTerminator());
      Value zero16 = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(0));
      std::string st = bytes == 1 ? "@p st.shared.b8 [$1], $2;" : "@p st.shared.b16 [$1], $2;";
      for (int64_t e = 0; e < perChunk; ++e) {
        Value past = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge,
            arith::AddIOp::create(b, loc, firstElem, c32(e)), from);
        ptxIf(b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), past),
              ValueRange{arith::AddIOp::create(b, loc, at, c32(e * bytes)), zero16},
              st, "r,h");
      }
    });
  });
}
