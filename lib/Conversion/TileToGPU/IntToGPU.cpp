//===- IntToGPU.cpp - unsigned, shift, mulhi and bitcast tile ops ---------===//
//
// Each op is one `arith` op on the thread's vector: divui/remui/maxui/minui,
// shli/shrsi/shrui, bitcast. tile.mulhiu is the high result of
// arith.mului_extended, which LLVM lowers to a double-width multiply whose
// high half the NVPTX backend selects as mul.hi.u32 (mul.hi.u64 for i64):
// one instruction per element.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {

template <typename TileOp, typename ArithOp>
struct IntBinaryLowering : TilePattern<TileOp> {
  using TilePattern<TileOp>::TilePattern;
  LogicalResult
  matchAndRewrite(TileOp op, typename TileOp::Adaptor a,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<ArithOp>(op, a.getLhs(), a.getRhs());
    return success();
  }
};

struct MulHiULowering : TilePattern<MulHiUOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(MulHiUOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    auto m = arith::MulUIExtendedOp::create(rw, op.getLoc(), a.getLhs(),
                                            a.getRhs());
    rw.replaceOp(op, m.getHigh());
    return success();
  }
};

struct BitcastLowering : TilePattern<BitcastOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(BitcastOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Type t = getTypeConverter()->convertType(op.getType());
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, t, a.getSrc());
    return success();
  }
};
} // namespace

void lowering::populateIntPatterns(TypeConverter &tc, RewritePatternSet &p,
                                   LoweringState &s) {
  p.add<IntBinaryLowering<DivUOp, arith::DivUIOp>,
        IntBinaryLowering<RemUOp, arith::RemUIOp>,
        IntBinaryLowering<MaxUOp, arith::MaxUIOp>,
        IntBinaryLowering<MinUOp, arith::MinUIOp>,
        IntBinaryLowering<ShlOp, arith::ShLIOp>,
        IntBinaryLowering<ShrSOp, arith::ShRSIOp>,
        IntBinaryLowering<ShrUOp, arith::ShRUIOp>, MulHiULowering,
        BitcastLowering>(tc, p.getContext(), s);
}
