//===- ScalarToGPU.cpp - scalar loads and stores, tile-to-scalar ----------===//
//
// Scalars are computed by every thread of a program, so a scalar load is
// one global load per thread of one address: a warp's 32 requests merge
// into one transaction and the warps after the first hit L1. A scalar
// store is likewise one store per thread of the same value (one
// transaction per warp); no predicate on the thread is needed because
// every writer writes the same bits. A mask becomes a uniform branch
// (scf.if), so a masked-out access touches no memory.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// The global-memory (address space 1) pointer of an i64 byte address.
Value globalPtr(OpBuilder &b, Location loc, Value addr) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  return LLVM::IntToPtrOp::create(b, loc, ptrType, addr);
}

struct ScalarLoadLowering : TilePattern<ScalarLoadOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ScalarLoadOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type t = op.getType();
    auto load = [&](OpBuilder &b) -> Value {
      return LLVM::LoadOp::create(b, loc, t, globalPtr(b, loc, a.getPtr()));
    };
    if (!a.getMask()) {
      rw.replaceOp(op, load(rw));
      return success();
    }
    Value other = a.getOther();
    if (!other)
      other = arith::ConstantOp::create(rw, loc, rw.getZeroAttr(t));
    auto ifOp = scf::IfOp::create(
        rw, loc, a.getMask(),
        [&](OpBuilder &b, Location l) { scf::YieldOp::create(b, l, load(b)); },
        [&](OpBuilder &b, Location l) { scf::YieldOp::create(b, l, other); });
    rw.replaceOp(op, ifOp.getResults());
    return success();
  }
};

struct ScalarStoreLowering : TilePattern<ScalarStoreOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ScalarStoreOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto store = [&](OpBuilder &b) {
      LLVM::StoreOp::create(b, loc, a.getValue(),
                            globalPtr(b, loc, a.getPtr()));
    };
    if (!a.getMask()) {
      store(rw);
    } else {
      auto ifOp = scf::IfOp::create(rw, loc, a.getMask(),
                                    /*withElseRegion=*/false);
      OpBuilder b = OpBuilder::atBlockBegin(ifOp.thenBlock());
      store(b);
    }
    rw.eraseOp(op);
    return success();
  }
};

/// The single element every thread holds.
struct ToScalarLowering : TilePattern<ToScalarOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ToScalarOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    // Every register of a one-element tile holds that element.
    rw.replaceOpWithNewOp<vector::ExtractOp>(op, a.getSrc(), int64_t(0));
    return success();
  }
};
} // namespace

void lowering::populateScalarPatterns(TypeConverter &tc, RewritePatternSet &p,
                                      LoweringState &s) {
  p.add<ScalarLoadLowering, ScalarStoreLowering, ToScalarLowering>(
      tc, p.getContext(), s);
}
