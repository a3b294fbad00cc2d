//===- ElementwiseToGPU.cpp - elementwise tile ops on thread vectors ------===//
//
// A laid-out tile is, per thread, a vector; elementwise ops act on those
// vectors with `arith`, transcendental functions use the approximate PTX
// instructions (ex2.approx, lg2.approx, rsqrt.approx, tanh.approx). exp and
// exp2 flush results below 2^-126 to zero (`.ftz`): without it ptxas wraps
// every MUFU.EX2 in a range check and two multiplies, and softmax weights that
// small are zero next to the row maximum's weight of 1 anyway.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {

VectorType vecOf(const TypeConverter *tc, Type t) {
  return cast<VectorType>(tc->convertType(t));
}

struct SplatLowering : TilePattern<SplatOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<vector::BroadcastOp>(
        op, vecOf(getTypeConverter(), op.getType()), a.getSrc());
    return success();
  }
};

struct FullLowering : TilePattern<FullOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(FullOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto vt = vecOf(getTypeConverter(), op.getType());
    if (isFp8(vt.getElementType())) { // bits as i8 (LLVM has no fp8 type)
      auto bytes = VectorType::get(vt.getShape(), rw.getI8Type());
      APInt bits = cast<FloatAttr>(op.getValue()).getValue().bitcastToAPInt();
      Value c = arith::ConstantOp::create(
          rw, op.getLoc(),
          DenseElementsAttr::get(bytes, rw.getIntegerAttr(rw.getI8Type(), bits)));
      rw.replaceOpWithNewOp<vector::BitCastOp>(op, vt, c);
      return success();
    }
    rw.replaceOpWithNewOp<arith::ConstantOp>(
        op, vt, DenseElementsAttr::get(vt, cast<TypedAttr>(op.getValue())));
    return success();
  }
};

struct IotaLowering : TilePattern<IotaOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LayoutAttr l = layoutOf(op.getType());
    auto vt = vecOf(getTypeConverter(), op.getType());
    auto i32v = VectorType::get(vt.getShape(), rw.getI32Type());
    SmallVector<int32_t> regs;
    for (int64_t r = 0; r < l.getNumRegs(); ++r)
      regs.push_back(regCoords(l, r)[0]);
    Value thread = threadCoord(rw, loc, kernel(op), l, 0);
    Value v = arith::XOrIOp::create(
        rw, loc, vector::BroadcastOp::create(rw, loc, i32v, thread),
        arith::ConstantOp::create(rw, loc, i32v,
                                  DenseElementsAttr::get(i32v, ArrayRef(regs))));
    if (vt.getElementType() != rw.getI32Type())
      v = arith::ExtSIOp::create(rw, loc, vt, v);
    rw.replaceOp(op, v);
    return success();
  }
};

/// Binary ops: one arith op for floats, one for integers.
template <typename TileOp, typename FOp, typename IOp>
struct BinaryLowering : TilePattern<TileOp> {
  using TilePattern<TileOp>::TilePattern;
  LogicalResult
  matchAndRewrite(TileOp op, typename TileOp::Adaptor a,
                  ConversionPatternRewriter &rw) const override {
    Type elt = cast<TileType>(op.getType()).getElementType();
    if (isa<FloatType>(elt)) {
      if constexpr (std::is_same_v<FOp, void>)
        return rw.notifyMatchFailure(op, "no float form");
      else
        rw.replaceOpWithNewOp<FOp>(op, a.getLhs(), a.getRhs());
    } else {
      rw.replaceOpWithNewOp<IOp>(op, a.getLhs(), a.getRhs());
    }
    return success();
  }
};

/// Applies `fn` to each element, in f32 for 16-bit floats.
template <typename Fn>
Value mapF32(ConversionPatternRewriter &rw, Location loc, Value vec, Fn fn) {
  auto vt = cast<VectorType>(vec.getType());
  Type elt = vt.getElementType();
  Type f32 = rw.getF32Type();
  SmallVector<Value> out;
  for (Value e : unpack(rw, loc, vec)) {
    Value x = elt == f32 ? e : Value(arith::ExtFOp::create(rw, loc, f32, e));
    Value y = fn(x);
    out.push_back(elt == f32 ? y : Value(arith::TruncFOp::create(rw, loc, elt, y)));
  }
  return pack(rw, loc, vt, out);
}

Value approx(ConversionPatternRewriter &rw, Location loc, StringRef insn,
             Value x) {
  std::string text = (insn + " $0, $1;").str();
  return ptx(rw, loc, rw.getF32Type(), x, text, "=f,f");
}

Value mulConst(ConversionPatternRewriter &rw, Location loc, Value x, double c) {
  return arith::MulFOp::create(
      rw, loc, x, arith::ConstantFloatOp::create(rw, loc, rw.getF32Type(),
                                                 APFloat(float(c))));
}

template <typename TileOp>
struct TranscendentalLowering : TilePattern<TileOp> {
  using TilePattern<TileOp>::TilePattern;
  LogicalResult
  matchAndRewrite(TileOp op, typename TileOp::Adaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    if (cast<TileType>(op.getType()).getElementType().isF64())
      return op.emitError("f64 transcendental functions are not supported");
    Value r = mapF32(rw, loc, a.getSrc(), [&](Value x) -> Value {
      if constexpr (std::is_same_v<TileOp, Exp2Op>)
        return approx(rw, loc, "ex2.approx.ftz.f32", x);
      if constexpr (std::is_same_v<TileOp, ExpOp>)
        return approx(rw, loc, "ex2.approx.ftz.f32",
                      mulConst(rw, loc, x, M_LOG2E));
      if constexpr (std::is_same_v<TileOp, Log2Op>)
        return approx(rw, loc, "lg2.approx.f32", x);
      if constexpr (std::is_same_v<TileOp, LogOp>)
        return mulConst(rw, loc, approx(rw, loc, "lg2.approx.f32", x), M_LN2);
      if constexpr (std::is_same_v<TileOp, RsqrtOp>)
        return approx(rw, loc, "rsqrt.approx.f32", x);
      if constexpr (std::is_same_v<TileOp, TanhOp>)
        return approx(rw, loc, "tanh.approx.f32", x);
      if constexpr (std::is_same_v<TileOp, SqrtOp>) // IEEE, not .approx;
        return approx(rw, loc, "sqrt.rn.f32", x);   // see AbsLowering
      llvm_unreachable("unhandled transcendental");
    });
    rw.replaceOp(op, r);
    return success();
  }
};

/// Float abs clears the sign bit (exact for every float type, NaN, inf and
/// -0 included). Not llvm.intr.fabs / llvm.intr.sqrt: convert-gpu-to-nvvm
/// marks those illegal (it would call libdevice, which tilec does not link).
struct AbsLowering : TilePattern<AbsOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AbsOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Value x = a.getSrc();
    Location loc = op.getLoc();
    if (auto ft = dyn_cast<FloatType>(
            mlir::tile::getElementTypeOrSelf(op.getType()))) {
      unsigned bits = ft.getWidth();
      Type bitsType = rw.getIntegerType(bits);
      TypedAttr maskAttr =
          rw.getIntegerAttr(bitsType, APInt::getSignedMaxValue(bits));
      if (auto vt = dyn_cast<VectorType>(x.getType())) {
        auto vbits = VectorType::get(vt.getShape(), bitsType);
        maskAttr = SplatElementsAttr::get(vbits, maskAttr);
        bitsType = vbits;
      }
      Value mask = arith::ConstantOp::create(rw, loc, maskAttr);
      Value i = arith::BitcastOp::create(rw, loc, bitsType, x);
      Value r = arith::AndIOp::create(rw, loc, i, mask);
      rw.replaceOpWithNewOp<arith::BitcastOp>(op, x.getType(), r);
      return success();
    }
    Value zero = arith::ConstantOp::create(rw, loc, rw.getZeroAttr(x.getType()));
    Value neg = arith::SubIOp::create(rw, loc, zero, x);
    Value lt = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt, x, zero);
    rw.replaceOpWithNewOp<arith::SelectOp>(op, lt, neg, x);
    return success();
  }
};

struct NegLowering : TilePattern<NegOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(NegOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Value x = a.getSrc();
    if (isa<FloatType>(mlir::tile::getElementTypeOrSelf(op.getType()))) {
      rw.replaceOpWithNewOp<arith::NegFOp>(op, x);
      return success();
    }
    Value zero =
        arith::ConstantOp::create(rw, op.getLoc(), rw.getZeroAttr(x.getType()));
    rw.replaceOpWithNewOp<arith::SubIOp>(op, zero, x);
    return success();
  }
};

struct CmpLowering : TilePattern<CmpOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(CmpOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Type elt = cast<TileType>(op.getLhs().getType()).getElementType();
    CmpPredicate p = op.getPredicate();
    if (isa<FloatType>(elt)) {
      using P = arith::CmpFPredicate;
      P fp[] = {P::OEQ, P::UNE, P::OLT, P::OLE, P::OGT, P::OGE};
      rw.replaceOpWithNewOp<arith::CmpFOp>(op, fp[int(p)], a.getLhs(),
                                           a.getRhs());
    } else {
      using P = arith::CmpIPredicate;
      P ip[] = {P::eq, P::ne, P::slt, P::sle, P::sgt, P::sge,
                P::ult, P::ule, P::ugt, P::uge};
      rw.replaceOpWithNewOp<arith::CmpIOp>(op, ip[int(p)], a.getLhs(),
                                           a.getRhs());
    }
    return success();
  }
};

struct WhereLowering : TilePattern<WhereOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(WhereOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<arith::SelectOp>(op, a.getCond(), a.getLhs(),
                                           a.getRhs());
    return success();
  }
};

/// fma.rn on each element (LLVM's fma intrinsic); scalar math.fma from the
/// frontend too (else it would become a libdevice call).
template <typename Op>
struct FmaLowering : TilePattern<Op> {
  using TilePattern<Op>::TilePattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor a,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<LLVM::FMAOp>(op, a.getA(), a.getB(), a.getC());
    return success();
  }
};

struct CastLowering : TilePattern<CastOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type from = cast<TileType>(op.getSrc().getType()).getElementType();
    Type to = op.getType().getElementType();
    auto vt = vecOf(getTypeConverter(), op.getType());
    Value x = a.getSrc();
    bool fFrom = isa<FloatType>(from), fTo = isa<FloatType>(to);
    bool uns = op.getIsUnsigned();
    Value r;
    if (isFp8(from) || isFp8(to)) {
      // Through f32 (exact for every fp8 value); the frontend routes
      // integers through f32 too.
      r = castFp8(rw, loc, x, from, to, vt, state.arch == "sm_90a");
    } else if (fFrom && fTo) {
      unsigned wf = from.getIntOrFloatBitWidth(), wt = to.getIntOrFloatBitWidth();
      if (from == to)
        r = x;
      else if (wf == wt) // f16 <-> bf16 goes through f32
        r = arith::TruncFOp::create(
            rw, loc, vt,
            arith::ExtFOp::create(
                rw, loc, VectorType::get(vt.getShape(), rw.getF32Type()), x));
      else if (wf < wt)
        r = arith::ExtFOp::create(rw, loc, vt, x);
      else
        r = arith::TruncFOp::create(rw, loc, vt, x);
    } else if (!fFrom && fTo) {
      r = from.isInteger(1) || uns
              ? Value(arith::UIToFPOp::create(rw, loc, vt, x))
              : Value(arith::SIToFPOp::create(rw, loc, vt, x));
    } else if (fFrom && !fTo) {
      if (to.isInteger(1)) {
        Value zero = arith::ConstantOp::create(rw, loc, rw.getZeroAttr(x.getType()));
        r = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::UNE, x, zero);
      } else if (uns) {
        r = arith::FPToUIOp::create(rw, loc, vt, x);
      } else {
        r = arith::FPToSIOp::create(rw, loc, vt, x);
      }
    } else {
      unsigned wf = from.getIntOrFloatBitWidth(), wt = to.getIntOrFloatBitWidth();
      if (to.isInteger(1)) {
        Value zero = arith::ConstantOp::create(rw, loc, rw.getZeroAttr(x.getType()));
        r = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ne, x, zero);
      } else if (from.isInteger(1) || (uns && wf < wt)) {
        r = arith::ExtUIOp::create(rw, loc, vt, x);
      } else if (wf < wt) {
        r = arith::ExtSIOp::create(rw, loc, vt, x);
      } else if (wf > wt) {
        r = arith::TruncIOp::create(rw, loc, vt, x);
      } else {
        r = x;
      }
    }
    rw.replaceOp(op, r);
    return success();
  }
};

struct AddPtrLowering : TilePattern<AddPtrOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AddPtrOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type ptrElt = mlir::tile::getElementTypeOrSelf(op.getType());
    int64_t size = byteSize(cast<PtrType>(ptrElt).getPointeeType());
    Type i64 = rw.getI64Type();
    Type wide = i64;
    if (auto vt = dyn_cast<VectorType>(a.getPtr().getType()))
      wide = VectorType::get(vt.getShape(), i64);
    Value off = a.getOffset();
    if (mlir::getElementTypeOrSelf(off.getType()) != i64)
      off = arith::ExtSIOp::create(rw, loc, wide, off);
    Value scale = arith::ConstantOp::create(
        rw, loc, isa<VectorType>(wide)
                     ? TypedAttr(DenseElementsAttr::get(cast<VectorType>(wide),
                                                        rw.getI64IntegerAttr(size)))
                     : TypedAttr(rw.getI64IntegerAttr(size)));
    Value bytes = arith::MulIOp::create(rw, loc, off, scale);
    rw.replaceOpWithNewOp<arith::AddIOp>(op, a.getPtr(), bytes);
    return success();
  }
};

struct ProgramIdLowering : TilePattern<ProgramIdOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ProgramIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto dim = gpu::Dimension(op.getAxis());
    Value id = gpu::BlockIdOp::create(rw, op.getLoc(), dim);
    rw.replaceOpWithNewOp<arith::IndexCastUIOp>(op, rw.getI32Type(), id);
    return success();
  }
};

struct NumProgramsLowering : TilePattern<NumProgramsOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(NumProgramsOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto dim = gpu::Dimension(op.getAxis());
    Value n = gpu::GridDimOp::create(rw, op.getLoc(), dim);
    rw.replaceOpWithNewOp<arith::IndexCastUIOp>(op, rw.getI32Type(), n);
    return success();
  }
};
} // namespace

void lowering::populateElementwisePatterns(TypeConverter &tc,
                                           RewritePatternSet &p,
                                           LoweringState &s) {
  MLIRContext *ctx = p.getContext();
  p.add<SplatLowering, FullLowering, IotaLowering, AbsLowering, NegLowering,
        CmpLowering, WhereLowering, FmaLowering<FmaOp>,
        FmaLowering<math::FmaOp>, CastLowering, AddPtrLowering,
        ProgramIdLowering, NumProgramsLowering,
        BinaryLowering<AddOp, arith::AddFOp, arith::AddIOp>,
        BinaryLowering<SubOp, arith::SubFOp, arith::SubIOp>,
        BinaryLowering<MulOp, arith::MulFOp, arith::MulIOp>,
        BinaryLowering<DivOp, arith::DivFOp, arith::DivSIOp>,
        BinaryLowering<RemOp, arith::RemFOp, arith::RemSIOp>,
        BinaryLowering<MaxOp, arith::MaximumFOp, arith::MaxSIOp>,
        BinaryLowering<MinOp, arith::MinimumFOp, arith::MinSIOp>,
        BinaryLowering<AndOp, void, arith::AndIOp>,
        BinaryLowering<OrOp, void, arith::OrIOp>,
        BinaryLowering<XOrOp, void, arith::XOrIOp>,
        TranscendentalLowering<ExpOp>, TranscendentalLowering<Exp2Op>,
        TranscendentalLowering<LogOp>, TranscendentalLowering<Log2Op>,
        TranscendentalLowering<SqrtOp>, TranscendentalLowering<RsqrtOp>,
        TranscendentalLowering<TanhOp>>(tc, ctx, s);
}
