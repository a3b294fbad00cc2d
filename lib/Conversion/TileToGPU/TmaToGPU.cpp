//===- TmaToGPU.cpp - tile.tma_copy / tile.tma_wait as sm_90a TMA ----------===//
//
// Each slot of a kernel owns, from the start of dynamic shared memory
// (1024-byte aligned): its tile buffer, an mbarrier and 128 bytes where
// warp 0 builds the slot's tensor map, which then lives in the program's
// part of a global scratch buffer (a trailing kernel parameter the runtime
// allocates; `tile.scratch_bytes` on the gpu.func says how much per
// program). Thread 0 starts each copy (expect_tx on the slot's barrier,
// then one cp.async.bulk.tensor per 64-element slab of a row); every thread
// waits on the barrier's phase parity. wgmma reads the slot in place
// (WgmmaToGPU.cpp), so tma_wait yields no registers.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
constexpr int64_t kMapBytes = 128; // a CUtensorMap
constexpr int64_t kSlabElems = 64; // 128-byte swizzle rows of 16-bit elements

int64_t roundUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// Predicated inline PTX: `body` runs where the i32 `cond` is non-zero;
/// `cond` is operand $0.
void ptxIf(OpBuilder &b, Location loc, Value cond, ValueRange operands,
           StringRef body, StringRef constraints) {
  SmallVector<Value> ops = {cond};
  ops.append(operands.begin(), operands.end());
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n" + body.str() + "\n}";
  ptx(b, loc, Type(), ops, text, ("r" + (constraints.empty() ? "" : "," + constraints.str())),
      /*sideEffects=*/true);
}

Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

Value offsetBy(OpBuilder &b, Location loc, Value base, Value stage,
               int64_t bytes) {
  return arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, stage, i32Const(b, loc, bytes)));
}

struct TmaCopyLowering : TilePattern<TmaCopyOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(TmaCopyOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    if (state.arch != "sm_90a")
      return op.emitError("tma_copy needs sm_90a, not ") << state.arch;
    KernelInfo &ki = kernel(op);
    int64_t slotId = op.getSlot();
    if (slotId >= int64_t(ki.slots.size()))
      return op.emitError("tma_copy slot without shared memory");
    TmaSlot &slot = ki.slots[slotId];
    Value buffer = slot.bufferOf(rw, loc, a.getStage());
    Value barrier = slot.barrierOf(rw, loc, a.getStage());
    ArrayRef<int64_t> shape = op.getShape();
    int64_t inner = shape[op.getInnerDim()], outer = shape[1 - op.getInnerDim()];
    int64_t eltBytes = 2;
    auto c32 = [&](int64_t v) { return i32Const(rw, loc, v); };
    Value bound = a.getBound();
    if (op.getInit()) {
      // Warp 0 builds the tensor map in shared memory and publishes it to
      // the scratch for the copy engine (zero fill, fields, copy + fence).
      Value warp0 = arith::ExtUIOp::create(
          rw, loc, rw.getI32Type(),
          arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::eq, ki.warp, c32(0)));
      Value word = arith::AddIOp::create(
          rw, loc, slot.staging, arith::MulIOp::create(rw, loc, ki.lane, c32(4)));
      ptxIf(rw, loc, warp0, ValueRange{word}, "@p st.shared.b32 [$1], 0;", "r");
      ptx(rw, loc, Type(), ValueRange{}, "bar.warp.sync -1;", "", true);
      Value rows = arith::MaxSIOp::create(rw, loc, bound, c32(1));
      std::string f = "@p tensormap.replace.tile.";
      std::string sp = ".shared::cta.b1024.b32 [$1], ";
      std::string text =
          f + "global_address.shared::cta.b1024.b64 [$1], $2;\n" +
          f + "rank" + sp + "1;\n" +
          f + "box_dim" + sp + "0, " + std::to_string(kSlabElems) + ";\n" +
          f + "box_dim" + sp + "1, " + std::to_string(outer) + ";\n" +
          f + "global_dim" + sp + "0, " + std::to_string(inner) + ";\n" +
          f + "global_dim" + sp + "1, $3;\n" +
          f + "global_stride.shared::cta.b1024.b64 [$1], 0, $4;\n" +
          f + "element_stride" + sp + "0, 1;\n" +
          f + "element_stride" + sp + "1, 1;\n" +
          f + "elemtype" + sp + "1;\n" +           // 16-bit
          f + "interleave_layout" + sp + "0;\n" +  // none
          f + "swizzle_mode" + sp + "3;\n" +       // 128 bytes
          f + "fill_mode" + sp + "0;";             // zeros out of bounds
      ptxIf(rw, loc, ki.isFirstThread,
            ValueRange{slot.staging, a.getBase(), rows,
                       i64Const(rw, loc, op.getRowStride() * eltBytes)},
            text, "r,l,r,l");
      ptx(rw, loc, Type(), ValueRange{}, "bar.warp.sync -1;", "", true);
      ptxIf(rw, loc, warp0, ValueRange{slot.map, slot.staging},
            "@p tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic."
            "release.gpu.sync.aligned [$1], [$2], 128;\n"
            "@p fence.proxy.tensormap::generic.acquire.gpu [$1], 128;",
            "l,r");
    } else {
      // Every warp is done reading the slot (its wgmma groups were waited
      // for) before the copy engine overwrites it.
      gpu::BarrierOp::create(rw, loc);
    }
    // Thread 0 starts the copy where `pred` holds. With no rows at all the
    // row coordinate 1 is past the single-row tensor: zeros, as masked.
    Value go = arith::AndIOp::create(
        rw, loc, ki.isFirstThread,
        arith::ExtUIOp::create(rw, loc, rw.getI32Type(), a.getPred()));
    Value coord = arith::SelectOp::create(
        rw, loc,
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::sgt, bound, c32(0)),
        a.getCoord(), c32(1));
    int64_t slabs = inner / kSlabElems;
    std::string text = "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], " +
                       std::to_string(inner * outer * eltBytes) + ";";
    SmallVector<Value> ops = {barrier, slot.map, coord};
    for (int64_t s = 0; s < slabs; ++s) {
      Value dst = arith::AddIOp::create(rw, loc, buffer, c32(s * outer * 128));
      ops.push_back(dst);
      text += "\n@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
              "complete_tx::bytes [$" + std::to_string(4 + s) + "], [$2, {" +
              std::to_string(s * kSlabElems) + ", $3}], [$1];";
    }
    std::string cons = "r,l,r";
    for (int64_t s = 0; s < slabs; ++s)
      cons += ",r";
    // Only warp 0 enters: a predicated bulk copy makes ptxas loop over the
    // warp's threads (ELECT, vote, branch) in every warp that reaches it.
    auto inWarp0 = scf::IfOp::create(
        rw, loc,
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::eq, ki.warp, c32(0)),
        /*withElseRegion=*/false);
    rw.setInsertionPoint(inWarp0.thenBlock()->getTerminator());
    ptxIf(rw, loc, go, ops, text, cons);
    rw.setInsertionPointAfter(inWarp0);
    rw.eraseOp(op);
    return success();
  }
};

struct TmaWaitLowering : TilePattern<TmaWaitOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(TmaWaitOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    for (OpOperand &use : op->getUses()) {
      auto dot = dyn_cast<DotOp>(use.getOwner());
      if (!dot || use.getOperandNumber() != 1)
        return op.emitError("a tma_wait result may only be a dot's B operand");
    }
    if (state.arch != "sm_90a")
      return op.emitError("tma_wait needs sm_90a, not ") << state.arch;
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    if (int64_t(op.getSlot()) >= int64_t(ki.slots.size()))
      return op.emitError("tma_wait slot without shared memory");
    Value barrier = ki.slots[op.getSlot()].barrierOf(rw, loc, a.getStage());
    ptx(rw, loc, Type(), ValueRange{barrier, a.getPhase()},
        "{\n.reg .pred done;\nTMA_WAIT_${:uid}:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@!done bra TMA_WAIT_${:uid};\n}",
        "r,r", /*sideEffects=*/true);
    // No registers: the dot reads the slot.
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, vt, rw.getZeroAttr(vt));
    return success();
  }
};
} // namespace

LogicalResult lowering::setupTmaSlots(gpu::GPUFuncOp fn, KernelInfo &k) {
  SmallVector<TmaCopyOp> copies;
  fn.walk([&](TmaCopyOp c) { copies.push_back(c); });
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  b.setInsertionPointAfterValue(k.warp);
  Location loc = fn.getLoc();
  if (copies.empty())
    return success();
  Value tid = arith::AddIOp::create(
      b, loc, k.lane, arith::MulIOp::create(b, loc, k.warp, i32Const(b, loc, 32)));
  k.isFirstThread = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                            i32Const(b, loc, 0)));
  // Slot sizes, from the copies (all copies of a slot agree).
  int64_t numSlots = 0;
  for (TmaCopyOp c : copies)
    numSlots = std::max<int64_t>(numSlots, c.getSlot() + 1);
  SmallVector<int64_t> bytes(numSlots, 0);
  for (TmaCopyOp c : copies)
    bytes[c.getSlot()] = c.getShape()[0] * c.getShape()[1] * 2;

  // The scratch pointer: a new trailing parameter.
  unsigned argIdx = fn.getNumArguments();
  if (failed(fn.insertArgument(argIdx, b.getI64Type(), DictionaryAttr(), loc)))
    return failure();
  Value scratch = fn.getArgument(argIdx);

  auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, wg);
  Value smem = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  Value base = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem));
  Value aligned = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, base, i32Const(b, loc, 1023)),
      i32Const(b, loc, -1024));
  auto at = [&](int64_t off) {
    return arith::AddIOp::create(b, loc, aligned, i32Const(b, loc, off));
  };
  // Program id (linear) * scratch per program.
  auto i64 = b.getI64Type();
  auto idx = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, loc, i64, v);
  };
  Value bx = idx(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value by = idx(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y));
  Value bz = idx(gpu::BlockIdOp::create(b, loc, gpu::Dimension::z));
  Value gx = idx(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  Value gy = idx(gpu::GridDimOp::create(b, loc, gpu::Dimension::y));
  Value pid = arith::AddIOp::create(
      b, loc, bx,
      arith::MulIOp::create(
          b, loc, gx,
          arith::AddIOp::create(b, loc, by, arith::MulIOp::create(b, loc, gy, bz))));
  k.scratchBytes = numSlots * kMapBytes;
  Value mine = arith::AddIOp::create(
      b, loc, scratch,
      arith::MulIOp::create(b, loc, pid, i64Const(b, loc, k.scratchBytes)));

  int64_t off = 0;
  k.slots.resize(numSlots);
  for (int64_t s = 0; s < numSlots; ++s) {
    k.slots[s].buffer = at(off);
    k.slots[s].stageBytes = roundUp(bytes[s], 1024);
    off += 2 * k.slots[s].stageBytes;
  }
  for (int64_t s = 0; s < numSlots; ++s) {
    k.slots[s].staging = at(off);
    k.slots[s].map = arith::AddIOp::create(b, loc, mine,
                                           i64Const(b, loc, s * kMapBytes));
    off += kMapBytes;
  }
  for (int64_t s = 0; s < numSlots; ++s) {
    k.slots[s].barrier = at(off);
    off += 16; // two stages
  }
  k.persistentBytes = roundUp(1024 + off, 128);
  k.sharedBytes = std::max(k.sharedBytes, k.persistentBytes);
  // Thread 0 initialises the barriers (one arrival per phase: its own
  // expect_tx); everyone sees them after the barrier.
  std::string init;
  SmallVector<Value> bars;
  std::string cons;
  for (int64_t s = 0; s < numSlots; ++s) {
    for (int64_t st = 0; st < 2; ++st) {
      init += "@p mbarrier.init.shared::cta.b64 [$" +
              std::to_string(bars.size() + 1) + "], 1;\n";
      bars.push_back(arith::AddIOp::create(b, loc, k.slots[s].barrier,
                                           i32Const(b, loc, 8 * st)));
      cons += bars.size() > 1 ? ",r" : "r";
    }
  }
  init += "@p fence.mbarrier_init.release.cluster;";
  ptxIf(b, loc, k.isFirstThread, bars, init, cons);
  gpu::BarrierOp::create(b, loc);
  fn->setAttr(kScratchBytesAttr, b.getI64IntegerAttr(k.scratchBytes));
  return success();
}

Value lowering::TmaSlot::bufferOf(OpBuilder &b, Location loc, Value stage) const {
  return offsetBy(b, loc, buffer, stage, stageBytes);
}

Value lowering::TmaSlot::barrierOf(OpBuilder &b, Location loc, Value stage) const {
  return offsetBy(b, loc, barrier, stage, 8);
}

void lowering::populateTmaPatterns(TypeConverter &tc, RewritePatternSet &p,
                                   LoweringState &s) {
  p.add<TmaCopyLowering, TmaWaitLowering>(tc, p.getContext(), s);
}
