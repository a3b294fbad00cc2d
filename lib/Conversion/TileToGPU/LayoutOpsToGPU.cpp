//===- LayoutOpsToGPU.cpp - moving tile elements between registers --------===//
//
// expand_dims and trans only relabel coordinates (same registers);
// broadcast and register-compatible conversions pick registers
// (vector.shuffle); conversions that trade register bases for lane bases
// inside warps exchange registers with gpu.shuffle xor (one round per
// traded pair), then pick registers; other conversions go through shared
// memory (vector accesses, the contiguous dimension chosen for the fewest,
// rows padded by 16 bytes against bank conflicts). Reductions:
// ReduceToGPU.cpp.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {

/// Register picks: result register i is source register picks[i].
Value pickRegisters(OpBuilder &b, Location loc, Value src,
                    ArrayRef<int64_t> picks) {
  return vector::ShuffleOp::create(b, loc, src, src, picks);
}

template <typename Op>
struct RelabelLowering : TilePattern<Op> {
  using TilePattern<Op>::TilePattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor a,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, a.getSrc());
    return success();
  }
};

struct BroadcastLowering : TilePattern<BroadcastOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    LayoutAttr src = layoutOf(op.getSrc()), dst = layoutOf(op.getType());
    ArrayRef<int64_t> srcShape = cast<TileType>(op.getSrc().getType()).getShape();
    if (!sameThreadMapping(src, broadcastSourceLayout(dst, srcShape)))
      return op.emitError("broadcast operand layout does not match its "
                          "result; run tile-assign-layouts");
    llvm::DenseMap<int64_t, int64_t> byKey;
    auto key = [&](SmallVector<int64_t> c) {
      int64_t k = 0;
      for (unsigned d = 0; d < c.size(); ++d)
        k = k * 65536 + (srcShape[d] == 1 ? 0 : c[d]);
      return k;
    };
    for (int64_t r = 0; r < src.getNumRegs(); ++r)
      byKey.try_emplace(key(regCoords(src, r)), r);
    SmallVector<int64_t> picks;
    for (int64_t r = 0; r < dst.getNumRegs(); ++r) {
      auto it = byKey.find(key(regCoords(dst, r)));
      if (it == byKey.end())
        return op.emitError("broadcast: element not held by this thread");
      picks.push_back(it->second);
    }
    rw.replaceOp(op, pickRegisters(rw, op.getLoc(), a.getSrc(), picks));
    return success();
  }
};

/// Registers of `vals` (elements of type `elt`) exchanged across lanes:
/// for each (register bit i, lane bit j) of `swaps`, the thread whose lane
/// bit j is b keeps, of each register pair differing in bit i, the one whose
/// bit i is b and takes the other from lane ^ (1 << j) (one shuffle per
/// pair). 32-bit elements travel as they are, 16-bit ones in pairs (when
/// register bit 0 takes no part); null otherwise (the caller goes through
/// shared memory).
std::optional<SmallVector<Value>>
exchangeAcrossLanes(OpBuilder &b, Location loc, KernelInfo &k,
                    ArrayRef<Value> vals, Type elt,
                    ArrayRef<std::pair<unsigned, unsigned>> swaps) {
  unsigned bits = elt.getIntOrFloatBitWidth();
  unsigned packBits = bits == 16 ? 1 : 0;
  if ((bits != 16 && bits != 32) ||
      llvm::any_of(swaps, [&](auto s) { return s.first < packBits; }))
    return std::nullopt;
  int64_t numWords = int64_t(vals.size()) >> packBits;
  SmallVector<Value> words = toWords(b, loc, vals, elt, numWords);
  Value width = i32Const(b, loc, 32);
  for (auto [reg, lane] : swaps) {
    unsigned bit = reg - packBits;
    Value laneBit = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, k.lane, i32Const(b, loc, lane)),
        i32Const(b, loc, 1));
    Value hi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, laneBit,
                                     i32Const(b, loc, 0));
    Value offset = i32Const(b, loc, 1 << lane);
    for (size_t w0 = 0; w0 < words.size(); ++w0) {
      if (w0 & (size_t(1) << bit))
        continue;
      size_t w1 = w0 | (size_t(1) << bit);
      Value send = arith::SelectOp::create(b, loc, hi, words[w0], words[w1]);
      Value recv = gpu::ShuffleOp::create(b, loc, send, offset, width,
                                          gpu::ShuffleMode::XOR)
                       .getShuffleResult();
      Value keep0 = arith::SelectOp::create(b, loc, hi, recv, words[w0]);
      Value keep1 = arith::SelectOp::create(b, loc, hi, words[w1], recv);
      words[w0] = keep0;
      words[w1] = keep1;
    }
  }
  return fromWords(b, loc, words, elt, int64_t(vals.size()));
}

/// Shared memory stores i1 as i8.
Type storageType(OpBuilder &b, Type elt) {
  return elt.isInteger(1) ? b.getI8Type() : elt;
}

struct ConvertLayoutLowering : TilePattern<ConvertLayoutOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LayoutAttr src = layoutOf(op.getSrc()), dst = layoutOf(op.getType());
    if (auto perm = registerPermutation(src, dst)) {
      rw.replaceOp(op, pickRegisters(rw, loc, a.getSrc(), *perm));
      return success();
    }
    auto tt = cast<TileType>(op.getType());
    auto vt = cast<VectorType>(getTypeConverter()->convertType(tt));
    Type elt = vt.getElementType();
    KernelInfo &k = kernel(op);
    // Inside warps: lanes exchange registers, then registers move.
    LayoutAttr mid;
    if (auto swaps = laneSwaps(src, dst, mid)) {
      std::optional<SmallVector<int64_t>> perm = registerPermutation(mid, dst);
      std::optional<SmallVector<Value>> moved;
      if (perm)
        moved = exchangeAcrossLanes(rw, loc, k, unpack(rw, loc, a.getSrc()),
                                    elt, *swaps);
      if (moved) {
        Value v = pack(rw, loc, vt, *moved);
        rw.replaceOp(op, pickRegisters(rw, loc, v, *perm));
        return success();
      }
    }
    if (auto moved = accumulatorToFp8A(rw, loc, k, unpack(rw, loc, a.getSrc()),
                                       elt, src, dst)) {
      rw.replaceOp(op, pack(rw, loc, vt, *moved));
      return success();
    }
    // Through shared memory: every thread writes what it holds, reads what
    // it needs. Registers that are consecutive in the buffer move as one
    // vector access (the buffer starts 16-byte aligned unless programs of a
    // CTA share the scratch area at a run-time stride).
    Type st = storageType(rw, elt);
    bool vectors = st == elt && k.members == 1 && k.persistentBytes % 16 == 0;
    int64_t bytes = st.getIntOrFloatBitWidth() / 8;
    // The buffer's contiguous dimension: the one that takes the fewest
    // accesses on both sides (a transposing conversion stores whole
    // vectors column-major rather than single elements row-major).
    unsigned rank = tt.getRank();
    int64_t minor = rank - 1, wSrc = 1, wDst = 1, best = -1;
    for (unsigned d = rank; vectors && d-- > 0;) {
      int64_t ws = sharedVectorWidth(src, bytes, d);
      int64_t wd = sharedVectorWidth(dst, bytes, d);
      int64_t accesses = src.getNumRegs() / ws + dst.getNumRegs() / wd;
      if (best < 0 || accesses < best)
        std::tie(best, minor, wSrc, wDst) = std::make_tuple(accesses, d, ws, wd);
    }
    // Rows of 64 bytes or more get 16 bytes of padding: 16-byte pieces of
    // 8 consecutive rows (an mma fragment's 4 lanes per row) or a column
    // fall in different banks, and each register's address stays the
    // thread's plus a constant.
    int64_t rowElems = tt.getShape()[minor], rowStride = rowElems;
    if (rank > 1 && rowElems * bytes >= 64 && (rowElems * bytes) % 16 == 0)
      rowStride += 16 / bytes;
    Value buf = sharedBuffer(rw, loc, k, st,
                             tt.getNumElements() / rowElems * rowStride);
    ctaBarrier(rw, loc, k);
    SmallVector<Value> srcPart = threadParts(rw, loc, k, src);
    SmallVector<Value> vals = unpack(rw, loc, a.getSrc());
    for (int64_t r = 0; r < src.getNumRegs(); r += wSrc) {
      Value at = linearIndex(rw, loc, srcPart, src, r, tt.getShape(), minor,
                             rowStride);
      if (wSrc > 1) {
        Value v = vector::FromElementsOp::create(
            rw, loc, VectorType::get({wSrc}, st),
            ArrayRef<Value>(vals).slice(r, wSrc));
        vector::StoreOp::create(rw, loc, v, buf, at, /*nontemporal=*/false,
                                rw.getI64IntegerAttr(wSrc * bytes));
        continue;
      }
      Value v = vals[r];
      if (st != elt)
        v = arith::ExtUIOp::create(rw, loc, st, v);
      memref::StoreOp::create(rw, loc, v, buf, at);
    }
    ctaBarrier(rw, loc, k);
    SmallVector<Value> dstPart = threadParts(rw, loc, k, dst);
    SmallVector<Value> out;
    for (int64_t r = 0; r < dst.getNumRegs(); r += wDst) {
      Value at = linearIndex(rw, loc, dstPart, dst, r, tt.getShape(), minor,
                             rowStride);
      if (wDst > 1) {
        Value v = vector::LoadOp::create(rw, loc, VectorType::get({wDst}, st),
                                         buf, at, /*nontemporal=*/false,
                                         rw.getI64IntegerAttr(wDst * bytes));
        for (int64_t j = 0; j < wDst; ++j)
          out.push_back(vector::ExtractOp::create(rw, loc, v, j));
        continue;
      }
      Value v = memref::LoadOp::create(rw, loc, buf, at);
      if (st != elt)
        v = arith::TruncIOp::create(rw, loc, elt, v);
      out.push_back(v);
    }
    rw.replaceOp(op, pack(rw, loc, vt, out));
    return success();
  }
};

} // namespace

void lowering::populateLayoutOpPatterns(TypeConverter &tc, RewritePatternSet &p,
                                        LoweringState &s) {
  p.add<RelabelLowering<ExpandDimsOp>, RelabelLowering<TransOp>,
        BroadcastLowering, ConvertLayoutLowering>(
      tc, p.getContext(), s);
}
