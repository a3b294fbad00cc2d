//===- TurnToGPU.cpp - tile.turn_wait / tile.turn_pass as named barriers --===//
//
// The ping-pong turns of tile-pingpong-dots (two warpgroups, 256 threads,
// besides a producer warpgroup in warp-specialized kernels):
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
  if (32 * state.of(op).warps != kTurnThreads)
    return op->emitError("warpgroup turns need 8 warps (256 threads)");
  return success();
}

/// i32 warpgroup index of this thread.
Value warpgroup(OpBuilder &b, Location loc, KernelInfo &ki) {
  return arith::ShRUIOp::create(b, loc, ki.warp, i32Const(b, loc, 2));
}

/// `instr` (bar.sync or bar.arrive) on named barrier `id` of the two
/// warpgroups; with `cond` (i32) only where it is non-zero.
void namedBarrier(OpBuilder &b, Location loc, StringRef instr, Value id,
                  Value cond = {}) {
  std::string text = instr.str() + " $0, " + std::to_string(kTurnThreads) + ";";
  if (!cond) {
    ptx(b, loc, Type(), ValueRange{id}, text, "r", /*sideEffects=*/true);
    return;
  }
  ptx(b, loc, Type(), ValueRange{id, cond},
      "{\n.reg .pred p;\nsetp.ne.b32 p, $1, 0;\n@p " + text + "\n}", "r,r",
      /*sideEffects=*/true);
}

/// turn_wait: warpgroup g waits on barrier 1 + g. turn_pass: it arrives on
/// 2 - g; `first`: only warpgroup 1 does, on warpgroup 0's barrier.
template <typename Op, bool Wait>
struct TurnLowering : TilePattern<Op> {
  using TilePattern<Op>::TilePattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(needsTwoWarpgroups(op, this->state)))
      return failure();
    Location loc = op.getLoc();
    Value g = warpgroup(rw, loc, this->kernel(op));
    if constexpr (Wait)
      namedBarrier(rw, loc, "bar.sync",
                   arith::AddIOp::create(rw, loc, g, i32Const(rw, loc, 1)));
    else
      namedBarrier(rw, loc, "bar.arrive",
                   arith::SubIOp::create(rw, loc, i32Const(rw, loc, 2), g),
                   op.getFirst() ? g : i32Const(rw, loc, 1));
    rw.eraseOp(op);
    return success();
  }
};
} // namespace

void lowering::populateTurnPatterns(TypeConverter &tc, RewritePatternSet &p,
                                    LoweringState &s) {
  p.add<TurnLowering<TurnWaitOp, true>, TurnLowering<TurnPassOp, false>>(
      tc, p.getContext(), s);
}
