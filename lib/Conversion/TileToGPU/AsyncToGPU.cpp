//===- AsyncToGPU.cpp - cp.async rings: shared memory, copies, waits ------===//
//
// Each slot of a kernel's tile.async_copy ops gets `stages` buffers in the
// persistent part of dynamic shared memory (after the TMA slots, 128-byte
// aligned), each holding the tile row-major along its contiguous
// dimension with rows 8 elements longer than the tile's (16 bytes: the 8
// rows an ldmatrix reads start in different banks). A copy is one
// `cp.async` per `tile.vec` consecutive elements a thread holds (16 bytes
// for 8 16-bit elements, `.cg`: through L2 only, as the data is read
// once), `src-size` 0 where the mask is false (the bytes become zero and
// nothing is read); replicated elements are copied by one thread. The
// view is no registers: DotToGPU reads the stage with ldmatrix.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

Value lowering::AsyncSlot::bufferOf(OpBuilder &b, Location loc,
                                    Value stage) const {
  return arith::AddIOp::create(
      b, loc, buffer,
      arith::MulIOp::create(b, loc, stage, i32Const(b, loc, stageBytes)));
}

LogicalResult lowering::setupAsyncSlots(gpu::GPUFuncOp fn, KernelInfo &k) {
  struct Use {
    AsyncCopyOp op;
    int64_t outer = 0, inner = 0, stages = 0, eltBytes = 0, innerDim = 0;
    bool agrees(const Use &o) const {
      return outer == o.outer && inner == o.inner && stages == o.stages &&
             eltBytes == o.eltBytes && innerDim == o.innerDim;
    }
  };
  SmallVector<Use> ofSlot;
  WalkResult r = fn.walk([&](AsyncCopyOp c) {
    auto t = cast<TileType>(c.getPtr().getType());
    int64_t in = c.getInnerDim();
    Use u{c,
          t.getDimSize(1 - in),
          t.getDimSize(in),
          int64_t(c.getStages()),
          byteSize(cast<PtrType>(t.getElementType()).getPointeeType()),
          in};
    if (int64_t(c.getSlot()) >= int64_t(ofSlot.size()))
      ofSlot.resize(c.getSlot() + 1);
    Use &first = ofSlot[c.getSlot()];
    if (first.op && !first.agrees(u)) {
      c.emitError("copies of async slot ") << c.getSlot() << " disagree";
      return WalkResult::interrupt();
    }
    if (!first.op)
      first = u;
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  if (ofSlot.empty())
    return success();
  OpBuilder b(fn.getContext());
  b.setInsertionPointAfterValue(firstThread(k));
  Location loc = fn.getLoc();
  auto roundUp = [](int64_t v, int64_t a) { return (v + a - 1) / a * a; };
  int64_t off = roundUp(k.persistentBytes, 128);
  Value base = dynamicSharedBase(b, loc);
  for (auto [s, u] : llvm::enumerate(ofSlot)) {
    if (!u.op)
      return fn.emitError("async slot ") << s << " has no copy";
    AsyncSlot slot;
    slot.rowElems = u.inner + 16 / u.eltBytes;
    slot.stageBytes = roundUp(u.outer * slot.rowElems * u.eltBytes, 128);
    slot.innerDim = u.innerDim;
    slot.buffer = arith::AddIOp::create(b, loc, base, i32Const(b, loc, off));
    off += u.stages * slot.stageBytes;
    k.asyncSlots.push_back(slot);
  }
  k.persistentBytes = off;
  k.sharedBytes = std::max(k.sharedBytes, k.persistentBytes);
  return success();
}

namespace {
struct AsyncCopyLowering : TilePattern<AsyncCopyOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    if (int64_t(op.getSlot()) >= int64_t(ki.asyncSlots.size()))
      return op.emitError("async_copy of a slot without shared memory");
    const AsyncSlot &slot = ki.asyncSlots[op.getSlot()];
    LayoutAttr l = layoutOf(op.getPtr());
    auto t = cast<TileType>(op.getPtr().getType());
    int64_t bytes = byteSize(cast<PtrType>(t.getElementType()).getPointeeType());
    int64_t vec = 1;
    if (auto v = op->getAttrOfType<IntegerAttr>(kVectorAttr))
      vec = v.getInt();
    int64_t size = vec * bytes;
    if (size != 4 && size != 8 && size != 16)
      return op.emitError("async_copy needs 4, 8 or 16 contiguous, aligned "
                          "bytes per access, got ")
             << size;
    SmallVector<Value> ptrs = unpack(rw, loc, a.getPtr());
    SmallVector<Value> masks;
    if (a.getMask())
      masks = unpack(rw, loc, a.getMask());
    Value stageBase = slot.bufferOf(rw, loc, a.getStage());
    Value owner = arith::ExtUIOp::create(rw, loc, rw.getI32Type(),
                                         isOwner(rw, loc, ki, l));
    Value r0 = threadCoord(rw, loc, ki, l, 0), c0 = threadCoord(rw, loc, ki, l, 1);
    Value full = i32Const(rw, loc, size), none = i32Const(rw, loc, 0);
    std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\n@p cp.async." +
                       std::string(size == 16 ? "cg" : "ca") +
                       ".shared.global [$0], [$1], " + std::to_string(size) +
                       ", $2;\n}";
    for (int64_t g = 0; g < l.getNumRegs(); g += vec) {
      Value row = elementCoord(rw, loc, r0, l, g, 0);
      Value col = elementCoord(rw, loc, c0, l, g, 1);
      if (slot.innerDim == 0)
        std::swap(row, col); // row: the outer coordinate
      Value at = arith::AddIOp::create(
          rw, loc,
          arith::MulIOp::create(rw, loc, row, i32Const(rw, loc, slot.rowElems)),
          col);
      Value dst = arith::AddIOp::create(
          rw, loc, stageBase,
          arith::MulIOp::create(rw, loc, at, i32Const(rw, loc, bytes)));
      Value src = masks.empty()
                      ? full
                      : Value(arith::SelectOp::create(rw, loc, masks[g], full, none));
      ptx(rw, loc, Type(), ValueRange{dst, ptrs[g], src, owner}, text,
          "r,l,r,r", /*sideEffects=*/true);
    }
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncCommitLowering : TilePattern<AsyncCommitOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AsyncCommitOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    ptx(rw, op.getLoc(), Type(), ValueRange{}, "cp.async.commit_group;", "",
        /*sideEffects=*/true);
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncWaitLowering : TilePattern<AsyncWaitOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    ptx(rw, op.getLoc(), Type(), ValueRange{},
        "cp.async.wait_group " + std::to_string(op.getPending()) + ";", "",
        /*sideEffects=*/true);
    ctaBarrier(rw, op.getLoc(), kernel(op));
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncViewLowering : TilePattern<AsyncViewOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AsyncViewOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto asB = [](OpOperand &use) {
      return isa<DotOp>(use.getOwner()) && use.getOperandNumber() == 1;
    };
    for (OpOperand &use : op->getUses()) {
      auto tr = dyn_cast<TransOp>(use.getOwner());
      if (!asB(use) && !(tr && llvm::all_of(tr->getUses(), asB)))
        return op.emitError("an async_view result may only be a dot's B "
                            "operand, directly or through a trans");
    }
    // No registers: the dot reads the stage.
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, vt, rw.getZeroAttr(vt));
    return success();
  }
};
} // namespace

void lowering::populateAsyncPatterns(TypeConverter &tc, RewritePatternSet &p,
                                     LoweringState &s) {
  p.add<AsyncCopyLowering, AsyncCommitLowering, AsyncWaitLowering,
        AsyncViewLowering>(tc, p.getContext(), s);
}
