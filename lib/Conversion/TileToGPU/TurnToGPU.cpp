//===- TurnToGPU.cpp - tile.turn_wait / tile.turn_pass as named barriers --===//
//
// The ping-pong turns of tile-pingpong-dots (two warpgroups, 256 threads):
// warpgroup g = warp / 4 waits on named barrier 1 + g (`bar.sync`, 256
// threads: its own 128 plus the other warpgroup's arrival) and passes by
// arriving on barrier 2 - g (`bar.arrive`, which does not wait). Barrier 0
// stays the CTA barrier of gpu.barrier.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
constexpr int64_t kTurnThreads = 256; // two warpgroups

LogicalResult needsTwoWarpgroups(Operation *op, LoweringState &state) {
  if (state.arch != "sm_90a")
    return op->emitError("warpgroup turns need sm_90a, not ") << state.arch;
  auto fn = op->getParentOfType<gpu::GPUFuncOp>();
  DenseI32ArrayAttr block = fn ? fn.getKnownBlockSizeAttr() : nullptr;
  if (!block || block[0] != kTurnThreads)
    return op->emitError("warpgroup turns need 8 warps (256 threads)");
  return success();
}

/// i32 warpgroup index of this thread.
Value warpgroup(OpBuilder &b, Location loc, KernelInfo &ki) {
  return arith::ShRUIOp::create(b, loc, ki.warp, i32Const(b, loc, 2));
}

struct TurnWaitLowering : TilePattern<TurnWaitOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(TurnWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(needsTwoWarpgroups(op, state)))
      return failure();
    Location loc = op.getLoc();
    Value id = arith::AddIOp::create(rw, loc, warpgroup(rw, loc, kernel(op)),
                                     i32Const(rw, loc, 1));
    ptx(rw, loc, Type(), ValueRange{id},
        "bar.sync $0, " + std::to_string(kTurnThreads) + ";", "r",
        /*sideEffects=*/true);
    rw.eraseOp(op);
    return success();
  }
};

struct TurnPassLowering : TilePattern<TurnPassOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(TurnPassOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(needsTwoWarpgroups(op, state)))
      return failure();
    Location loc = op.getLoc();
    Value g = warpgroup(rw, loc, kernel(op));
    std::string arrive = "bar.arrive $1, " + std::to_string(kTurnThreads) + ";";
    // first: warpgroup 1 arrives on warpgroup 0's barrier (1).
    Value cond = op.getFirst() ? g : i32Const(rw, loc, 1);
    Value id = arith::SubIOp::create(rw, loc, i32Const(rw, loc, 2), g);
    ptx(rw, loc, Type(), ValueRange{cond, id},
        "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n@p " + arrive + "\n}", "r,r",
        /*sideEffects=*/true);
    rw.eraseOp(op);
    return success();
  }
};
} // namespace

void lowering::populateTurnPatterns(TypeConverter &tc, RewritePatternSet &p,
                                    LoweringState &s) {
  p.add<TurnWaitLowering, TurnPassLowering>(tc, p.getContext(), s);
}
