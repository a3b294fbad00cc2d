//===- FoldScale.cpp - one multiply for chained scalar scales -------------===//
//
// Post-condition: no tile.mul of a tile.mul where both multiply by a splat
// scalar; the two scalars are multiplied once (outside any loop they are
// both defined outside of).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEFOLDSCALE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Returns the scalar `s` when `v` is `splat s` (either operand order).
Value splatScalar(Value v) {
  if (auto s = v.getDefiningOp<SplatOp>())
    return s.getSrc();
  return {};
}

/// mul(mul(x, splat a), splat b) -> mul(x, splat(a * b)) for floats.
struct FoldScaleChain : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp outer,
                                PatternRewriter &rewriter) const override {
    auto type = cast<TileType>(outer.getType());
    if (!isa<FloatType>(type.getElementType()))
      return failure();
    auto pick = [](MulOp m, Value &other) -> Value {
      if (Value s = splatScalar(m.getRhs())) {
        other = m.getLhs();
        return s;
      }
      if (Value s = splatScalar(m.getLhs())) {
        other = m.getRhs();
        return s;
      }
      return {};
    };
    Value innerVal;
    Value b = pick(outer, innerVal);
    auto inner = innerVal ? innerVal.getDefiningOp<MulOp>() : MulOp();
    if (!b || !inner || !inner->hasOneUse())
      return failure();
    Value x;
    Value a = pick(inner, x);
    if (!a)
      return failure();
    // Right after the later of the two scalars: outside any loop that
    // both are defined outside of.
    DominanceInfo dom(outer->getParentOp());
    Value later = b;
    if (Operation *bDef = b.getDefiningOp(); bDef && dom.properlyDominates(a, bDef))
      later = b;
    else if (Operation *aDef = a.getDefiningOp(); aDef && dom.properlyDominates(b, aDef))
      later = a;
    rewriter.setInsertionPointAfterValue(later);
    Value ab = arith::MulFOp::create(rewriter, outer.getLoc(), a, b);
    Value splat = SplatOp::create(rewriter, outer.getLoc(),
                                  type.withEncoding(type.getEncoding()), ab);
    rewriter.replaceOpWithNewOp<MulOp>(outer, x, splat);
    return success();
  }
};

struct FoldScalePass : public mlir::tile::impl::TileFoldScaleBase<FoldScalePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldScaleChain>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
