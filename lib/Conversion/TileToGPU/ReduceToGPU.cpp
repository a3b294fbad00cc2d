//===- ReduceToGPU.cpp - tile.reduce along one axis -----------------------===//
//
// A reduction combines the registers a thread holds along the axis, then
// across the lanes whose bits run along it (gpu.shuffle xor, one round per
// lane bit), then across the warps along it through shared memory (each
// warp group writes its partial results, every thread combines the groups'
// values for the elements it holds in the result's layout).
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
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
      Value b1 = bitOf(rw, loc, k.warp, bit);
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

void lowering::populateReducePatterns(TypeConverter &tc, RewritePatternSet &p,
                                      LoweringState &s) {
  p.add<ReduceLowering>(tc, p.getContext(), s);
}
