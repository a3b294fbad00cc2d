//===- DotToGPU.cpp - tile.dot on tensor cores or FMA ---------------------===//
//
// f16/bf16: A arrives in the mma.sync m16n8k16 A-fragment layout and the
// accumulator in the C-fragment layout (tile-assign-layouts), so A and C
// stay in registers (P never leaves them between the two GEMMs of
// attention); B is staged in padded shared memory and each (k16, n8)
// fragment is read once with ldmatrix.trans, then each (16x8 fragment,
// k step) is one nvvm.mma.sync; on sm_90a the same operands go to wgmma
// instead where the layouts fit a warpgroup (WgmmaToGPU.cpp). f32: operands
// keep their default layouts, stage A and B in shared memory and chain IEEE
// fp32 FMAs in a loop over k.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
struct DotLowering : TilePattern<DotOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(DotOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Type elt = cast<TileType>(op.getA().getType()).getElementType();
    if (elt.isF16() || elt.isBF16() || isFp8(elt))
      return lowerMma(op, a, rw, elt);
    if (elt.isF32() && !op.getAllowTf32())
      return lowerFma(op, a, rw);
    return op.emitError() << "dot on " << elt << " is not supported";
  }

  LogicalResult lowerMma(DotOp op, OpAdaptor a, ConversionPatternRewriter &rw,
                         Type elt) const {
    // B in a cp.async ring's stage, maybe transposed (K of Q·Kᵀ).
    auto tr = op.getB().getDefiningOp<TransOp>();
    auto view = (tr ? tr.getSrc() : op.getB()).getDefiningOp<AsyncViewOp>();
    if (state.arch == "sm_90a" && !view)
      if (std::optional<LogicalResult> r = lowerDotToWgmma(
              op, a.getA(), a.getB(), a.getAcc(), rw, kernel(op)))
        return *r;
    Location loc = op.getLoc();
    LayoutAttr la = layoutOf(op.getA()), lb = layoutOf(op.getB()),
               lc = layoutOf(op.getAcc());
    RegIndex ia(la);
    auto tb = cast<TileType>(op.getB().getType());
    int64_t kSize = tb.getDimSize(0), nSize = tb.getDimSize(1);
    SmallVector<Value> av = unpack(rw, loc, a.getA());
    SmallVector<Value> cv = unpack(rw, loc, a.getAcc());
    KernelInfo &ki = kernel(op);

    // B goes to shared memory row-major along the dimension its registers
    // run along ([N][K + 8] when they run along K, else [K][N + 8]); the
    // 16-byte row padding puts the 8 rows an ldmatrix reads in different
    // banks. A stage of a cp.async ring (tile.async_view) already holds it
    // so, along its contiguous dimension.
    bool kMajor;
    int64_t ld;
    Value base;
    if (view) {
      if (int64_t(view.getSlot()) >= int64_t(ki.asyncSlots.size()))
        return op.emitError("dot reads an async slot without shared memory");
      const AsyncSlot &slot = ki.asyncSlots[view.getSlot()];
      kMajor = slot.innerDim == (tr ? 1 : 0);
      ld = slot.rowElems;
      base = slot.bufferOf(rw, loc, rw.getRemappedValue(view.getStage()));
    } else {
      kMajor = leadingRegsAlong(lb, 0) > 1;
      ld = (kMajor ? kSize : nSize) + 8;
      Value buf = sharedBuffer(rw, loc, ki, elt, (kMajor ? nSize : kSize) * ld);
      ctaBarrier(rw, loc, ki);
      storeTile(rw, loc, ki, buf, 0, lb, tb.getShape(), a.getB(), ld, kMajor);
      ctaBarrier(rw, loc, ki);
      base = arith::IndexCastOp::create(
          rw, loc, rw.getI32Type(),
          memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, buf));
    }
    // The row address each lane gives ldmatrix: lanes 0-7 the rows of the
    // first 8x8 matrix, lanes 8-15 those of the second (k + 8).
    Value laneOffset;
    if (kMajor) {
      Value row = arith::AndIOp::create(rw, loc, ki.lane, i32Const(rw, loc, 7));
      Value half = arith::AndIOp::create(
          rw, loc, arith::ShRUIOp::create(rw, loc, ki.lane, i32Const(rw, loc, 3)),
          i32Const(rw, loc, 1));
      laneOffset = arith::AddIOp::create(
          rw, loc, arith::MulIOp::create(rw, loc, row, i32Const(rw, loc, ld * 2)),
          arith::MulIOp::create(rw, loc, half, i32Const(rw, loc, 16)));
    } else {
      Value row = arith::AndIOp::create(rw, loc, ki.lane, i32Const(rw, loc, 15));
      laneOffset = arith::MulIOp::create(rw, loc, row, i32Const(rw, loc, ld * 2));
    }
    // Where warps split the result's columns (getSplitColumnsLayout), each
    // reads B from its own first column on.
    Value warpCol = i32Const(rw, loc, 0);
    for (unsigned i = 0; i < lc.getNumWarpBits(); ++i)
      if (int64_t col = basisAt(lc.getWarps(), 2, i)[1]) {
        Value bit = bitOf(rw, loc, ki.warp, i);
        warpCol = arith::OrIOp::create(
            rw, loc, warpCol,
            arith::MulIOp::create(rw, loc, bit, i32Const(rw, loc, col)));
      }
    laneOffset = arith::AddIOp::create(
        rw, loc, laneOffset,
        arith::MulIOp::create(rw, loc, warpCol,
                              i32Const(rw, loc, kMajor ? ld * 2 : 2)));
    Value rowBase = arith::AddIOp::create(rw, loc, base, laneOffset);
    bool bf16 = elt.isBF16();
    auto i32 = rw.getI32Type();
    auto asOperand = [&](Value packed) -> Value {
      if (bf16)
        return packed;
      return LLVM::BitcastOp::create(rw, loc, VectorType::get({2}, elt), packed);
    };
    auto pair = [&](SmallVector<Value> &vals, int64_t r0, int64_t r1) -> Value {
      Value v = vector::FromElementsOp::create(
          rw, loc, VectorType::get({2}, elt), ValueRange{vals[r0], vals[r1]});
      return bf16 ? Value(LLVM::BitcastOp::create(rw, loc, i32, v)) : v;
    };
    auto pairTy = LLVM::LLVMStructType::getLiteral(rw.getContext(), {i32, i32});
    llvm::DenseMap<int64_t, std::pair<Value, Value>> bFrags;
    // B fragment (k0..k0+15, n0..n0+7): one ldmatrix.x2 (.trans when B is
    // stored [K][N]).
    auto bFrag = [&](int64_t k0, int64_t n0) {
      auto [it, fresh] = bFrags.try_emplace(k0 * 65536 + n0);
      if (fresh) {
        int64_t at = kMajor ? n0 * ld + k0 : k0 * ld + n0;
        Value addr = arith::AddIOp::create(rw, loc, rowBase,
                                           i32Const(rw, loc, at * 2));
        // A read of shared memory, so it has side effects: otherwise the
        // asm is pure to MLIR's CSE and LLVM (register operands only), and
        // a later dot that stages a different B into the same scratch
        // buffer, with the same row stride, reuses this dot's fragments.
        Value res = ptx(rw, loc, pairTy, addr,
                        kMajor ? "ldmatrix.sync.aligned.m8n8.x2.shared.b16 "
                                 "{$0, $1}, [$2];"
                               : "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 "
                                 "{$0, $1}, [$2];",
                        "=r,=r,r", /*sideEffects=*/true);
        it->second = {asOperand(LLVM::ExtractValueOp::create(rw, loc, res, 0)),
                      asOperand(LLVM::ExtractValueOp::create(rw, loc, res, 1))};
      }
      return it->second;
    };
    auto f32 = rw.getF32Type();
    auto resTy = LLVM::LLVMStructType::getLiteral(rw.getContext(),
                                                  {f32, f32, f32, f32});
    NVVM::MMATypes mt = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;

    // Padding past `k_used` / `n_used` (tile-pad-shapes): no k steps there,
    // and the padded accumulator columns stay zero constants (when the
    // warps do not split the columns, a register's column is its own).
    int64_t kUsed = kSize, nUsed = nSize;
    if (auto k = op.getKUsed())
      kUsed = std::min(kSize, int64_t(llvm::alignTo(*k, 16)));
    bool warpCols = false;
    for (unsigned i = 0; i < lc.getNumWarpBits(); ++i)
      warpCols |= basisAt(lc.getWarps(), 2, i)[1] != 0;
    if (auto n = op.getNUsed(); n && !warpCols) {
      nUsed = std::min(nSize, int64_t(llvm::alignTo(*n, 8)));
      Value zero = LLVM::ConstantOp::create(rw, loc, rw.getF32Type(),
                                            rw.getF32FloatAttr(0));
      for (int64_t r = 0; r < lc.getNumRegs(); ++r)
        if (regCoords(lc, r)[1] >= nUsed)
          cv[r] = zero;
    }
    for (int64_t k0 = 0; k0 < kUsed; k0 += 16) {
      for (int64_t r = 0; r < lc.getNumRegs(); r += 4) {
        SmallVector<int64_t> o = regCoords(lc, r);
        int64_t m0 = o[0], n0 = o[1];
        if (n0 >= nUsed)
          continue;
        int64_t c[4] = {r, r + 1, r + 2, r + 3};
        int64_t ar[8] = {ia.at(m0, k0),         ia.at(m0, k0 + 1),
                         ia.at(m0 + 8, k0),     ia.at(m0 + 8, k0 + 1),
                         ia.at(m0, k0 + 8),     ia.at(m0, k0 + 9),
                         ia.at(m0 + 8, k0 + 8), ia.at(m0 + 8, k0 + 9)};
        if (llvm::is_contained(ar, -1))
          return op.emitError("dot operand A is not in the mma.sync layout; "
                              "run tile-assign-layouts");
        SmallVector<Value> A = {pair(av, ar[0], ar[1]), pair(av, ar[2], ar[3]),
                                pair(av, ar[4], ar[5]), pair(av, ar[6], ar[7])};
        auto [b0, b1] = bFrag(k0, n0);
        SmallVector<Value> B = {b0, b1};
        SmallVector<Value> C = {cv[c[0]], cv[c[1]], cv[c[2]], cv[c[3]]};
        auto mma = NVVM::MmaOp::create(
            rw, loc, resTy, A, B, C, ArrayRef<int64_t>{16, 8, 16},
            std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{mt, mt},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int i = 0; i < 4; ++i)
          cv[c[i]] = LLVM::ExtractValueOp::create(rw, loc, mma, i);
      }
    }
    auto vt = cast<VectorType>(a.getAcc().getType());
    rw.replaceOp(op, pack(rw, loc, vt, cv));
    return success();
  }

  /// IEEE fp32: A (MxK) and B (KxN) go to shared memory; a loop over k
  /// reads, for each row and column the thread owns, one A and one B value
  /// and updates its accumulators with FMAs.
  LogicalResult lowerFma(DotOp op, OpAdaptor a,
                         ConversionPatternRewriter &rw) const {
    Location loc = op.getLoc();
    LayoutAttr la = layoutOf(op.getA()), lb = layoutOf(op.getB()),
               lc = layoutOf(op.getAcc());
    auto ta = cast<TileType>(op.getA().getType());
    auto tb = cast<TileType>(op.getB().getType());
    int64_t m = ta.getDimSize(0), k = ta.getDimSize(1), n = tb.getDimSize(1);
    KernelInfo &ki = kernel(op);
    Type f32 = rw.getF32Type();
    Value buf = sharedBuffer(rw, loc, ki, f32, m * k + k * n);
    ctaBarrier(rw, loc, ki);
    storeTile(rw, loc, ki, buf, 0, la, ta.getShape(), a.getA());
    storeTile(rw, loc, ki, buf, m * k, lb, tb.getShape(), a.getB());
    ctaBarrier(rw, loc, ki);

    // Distinct rows and columns of the accumulator this thread holds.
    Value rowPart = threadCoord(rw, loc, ki, lc, 0);
    Value colPart = threadCoord(rw, loc, ki, lc, 1);
    SmallVector<int64_t> rows, cols, rowOf, colOf;
    for (int64_t r = 0; r < lc.getNumRegs(); ++r) {
      SmallVector<int64_t> c = regCoords(lc, r);
      auto slot = [](SmallVector<int64_t> &v, int64_t x) {
        auto it = llvm::find(v, x);
        if (it != v.end())
          return int64_t(it - v.begin());
        v.push_back(x);
        return int64_t(v.size() - 1);
      };
      rowOf.push_back(slot(rows, c[0]));
      colOf.push_back(slot(cols, c[1]));
    }
    auto idx = [&](Value i32) {
      return arith::IndexCastOp::create(rw, loc, rw.getIndexType(), i32);
    };
    SmallVector<Value> rowBase, colIdx;
    for (int64_t r : rows) // A[row * k]
      rowBase.push_back(arith::MulIOp::create(
          rw, loc, arith::XOrIOp::create(rw, loc, rowPart, i32Const(rw, loc, r)),
          i32Const(rw, loc, k)));
    for (int64_t c : cols) // B[m*k + kk * n + col]
      colIdx.push_back(arith::AddIOp::create(
          rw, loc, arith::XOrIOp::create(rw, loc, colPart, i32Const(rw, loc, c)),
          i32Const(rw, loc, m * k)));

    Value lo = i32Const(rw, loc, 0), hi = i32Const(rw, loc, k),
          step = i32Const(rw, loc, 1);
    auto loop = scf::ForOp::create(
        rw, loc, lo, hi, step, ValueRange{a.getAcc()},
        [&](OpBuilder &b, Location l, Value kk, ValueRange iter) {
          SmallVector<Value> av, bv;
          for (Value base : rowBase)
            av.push_back(memref::LoadOp::create(
                b, l, buf, ValueRange{idx(arith::AddIOp::create(b, l, base, kk))}));
          Value kn = arith::MulIOp::create(b, l, kk, i32Const(b, l, n));
          for (Value c : colIdx)
            bv.push_back(memref::LoadOp::create(
                b, l, buf, ValueRange{idx(arith::AddIOp::create(b, l, c, kn))}));
          SmallVector<Value> acc = unpack(b, l, iter[0]);
          for (int64_t r = 0; r < int64_t(acc.size()); ++r)
            acc[r] = LLVM::FMAOp::create(b, l, av[rowOf[r]], bv[colOf[r]], acc[r]);
          scf::YieldOp::create(
              b, l, pack(b, l, cast<VectorType>(iter[0].getType()), acc));
        });
    rw.replaceOp(op, loop.getResult(0));
    return success();
  }

  /// Writes a laid-out tile row-major (column-major with `transpose`) into
  /// `buf` at element `offset`, rows `rowStride` elements apart.
  void storeTile(OpBuilder &b, Location loc, KernelInfo &ki, Value buf,
                 int64_t offset, LayoutAttr l, ArrayRef<int64_t> shape,
                 Value vec, int64_t rowStride = 0,
                 bool transpose = false) const {
    if (!rowStride)
      rowStride = shape[transpose ? 0 : 1];
    Value r0 = threadCoord(b, loc, ki, l, 0), c0 = threadCoord(b, loc, ki, l, 1);
    SmallVector<Value> vals = unpack(b, loc, vec);
    // 16-bit elements whose first 8 registers run along the buffer's rows:
    // one 16-byte st.shared per 8 (rows, offset and buffer 16-byte aligned)
    // instead of eight 2-byte stores.
    Type elt = cast<VectorType>(vec.getType()).getElementType();
    if (elt.getIntOrFloatBitWidth() == 16 &&
        leadingRegsAlong(l, transpose ? 0 : 1) >= 8 && rowStride % 8 == 0 &&
        offset % 8 == 0 && ki.persistentBytes % 16 == 0 && ki.members == 1) {
      Value base = arith::IndexCastOp::create(
          b, loc, b.getI32Type(),
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buf));
      for (int64_t r = 0; r < l.getNumRegs(); r += 8) {
        Value row = elementCoord(b, loc, r0, l, r, 0);
        Value col = elementCoord(b, loc, c0, l, r, 1);
        if (transpose)
          std::swap(row, col);
        Value at = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, row, i32Const(b, loc, rowStride)),
            arith::AddIOp::create(b, loc, col, i32Const(b, loc, offset)));
        SmallVector<Value> ops = {arith::AddIOp::create(
            b, loc, base, arith::MulIOp::create(b, loc, at, i32Const(b, loc, 2)))};
        for (int64_t j = 0; j < 8; j += 2)
          ops.push_back(packPair(b, loc, elt, vals[r + j], vals[r + j + 1]));
        ptx(b, loc, Type(), ops, "st.shared.v4.b32 [$0], {$1, $2, $3, $4};",
            "r,r,r,r,r", /*sideEffects=*/true);
      }
      return;
    }
    for (int64_t r = 0; r < l.getNumRegs(); ++r) {
      Value row = elementCoord(b, loc, r0, l, r, 0);
      Value col = elementCoord(b, loc, c0, l, r, 1);
      if (transpose)
        std::swap(row, col);
      Value at = arith::AddIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, row, i32Const(b, loc, rowStride)),
              col),
          i32Const(b, loc, offset));
      memref::StoreOp::create(
          b, loc, vals[r], buf,
          ValueRange{arith::IndexCastOp::create(b, loc, b.getIndexType(), at)});
    }
  }
};
/// wgmma.wait_group on sm_90a; elsewhere no dot is asynchronous.
struct DotWaitLowering : TilePattern<DotWaitOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(DotWaitOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    if (state.arch != "sm_90a") {
      rw.replaceOp(op, a.getSrc());
      return success();
    }
    Location loc = op.getLoc();
    SmallVector<Value> v =
        waitForWgmma(rw, loc, unpack(rw, loc, a.getSrc()), op.getPending());
    rw.replaceOp(op, pack(rw, loc, cast<VectorType>(a.getSrc().getType()), v));
    return success();
  }
};
} // namespace

void lowering::populateDotPatterns(TypeConverter &tc, RewritePatternSet &p,
                                   LoweringState &s) {
  p.add<DotLowering, DotWaitLowering>(tc, p.getContext(), s);
}
