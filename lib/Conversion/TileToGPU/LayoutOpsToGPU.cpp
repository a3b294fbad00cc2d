//===- LayoutOpsToGPU.cpp - moving tile elements between registers --------===//
//
// expand_dims and trans only relabel coordinates (same registers);
// broadcast and register-compatible conversions pick registers
// (vector.shuffle); conversions that trade register bases for lane bases
// inside warps exchange registers with gpu.shuffle xor (one round per
// traded pair), then pick registers; other conversions go through shared
// memory (vector accesses, the contiguous dimension chosen for the fewest,
// rows padded by 16 bytes against bank conflicts); reductions combine in
// registers, then across lanes with gpu.shuffle xor, then across warps
// through shared memory.
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

/// Linear index of register `reg` over `shape`, row-major with dimension
/// `minor` moved last (the contiguous one; default the last) and rows
/// `rowStride` elements apart (default dense), as an index.
Value linearIndex(OpBuilder &b, Location loc, ArrayRef<Value> threadPart,
                  LayoutAttr l, int64_t reg, ArrayRef<int64_t> shape,
                  int64_t minor = -1, int64_t rowStride = 0) {
  unsigned last = minor >= 0 ? unsigned(minor) : shape.size() - 1;
  Value major = i32Const(b, loc, 0);
  for (unsigned d = 0; d < shape.size(); ++d)
    if (d != last)
      major = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, major, i32Const(b, loc, shape[d])),
          elementCoord(b, loc, threadPart[d], l, reg, d));
  Value idx = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, major,
                            i32Const(b, loc, rowStride ? rowStride : shape[last])),
      elementCoord(b, loc, threadPart[last], l, reg, last));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), idx);
}

SmallVector<Value> threadParts(OpBuilder &b, Location loc, KernelInfo &k,
                               LayoutAttr l) {
  SmallVector<Value> out;
  for (unsigned d = 0; d < l.getRank(); ++d)
    out.push_back(threadCoord(b, loc, k, l, d));
  return out;
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

Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x, Value y) {
  bool f = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::Max:
    return f ? Value(arith::MaximumFOp::create(b, loc, x, y))
             : Value(arith::MaxSIOp::create(b, loc, x, y));
  case ReduceKind::Min:
    return f ? Value(arith::MinimumFOp::create(b, loc, x, y))
             : Value(arith::MinSIOp::create(b, loc, x, y));
  case ReduceKind::Sum:
    return f ? Value(arith::AddFOp::create(b, loc, x, y))
             : Value(arith::AddIOp::create(b, loc, x, y));
  }
  llvm_unreachable("reduce kind");
}

struct ReduceLowering : TilePattern<ReduceOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LayoutAttr src = layoutOf(op.getSrc()), dst = layoutOf(op.getType());
    unsigned axis = op.getAxis(), rank = src.getRank();
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    Type elt = vt.getElementType();
    // Work in a 32-bit type: shuffles move 32-bit registers.
    Type work = elt;
    if (isa<FloatType>(elt) && elt.getIntOrFloatBitWidth() < 32)
      work = rw.getF32Type();
    else if (isa<IntegerType>(elt) && elt.getIntOrFloatBitWidth() < 32)
      work = rw.getI32Type();
    if (work.getIntOrFloatBitWidth() != 32)
      return op.emitError() << "reductions of " << elt << " are not supported";
    auto widen = [&](Value v) -> Value {
      if (v.getType() == work)
        return v;
      if (isa<FloatType>(work))
        return arith::ExtFOp::create(rw, loc, work, v);
      return arith::ExtSIOp::create(rw, loc, work, v);
    };
    auto narrow = [&](Value v) -> Value {
      if (elt == work)
        return v;
      if (isa<FloatType>(work))
        return arith::TruncFOp::create(rw, loc, elt, v);
      return arith::TruncIOp::create(rw, loc, elt, v);
    };

    // 1. In registers: source registers that differ only along `axis`.
    llvm::DenseMap<int64_t, int64_t> dstByKey;
    auto key = [](ArrayRef<int64_t> c) {
      int64_t k = 0;
      for (int64_t v : c)
        k = k * 65536 + v;
      return k;
    };
    for (int64_t r = 0; r < dst.getNumRegs(); ++r)
      dstByKey[key(regCoords(dst, r))] = r;
    SmallVector<SmallVector<Value>> parts(dst.getNumRegs());
    SmallVector<Value> vals = unpack(rw, loc, a.getSrc());
    for (int64_t r = 0; r < src.getNumRegs(); ++r) {
      SmallVector<int64_t> c = regCoords(src, r);
      c.erase(c.begin() + axis);
      auto it = dstByKey.find(key(c));
      if (it == dstByKey.end())
        return op.emitError("reduce: result layout is not the slice of the "
                            "operand layout");
      parts[it->second].push_back(widen(vals[r]));
    }
    // Sums add in register order (their rounding stays that of a loop);
    // max and min, exact in any order, combine as a balanced tree: log2(n)
    // dependent steps instead of n - 1, which ptxas does not reassociate.
    SmallVector<Value> acc;
    for (SmallVector<Value> &p : parts) {
      if (op.getKind() == ReduceKind::Sum) {
        Value v = p.front();
        for (Value x : ArrayRef(p).drop_front())
          v = combine(rw, loc, op.getKind(), v, x);
        acc.push_back(v);
        continue;
      }
      while (p.size() > 1) {
        SmallVector<Value> next;
        for (size_t i = 0; i + 1 < p.size(); i += 2)
          next.push_back(combine(rw, loc, op.getKind(), p[i], p[i + 1]));
        if (p.size() % 2)
          next.push_back(p.back());
        p = std::move(next);
      }
      acc.push_back(p.front());
    }
    // 2. Across lanes holding other positions along `axis`.
    for (unsigned i = 0; i < src.getNumLaneBits(); ++i) {
      if (!src.getLanes()[i * rank + axis])
        continue;
      Value offset = i32Const(rw, loc, 1 << i), width = i32Const(rw, loc, 32);
      for (Value &v : acc) {
        Value other = gpu::ShuffleOp::create(rw, loc, v, offset, width,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        v = combine(rw, loc, op.getKind(), v, other);
      }
    }
    // 3. Across warps, through shared memory.
    SmallVector<unsigned> warpBits;
    for (unsigned i = 0; i < src.getNumWarpBits(); ++i)
      if (src.getWarps()[i * rank + axis])
        warpBits.push_back(i);
    if (!warpBits.empty())
      crossWarp(rw, loc, op, dst, warpBits, acc, work);

    SmallVector<Value> out;
    for (Value v : acc)
      out.push_back(narrow(v));
    rw.replaceOp(op, pack(rw, loc, vt, out));
    return success();
  }

  /// Each warp group writes its partials at [group][result element]; then
  /// every thread combines the groups for its elements.
  void crossWarp(ConversionPatternRewriter &rw, Location loc, ReduceOp op,
                 LayoutAttr dst, ArrayRef<unsigned> warpBits,
                 SmallVector<Value> &acc, Type work) const {
    KernelInfo &k = kernel(op);
    auto tt = cast<TileType>(op.getType());
    int64_t n = tt.getNumElements(), groups = int64_t(1) << warpBits.size();
    Value buf = sharedBuffer(rw, loc, k, work, n * groups);
    // group = the warp's bits along the axis, compacted.
    Value group = i32Const(rw, loc, 0);
    for (auto [j, bit] : llvm::enumerate(warpBits)) {
      Value b1 = arith::AndIOp::create(
          rw, loc, arith::ShRUIOp::create(rw, loc, k.warp, i32Const(rw, loc, bit)),
          i32Const(rw, loc, 1));
      group = arith::OrIOp::create(
          rw, loc, group,
          arith::ShLIOp::create(rw, loc, b1, i32Const(rw, loc, j)));
    }
    Value groupBase = arith::IndexCastOp::create(
        rw, loc, rw.getIndexType(),
        arith::MulIOp::create(rw, loc, group, i32Const(rw, loc, n)));
    SmallVector<Value> part = threadParts(rw, loc, k, dst);
    SmallVector<Value> idx;
    for (int64_t r = 0; r < dst.getNumRegs(); ++r)
      idx.push_back(linearIndex(rw, loc, part, dst, r, tt.getShape()));
    ctaBarrier(rw, loc, k);
    for (auto [r, v] : llvm::enumerate(acc))
      memref::StoreOp::create(rw, loc, v, buf,
                              ValueRange{arith::AddIOp::create(rw, loc, groupBase, idx[r])});
    ctaBarrier(rw, loc, k);
    for (auto [r, v] : llvm::enumerate(acc)) {
      Value total;
      for (int64_t g = 0; g < groups; ++g) {
        Value at = arith::AddIOp::create(
            rw, loc, idx[r], arith::ConstantIndexOp::create(rw, loc, g * n));
        Value x = memref::LoadOp::create(rw, loc, buf, ValueRange{at});
        total = total ? combine(rw, loc, op.getKind(), total, x) : x;
      }
      v = total;
    }
  }
};
} // namespace

void lowering::populateLayoutOpPatterns(TypeConverter &tc, RewritePatternSet &p,
                                        LoweringState &s) {
  p.add<RelabelLowering<ExpandDimsOp>, RelabelLowering<TransOp>,
        BroadcastLowering, ConvertLayoutLowering, ReduceLowering>(
      tc, p.getContext(), s);
}
