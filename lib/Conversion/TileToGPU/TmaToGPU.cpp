//===- TmaToGPU.cpp - tile.tma_copy / tile.tma_wait as sm_90a TMA ----------===//
//
// Each slot of a kernel owns, in dynamic shared memory, its tile buffer
// (`stages` stages) and per stage a "full" mbarrier (the copy landed:
// thread 0's expect_tx and the copy's bytes) and, in rings of three or
// more stages, an "empty" one (every warp passed a copy point: one arrival
// per warp); TmaSlots.cpp lays them out and describes the tensor maps.
// With three or more stages, at copy `iter` every warp arrives on the empty
// barrier of stage iter % stages and thread 0 waits until every warp has
// passed copy iter - (stages - 2) (no CTA barrier: the other warps never
// wait for it); with two stages (and in a one-stage slot, copied once) a
// CTA barrier precedes the copy. Thread 0 then starts the copy (expect_tx
// on the stage's full barrier, then one cp.async.bulk.tensor per
// 64-element slab of a row); every thread waits on the barrier's phase
// parity, then the rows (or columns) past the valid ones are zeroed (TmaZero.cpp). wgmma reads the
// slot in place, as a dot's B or (K contiguous) A operand (WgmmaToGPU.cpp),
// so tma_wait yields no registers. A one-stage slot in a kernel running
// cta_programs > 1 programs per CTA has a buffer and a barrier per
// program (tma_a in the loop over programs): lane 0 of each program's
// first warp copies, after the program's own barrier.
//
// Warp-specialized kernels (tile.warp_specialize): every ring has empty
// barriers, one arrival per consumer warp at each tile.tma_release (placed
// where the dot reading the stage is complete); a `producer` copy is
// issued by lane 0 of the producer warp once every consumer warp released
// the copy the stage held (for two stages too), and no consumer warp ever
// waits for another except at CTA barriers of the consumers.
//
// tile.tma_store: TmaStoreToGPU.cpp.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/Tma.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

void lowering::ptxIf(OpBuilder &b, Location loc, Value cond, ValueRange operands,
                     StringRef body, StringRef constraints) {
  SmallVector<Value> ops = {cond};
  ops.append(operands.begin(), operands.end());
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n" + body.str() + "\n}";
  ptx(b, loc, Type(), ops, text, ("r" + (constraints.empty() ? "" : "," + constraints.str())),
      /*sideEffects=*/true);
}

FailureOr<TmaSlot *> lowering::slotOf(Operation *op, StringRef what,
                                      int64_t slot, const LoweringState &state,
                                      KernelInfo &ki) {
  if (state.arch != "sm_90a")
    return op->emitError(what) << " needs sm_90a, not " << state.arch;
  if (slot >= int64_t(ki.slots.size()))
    return op->emitError(what) << " slot without shared memory";
  return &ki.slots[slot];
}

std::string lowering::slabColumn(OpBuilder &b, Location loc, Value col,
                                 int64_t s, SmallVectorImpl<Value> &ops,
                                 int64_t slabElems) {
  if (!col)
    return std::to_string(s * slabElems);
  ops.push_back(s ? Value(arith::AddIOp::create(b, loc, col,
                                                i32Const(b, loc, s * slabElems)))
                  : col);
  return "$" + std::to_string(ops.size());
}

namespace {
/// Where `go` (i32) is non-zero, arrive on the mbarrier at `barrier`.
void arrive(OpBuilder &b, Location loc, Value go, Value barrier) {
  ptxIf(b, loc, go, ValueRange{barrier},
        "@p mbarrier.arrive.shared::cta.b64 _, [$1];", "r");
}

/// This warp has passed copy point `iter` of a ring (lane 0 arrives on the
/// empty barrier of its stage; its reads of the stage two copies back were
/// waited for before this point).
void passCopy(OpBuilder &b, Location loc, KernelInfo &ki, const TmaSlot &slot,
              Value stage) {
  arrive(b, loc, isLane0(b, loc, ki), slot.emptyOf(b, loc, stage));
}

/// The empty barrier and parity the issuing thread waits on before copy
/// `iter`: phase (iter + lag) / stages of barrier (iter + lag) % stages is
/// complete, i.e. parity ((iter + lag) / stages) % 2 ^ 1 (parity 1 of a
/// fresh barrier is complete: the first copies do not wait). Copies in the
/// kernel's warps (lag 2): every warp has passed copy iter - (stages - 2).
/// Producer copies (lag 0): every consumer warp released copy
/// iter - stages, the one the stage held.
std::pair<Value, Value> stageFree(OpBuilder &b, Location loc,
                                  const TmaSlot &slot, Value iter, int64_t lag) {
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  Value ahead = lag ? arith::AddIOp::create(b, loc, iter, c32(lag)) : iter;
  Value waitOn = slot.emptyOf(
      b, loc, arith::RemUIOp::create(b, loc, ahead, c32(slot.stages)));
  Value round = arith::DivUIOp::create(b, loc, ahead, c32(slot.stages));
  Value parity = arith::XOrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, round, c32(1)), c32(1));
  return {waitOn, parity};
}

struct TmaCopyLowering : TilePattern<TmaCopyOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(TmaCopyOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    FailureOr<TmaSlot *> found = slotOf(op, "tma_copy", op.getSlot(), state, ki);
    if (failed(found))
      return failure();
    TmaSlot &slot = **found;
    ArrayRef<int64_t> shape = op.getShape();
    int64_t inner = shape[op.getInnerDim()], outer = shape[1 - op.getInnerDim()];
    Type elt = op.getBase().getType().getPointeeType();
    int64_t eltBytes = byteSize(elt), slabElems = slabElemsOf(elt);
    auto c32 = [&](int64_t v) { return i32Const(rw, loc, v); };
    // Thread 0 (lane 0 of the producer warp) starts the copy where `pred`
    // holds.
    bool producer = op.getProducer();
    // In a warp-specialized kernel only a one-stage slot's copy stays with
    // the program's warps (tma_a in a persistent kernel, tile-warp-specialize).
    if (producer && !ki.specialized)
      return op.emitError("producer copy outside tile.warp_specialize");
    if (!producer && ki.specialized && slot.stages != 1)
      return op.emitError("a ring copy of a warp-specialized kernel outside "
                          "its producer region");
    // With several programs per CTA each one's lane 0 of its warp 0.
    bool ownWarp0 = !producer && ki.members > 1;
    Value go = arith::AndIOp::create(
        rw, loc, producer || ownWarp0 ? isLane0(rw, loc, ki) : ki.isFirstThread,
        arith::ExtUIOp::create(rw, loc, rw.getI32Type(), a.getPred()));
    int64_t stages = slot.stages; // setupTmaSlots: every copy of a slot agrees
    Value stage = arith::RemUIOp::create(rw, loc, a.getIter(), c32(stages));
    Value buffer = slot.bufferOf(rw, loc, stage);
    Value barrier = slot.barrierOf(rw, loc, stage);
    Value coord = a.getCoord();
    int64_t slabs = inner / slabElems;
    std::string copies;
    SmallVector<Value> ops = {barrier, slot.map, coord};
    for (int64_t s = 0; s < slabs; ++s) {
      ops.push_back(arith::AddIOp::create(rw, loc, buffer, c32(s * outer * 128)));
      std::string dst = std::to_string(ops.size());
      std::string x = slabColumn(rw, loc, a.getCol(), s, ops, slabElems);
      copies += "\n@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                "complete_tx::bytes [$" + dst + "], [$2, {" + x + ", $3}], [$1];";
    }
    std::string expect = "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], " +
                         std::to_string(inner * outer * eltBytes) + ";";
    std::string cons = "r,l,r";
    for (size_t i = 3; i < ops.size(); ++i)
      cons += ",r";
    std::string text;
    if (!slot.hasEmpty) {
      // Two stages (not warp-specialized): the copy must wait for every
      // warp to reach it anyway; a CTA barrier does that (faster than the
      // empty barriers at D = 64 on H100). One
      // stage: a single copy.
      if (!producer)
        ctaBarrier(rw, loc, ki);
      text = expect + copies;
    } else {
      if (!producer)
        passCopy(rw, loc, ki, slot, stage);
      auto [waitOn, waitParity] =
          stageFree(rw, loc, slot, a.getIter(), producer ? 0 : 2);
      ops.push_back(waitOn);
      ops.push_back(waitParity);
      std::string w = std::to_string(ops.size() - 1), par = std::to_string(ops.size());
      cons += ",r,r";
      text = ".reg .pred free;\n@!p bra TMA_GO_${:uid};\nTMA_FREE_${:uid}:\n"
             "mbarrier.try_wait.parity.shared::cta.b64 free, [$" + w + "], $" +
             par + ";\n@!free bra TMA_FREE_${:uid};\nTMA_GO_${:uid}:\n" +
             expect + copies;
    }
    // Only warp 0 (the producer warp) enters: a predicated bulk copy makes
    // ptxas loop over the warp's threads (ELECT, vote, branch) in every warp
    // that reaches it.
    auto inWarp0 = scf::IfOp::create(
        rw, loc,
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::eq,
                              ownWarp0 ? ki.warp : ki.ctaWarp,
                              c32(producer ? ki.consumerWarps() : 0)),
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
      bool asA = use.getOperandNumber() == 0 && op.getInnerDim() == 1;
      if (!dot || !(use.getOperandNumber() == 1 || asA))
        return op.emitError("a tma_wait result may only be a dot's B operand "
                            "or, with inner_dim 1, its A operand");
    }
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    FailureOr<TmaSlot *> found = slotOf(op, "tma_wait", op.getSlot(), state, ki);
    if (failed(found))
      return failure();
    TmaSlot &slot = **found;
    Value barrier = slot.barrierOf(rw, loc, a.getStage());
    ptx(rw, loc, Type(), ValueRange{barrier, a.getPhase()},
        "{\n.reg .pred done;\nTMA_WAIT_${:uid}:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@!done bra TMA_WAIT_${:uid};\n}",
        "r,r", /*sideEffects=*/true);
    Value buffer = slot.bufferOf(rw, loc, a.getStage());
    // The slot's part of the tile (a box may stop short of a padded tile).
    SmallVector<int64_t> inSlot(op.getType().getShape());
    inSlot[op.getInnerDim()] =
        std::min(inSlot[op.getInnerDim()], slot.rowElems);
    TileType boxType = TileType::get(op.getContext(), inSlot,
                                     op.getType().getElementType(),
                                     op.getType().getEncoding());
    if (op.getClipColumns())
      zeroColumnsFrom(rw, loc, ki, buffer, a.getValid(), boxType,
                      op.getInnerDim());
    else
      zeroRowsFrom(rw, loc, ki, buffer, a.getValid(), boxType,
                   op.getInnerDim());
    // No registers: the dot reads the slot.
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, vt, rw.getZeroAttr(vt));
    return success();
  }
};
struct TmaReleaseLowering : TilePattern<TmaReleaseOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(TmaReleaseOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    KernelInfo &ki = kernel(op);
    if (int64_t(op.getSlot()) >= int64_t(ki.slots.size()) ||
        !ki.slots[op.getSlot()].hasEmpty)
      return op.emitError("tma_release of a slot without empty barriers "
                          "(only rings of warp-specialized kernels have them)");
    TmaSlot &slot = ki.slots[op.getSlot()];
    Location loc = op.getLoc();
    // A negative stage (none yet, in a loop carrying its dot's stage)
    // releases nothing: a predicate, not a branch, which would split
    // ptxas's wgmma pipeline.
    Value stage = a.getStage(), zero = i32Const(rw, loc, 0);
    Value some = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::sge,
                                       stage, zero);
    Value go = arith::AndIOp::create(
        rw, loc, isLane0(rw, loc, ki),
        arith::ExtUIOp::create(rw, loc, rw.getI32Type(), some));
    arrive(rw, loc, go,
           slot.emptyOf(rw, loc, arith::SelectOp::create(rw, loc, some, stage, zero)));
    rw.eraseOp(op);
    return success();
  }
};
} // namespace

void lowering::populateTmaPatterns(TypeConverter &tc, RewritePatternSet &p,
                                   LoweringState &s) {
  p.add<TmaCopyLowering, TmaWaitLowering, TmaReleaseLowering>(
      tc, p.getContext(), s);
  populateTmaStorePatterns(tc, p, s);
}
