//===- TmaToGPU.cpp - tile.tma_copy / tile.tma_wait as sm_90a TMA ----------===//
//
// Each slot of a kernel owns, from the start of dynamic shared memory
// (1024-byte aligned), its tile buffer (`stages` stages) and per stage a
// "full" mbarrier (the copy landed: thread 0's expect_tx and the copy's
// bytes) and, in rings of three or more stages, an "empty" one (every warp
// passed a copy point: one arrival per warp). Its tensor map is a hidden
// kernel parameter the launcher encodes on the host (a 128-byte CUtensorMap
// passed by value: `tile.tensor_maps` on the gpu.func says how, the
// manifest's `tensorMaps` tells the runtime), so no program builds one.
// With three or more stages, at copy `iter` every warp arrives on the empty
// barrier of stage iter % stages and thread 0 waits until every warp has
// passed copy iter - (stages - 2) (no CTA barrier: the other warps never
// wait for it); with two stages (and in a one-stage slot, copied once) a
// CTA barrier precedes the copy. Thread 0 then starts the copy (expect_tx
// on the stage's full barrier, then one cp.async.bulk.tensor per
// 64-element slab of a row); every thread waits on the barrier's phase
// parity, then the rows past the valid ones are zeroed. wgmma reads the
// slot in place, as a dot's B or (K contiguous) A operand (WgmmaToGPU.cpp),
// so tma_wait yields no registers. A one-stage slot in a kernel running
// cta_programs > 1 programs per CTA has a buffer and a barrier per
// program (tma_a in the loop over programs): lane 0 of each program's
// first warp copies, after the program's own barrier.
//
// A tile.tma_store's slot is one buffer, no barriers (tile-tma-loads makes
// them for stores of whole rows): the threads write the tile into it with
// the same swizzle, fence it for the async proxy and meet at a barrier;
// one thread then starts a bulk copy to global memory per slab and commits
// it as a bulk group, and waits for the group's reads before the buffer is
// written again (and for the copies at the kernel's exit). Where each
// warpgroup holds its own rows, each does this on its own, with a named
// barrier of its 128 threads and a box of its rows.
//
// Warp-specialized kernels (tile.warp_specialize): every ring has empty
// barriers, one arrival per consumer warp at each tile.tma_release (placed
// where the dot reading the stage is complete); a `producer` copy is
// issued by lane 0 of the producer warp once every consumer warp released
// the copy the stage held (for two stages too), and no consumer warp ever
// waits for another except at CTA barriers of the consumers.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
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

Value offsetBy(OpBuilder &b, Location loc, Value base, Value stage,
               int64_t bytes) {
  return arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, stage, i32Const(b, loc, bytes)));
}

/// The copy landed the whole box, but the tile keeps only its first `valid`
/// rows: where fewer, the threads zero the 128-byte rows from max(valid, 0)
/// on in every slab (a whole row, whatever its swizzle), make that visible
/// to the async proxy (wgmma, later copies) and meet at a CTA barrier.
/// `valid` is the same in every thread.
void zeroRowsFrom(OpBuilder &b, Location loc, KernelInfo &ki, Value buffer,
                  Value valid, TileType tile, int64_t innerDim, int64_t warps) {
  int64_t rows = tile.getDimSize(1 - innerDim);
  int64_t slabs = tile.getDimSize(innerDim) / kSlabElems;
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  auto partial = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, valid, c32(rows)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(partial.thenBlock()->getTerminator());
  // Thread t writes 16 bytes (t % 8) of rows first + t / 8, + 4 * warps, ...
  Value tid = arith::AddIOp::create(
      b, loc, ki.lane, arith::MulIOp::create(b, loc, ki.warp, c32(32)));
  Value first = arith::AddIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, valid, c32(0)),
      arith::ShRUIOp::create(b, loc, tid, c32(3)));
  Value chunk = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, tid, c32(7)), c32(16));
  auto idx = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto loop = scf::ForOp::create(b, loc, idx(first), idx(c32(rows)),
                                 idx(c32(4 * warps)));
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value row = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                           loop.getInductionVar());
    Value at = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, buffer, chunk),
        arith::MulIOp::create(b, loc, row, c32(128)));
    for (int64_t s = 0; s < slabs; ++s)
      ptx(b, loc, Type(),
          ValueRange{arith::AddIOp::create(b, loc, at, c32(s * rows * 128)), c32(0)},
          "st.shared.v4.b32 [$0], {$1, $1, $1, $1};", "r,r", true);
  }
  ptx(b, loc, Type(), ValueRange{}, "fence.proxy.async.shared::cta;", "", true);
  ctaBarrier(b, loc, ki);
}

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

/// The shared-memory slot `slot` of a TMA op's kernel, or an error at `op`
/// (`what` names it) off sm_90a or where the kernel has no such slot.
FailureOr<TmaSlot *> slotOf(Operation *op, StringRef what, int64_t slot,
                            const LoweringState &state, KernelInfo &ki) {
  if (state.arch != "sm_90a")
    return op->emitError(what) << " needs sm_90a, not " << state.arch;
  if (slot >= int64_t(ki.slots.size()))
    return op->emitError(what) << " slot without shared memory";
  return &ki.slots[slot];
}

/// The x coordinate of slab `s` (64 columns) of a box: a constant, or with
/// a first column `col` (a box inside a longer row) an operand appended to
/// `ops` and named by its number in ptxIf's asm (its $0 is the predicate,
/// so ops[i] is $(i + 1)).
std::string slabColumn(OpBuilder &b, Location loc, Value col, int64_t s,
                       SmallVectorImpl<Value> &ops) {
  if (!col)
    return std::to_string(s * kSlabElems);
  ops.push_back(s ? Value(arith::AddIOp::create(b, loc, col,
                                                i32Const(b, loc, s * kSlabElems)))
                  : col);
  return "$" + std::to_string(ops.size());
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
    int64_t eltBytes = 2;
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
    int64_t slabs = inner / kSlabElems;
    std::string copies;
    SmallVector<Value> ops = {barrier, slot.map, coord};
    for (int64_t s = 0; s < slabs; ++s) {
      ops.push_back(arith::AddIOp::create(rw, loc, buffer, c32(s * outer * 128)));
      std::string dst = std::to_string(ops.size());
      std::string x = slabColumn(rw, loc, a.getCol(), s, ops);
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
    zeroRowsFrom(rw, loc, ki, slot.bufferOf(rw, loc, a.getStage()), a.getValid(),
                 op.getType(), op.getInnerDim(), ki.warps);
    // No registers: the dot reads the slot.
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, vt, rw.getZeroAttr(vt));
    return success();
  }
};

/// Whether register pairs (2i, 2i + 1) of `l` hold columns (c, c + 1) of a
/// row with c even, so that 16-bit elements go to shared memory in words.
bool pairsAlongRows(LayoutAttr l) {
  if (l.getRank() != 2 || l.getNumRegs() % 2 ||
      regCoords(l, 1) != SmallVector<int64_t>{0, 1})
    return false;
  auto evenCols = [](ArrayRef<int64_t> bases) {
    for (size_t i = 1; i < bases.size(); i += 2)
      if (bases[i] & 1)
        return false;
    return true;
  };
  for (int64_t r = 2; r < l.getNumRegs(); r *= 2)
    if (regCoords(l, r)[1] & 1)
      return false;
  return evenCols(l.getLanes()) && evenCols(l.getWarps());
}

/// Warp groups that store their rows on their own: warpgroups (4 warps)
/// whose rows of `l` (`rows` in all) are one block each, rows / groups
/// apart (the wgmma accumulator layout of 8 or more warps); else 1 (every
/// warp of the program together).
int64_t storeGroups(LayoutAttr l, int64_t rows, int64_t warps) {
  if (l.getRank() != 2 || warps % 4 || warps < 8)
    return 1;
  int64_t groups = warps / 4, per = rows / groups;
  if (rows % groups || per % 8)
    return 1;
  auto within = [&](ArrayRef<int64_t> bases, size_t from, size_t to) {
    for (size_t i = from; i < to && 2 * i < bases.size(); ++i)
      if (bases[2 * i] >= per)
        return false;
    return true;
  };
  ArrayRef<int64_t> w = l.getWarps();
  if (!within(l.getLanes(), 0, l.getNumLaneBits()) || !within(w, 0, 2))
    return 1;
  for (int64_t r = 1; r < l.getNumRegs(); r *= 2)
    if (regCoords(l, r)[0] >= per)
      return 1;
  for (size_t i = 2; 2 * i < w.size(); ++i)
    if (w[2 * i] != per << (i - 2) || w[2 * i + 1] != 0)
      return 1;
  return groups;
}

struct TmaStoreLowering : TilePattern<TmaStoreOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(TmaStoreOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    FailureOr<TmaSlot *> found = slotOf(op, "tma_store", op.getSlot(), state, ki);
    if (failed(found))
      return failure();
    if (ki.members > 1)
      return op.emitError("tma_store in a CTA of several programs");
    TmaSlot &slot = **found;
    auto type = cast<TileType>(op.getValue().getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    LayoutAttr l = layoutOf(op.getValue());
    auto c32 = [&](int64_t v) { return i32Const(rw, loc, v); };
    // Each group of warps (a warpgroup of the accumulator layout, or all
    // of them) copies its own rows, `per` from row `group * per`: the
    // first thread of the group issues, the group's barrier orders.
    int64_t groups = storeGroups(l, rows, ki.warps), per = rows / groups;
    Value group = c32(0), issuer = ki.isFirstThread;
    if (groups > 1) {
      group = arith::ShRUIOp::create(rw, loc, ki.warp, c32(2));
      issuer = arith::ExtUIOp::create(
          rw, loc, rw.getI32Type(),
          arith::CmpIOp::create(
              rw, loc, arith::CmpIPredicate::eq,
              arith::OrIOp::create(rw, loc, ki.lane,
                                   arith::AndIOp::create(rw, loc, ki.warp, c32(3))),
              c32(0)));
    }
    auto barrier = [&] {
      if (groups == 1)
        return ctaBarrier(rw, loc, ki);
      ptx(rw, loc, Type(),
          ValueRange{arith::AddIOp::create(rw, loc, group, c32(kStoreBarrier))},
          "bar.sync $0, 128;", "r", /*sideEffects=*/true);
    };
    // The group's previous copy from the buffer has read it (its issuer
    // waits), and the group knows.
    ptxIf(rw, loc, issuer, ValueRange{}, "@p cp.async.bulk.wait_group.read 0;", "");
    barrier();
    // Each thread writes its elements where the copy's 128-byte swizzle
    // reads them: 16-byte chunk (c / 8) % 8 of row r sits at chunk
    // ((c / 8) % 8) ^ (r % 8), each slab of 64 columns after the last.
    SmallVector<Value> vals = unpack(rw, loc, a.getValue());
    Type elt = cast<VectorType>(a.getValue().getType()).getElementType();
    Value r0 = threadCoord(rw, loc, ki, l, 0), c0 = threadCoord(rw, loc, ki, l, 1);
    bool pairs = pairsAlongRows(l);
    for (int64_t reg = 0; reg < int64_t(vals.size()); reg += pairs ? 2 : 1) {
      Value r = elementCoord(rw, loc, r0, l, reg, 0);
      Value c = elementCoord(rw, loc, c0, l, reg, 1);
      auto shr = [&](Value v, int64_t n) {
        return arith::ShRUIOp::create(rw, loc, v, c32(n));
      };
      auto band = [&](Value v, int64_t m) {
        return arith::AndIOp::create(rw, loc, v, c32(m));
      };
      Value chunk = arith::XOrIOp::create(rw, loc, band(shr(c, 3), 7), band(r, 7));
      Value at = arith::AddIOp::create(
          rw, loc, slot.buffer,
          arith::AddIOp::create(
              rw, loc,
              arith::MulIOp::create(rw, loc, shr(c, 6), c32(rows * 128)),
              arith::AddIOp::create(
                  rw, loc, arith::MulIOp::create(rw, loc, r, c32(128)),
                  arith::AddIOp::create(
                      rw, loc, arith::ShLIOp::create(rw, loc, chunk, c32(4)),
                      arith::MulIOp::create(rw, loc, band(c, 7), c32(2))))));
      if (pairs) {
        Value word = toWords(rw, loc, ArrayRef(vals).slice(reg, 2), elt, 1)[0];
        ptx(rw, loc, Type(), ValueRange{at, word}, "st.shared.b32 [$0], $1;",
            "r,r", /*sideEffects=*/true);
      } else {
        Value half = arith::BitcastOp::create(rw, loc, rw.getI16Type(), vals[reg]);
        ptx(rw, loc, Type(), ValueRange{at, half}, "st.shared.b16 [$0], $1;",
            "r,h", /*sideEffects=*/true);
      }
    }
    // Visible to the copy (the async proxy), then the group's issuer
    // copies each slab of 64 columns of its rows.
    ptx(rw, loc, Type(), ValueRange{}, "fence.proxy.async.shared::cta;", "",
        /*sideEffects=*/true);
    barrier();
    Value first = arith::MulIOp::create(rw, loc, group, c32(per));
    Value rowsAt = arith::AddIOp::create(
        rw, loc, slot.buffer, arith::MulIOp::create(rw, loc, first, c32(128)));
    SmallVector<Value> ops = {slot.map,
                              arith::AddIOp::create(rw, loc, a.getCoord(), first)};
    std::string text, cons = "l,r";
    for (int64_t s = 0; s < cols / kSlabElems; ++s) {
      ops.push_back(arith::AddIOp::create(rw, loc, rowsAt, c32(s * rows * 128)));
      size_t at = ops.size();
      std::string x = slabColumn(rw, loc, a.getCol(), s, ops);
      text += "@p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {" +
              x + ", $2}], [$" + std::to_string(at) + "];\n";
    }
    for (size_t i = 2; i < ops.size(); ++i)
      cons += ",r";
    text += "@p cp.async.bulk.commit_group;";
    ptxIf(rw, loc, issuer, ops, text, cons);
    rw.eraseOp(op);
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

namespace {
/// What a slot holds, from its copies or its store (all agree).
struct SlotUse {
  Operation *op = nullptr; ///< the first copy or store of the slot
  Value base;
  SmallVector<int64_t> shape;
  int64_t inner = 0, rowStride = 0, stages = 1;
  bool wholeRows = false;           ///< boxes start at a column (`col`)
  SmallVector<int64_t> strideArgs;  ///< a run-time stride's arguments
  int64_t rowElems = 0;             ///< a padded box's tensor rows
  bool agrees(const SlotUse &o) const {
    return base == o.base && shape == o.shape && inner == o.inner &&
           rowStride == o.rowStride && stages == o.stages &&
           wholeRows == o.wholeRows && strideArgs == o.strideArgs &&
           rowElems == o.rowElems;
  }
};
SmallVector<int64_t> argsOf(std::optional<ArrayRef<int64_t>> a) {
  return a ? llvm::to_vector(*a) : SmallVector<int64_t>();
}
SlotUse useOf(TmaCopyOp c) {
  return {c,
          c.getBase(),
          llvm::to_vector(c.getShape()),
          int64_t(c.getInnerDim()),
          int64_t(c.getRowStride()),
          int64_t(c.getStages()),
          bool(c.getCol()),
          argsOf(c.getStrideArgs()),
          int64_t(c.getRowElems().value_or(0))};
}
SlotUse useOf(TmaStoreOp st) {
  auto t = cast<TileType>(st.getValue().getType());
  return {st,
          st.getBase(),
          llvm::to_vector(t.getShape()),
          int64_t(st.getInnerDim()),
          int64_t(st.getRowStride()),
          1,
          bool(st.getCol()),
          argsOf(st.getStrideArgs()),
          int64_t(st.getRowElems().value_or(0))};
}
} // namespace

LogicalResult lowering::setupTmaSlots(gpu::GPUFuncOp fn, KernelInfo &k) {
  SmallVector<std::pair<int64_t, SlotUse>> uses;
  fn.walk([&](Operation *op) {
    if (auto c = dyn_cast<TmaCopyOp>(op))
      uses.push_back({int64_t(c.getSlot()), useOf(c)});
    else if (auto st = dyn_cast<TmaStoreOp>(op))
      uses.push_back({int64_t(st.getSlot()), useOf(st)});
  });
  Location loc = fn.getLoc();
  if (uses.empty())
    return success();
  OpBuilder b(fn.getContext());
  b.setInsertionPointAfterValue(firstThread(k));
  // Slots, from their copies or store (all copies of a slot agree).
  int64_t numSlots = 0;
  for (auto &u : uses)
    numSlots = std::max<int64_t>(numSlots, u.first + 1);
  SmallVector<SlotUse> ofSlot(numSlots);
  for (auto &[slot, u] : uses) {
    SlotUse &first = ofSlot[slot];
    if (first.op && !first.agrees(u))
      return u.op->emitError("copies of slot ") << slot << " disagree";
    if (!first.op)
      first = u;
  }
  SmallVector<int64_t> bytes(numSlots, 0), stages(numSlots, 2);
  for (int64_t s = 0; s < numSlots; ++s) {
    if (!ofSlot[s].op)
      return fn.emitError("tma slot ") << s << " has no copy";
    bytes[s] = ofSlot[s].shape[0] * ofSlot[s].shape[1] * 2;
    stages[s] = ofSlot[s].stages;
  }

  Value base = dynamicSharedBase(b, loc);
  Value aligned = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, base, i32Const(b, loc, 1023)),
      i32Const(b, loc, -1024));
  auto at = [&](int64_t off) {
    return arith::AddIOp::create(b, loc, aligned, i32Const(b, loc, off));
  };

  // One tensor map per slot: a trailing parameter, described for the
  // launcher in kTensorMapsAttr ([arg, elemBytes, rowElems, rowStride,
  // boxElems, boxRows, strideArgs...]; rowElems 0: rows as long as their
  // stride, for boxes that start at a column); thread 0 prefetches it.
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Attribute> maps;
  k.slots.resize(numSlots);
  for (int64_t s = 0; s < numSlots; ++s) {
    const SlotUse &c = ofSlot[s];
    int64_t inner = c.shape[c.inner], outer = c.shape[1 - c.inner];
    if (auto st = dyn_cast<TmaStoreOp>(c.op)) // each group copies its rows
      outer /= storeGroups(layoutOf(st.getValue()), outer, k.warps);
    SmallVector<int64_t> desc = {
        int64_t(cast<BlockArgument>(c.base).getArgNumber()), 2,
        c.wholeRows ? 0 : c.rowElems ? c.rowElems : inner, c.rowStride,
        kSlabElems, outer};
    desc.append(c.strideArgs);
    maps.push_back(b.getDenseI64ArrayAttr(desc));
    unsigned argIdx = fn.getNumArguments();
    if (failed(fn.insertArgument(argIdx, ptrType, DictionaryAttr(), loc)))
      return failure();
    k.slots[s].map = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(),
                                              fn.getArgument(argIdx));
    ptxIf(b, loc, k.isFirstThread, ValueRange{k.slots[s].map},
          "@p prefetch.tensormap [$1];", "l");
  }
  fn->setAttr(kTensorMapsAttr, b.getArrayAttr(maps));

  int64_t off = 0;
  for (int64_t s = 0; s < numSlots; ++s) {
    k.slots[s].buffer = at(off);
    k.slots[s].stageBytes = roundUp(bytes[s], 1024);
    k.slots[s].stages = stages[s];
    k.slots[s].hasEmpty = stages[s] > 2 || (k.specialized && stages[s] == 2);
    k.slots[s].members = stages[s] == 1 ? k.members : 1;
    k.slots[s].member = k.member;
    k.slots[s].store = isa<TmaStoreOp>(ofSlot[s].op);
    off += stages[s] * k.slots[s].members * k.slots[s].stageBytes;
  }
  for (int64_t s = 0; s < numSlots; ++s) {
    k.slots[s].barrier = at(off);
    k.slots[s].empty = at(off + 8 * stages[s] * k.slots[s].members);
    off += 8 * k.slots[s].numBarriers();
  }
  k.persistentBytes = roundUp(1024 + off, 128);
  k.sharedBytes = std::max(k.sharedBytes, k.persistentBytes);
  // Thread 0 initialises the barriers (full: one arrival per phase, its own
  // expect_tx; empty: one per warp holding tiles); every thread sees them
  // after the barrier.
  std::string init;
  SmallVector<Value> bars;
  std::string cons;
  int64_t warps = k.consumerWarps(); // every program of the CTA releases
  for (int64_t s = 0; s < numSlots; ++s) {
    for (int64_t st = 0; st < k.slots[s].numBarriers(); ++st) {
      init += "@p mbarrier.init.shared::cta.b64 [$" +
              std::to_string(bars.size() + 1) + "], " +
              std::to_string(st < stages[s] * k.slots[s].members ? 1 : warps) +
              ";\n";
      bars.push_back(arith::AddIOp::create(b, loc, k.slots[s].barrier,
                                           i32Const(b, loc, 8 * st)));
      cons += bars.size() > 1 ? ",r" : "r";
    }
  }
  init += "@p fence.mbarrier_init.release.cluster;";
  ptxIf(b, loc, k.isFirstThread, bars, init, cons);
  gpu::BarrierOp::create(b, loc);
  // Stores: shared memory must outlive the copies from it (each thread
  // waits for the copies it issued, if any).
  if (llvm::any_of(uses, [](auto &u) { return isa<TmaStoreOp>(u.second.op); }))
    fn.walk([&](gpu::ReturnOp ret) {
      OpBuilder rb(ret);
      ptx(rb, ret.getLoc(), Type(), ValueRange{}, "cp.async.bulk.wait_group 0;",
          "", /*sideEffects=*/true);
    });
  return success();
}

Value lowering::TmaSlot::bufferOf(OpBuilder &b, Location loc, Value stage) const {
  return offsetBy(b, loc, buffer, members > 1 ? member : stage, stageBytes);
}

Value lowering::TmaSlot::barrierOf(OpBuilder &b, Location loc, Value stage) const {
  return offsetBy(b, loc, barrier, members > 1 ? member : stage, 8);
}

Value lowering::TmaSlot::emptyOf(OpBuilder &b, Location loc, Value stage) const {
  return offsetBy(b, loc, empty, stage, 8);
}

void lowering::populateTmaPatterns(TypeConverter &tc, RewritePatternSet &p,
                                   LoweringState &s) {
  p.add<TmaCopyLowering, TmaWaitLowering, TmaStoreLowering, TmaReleaseLowering>(
      tc, p.getContext(), s);
}
