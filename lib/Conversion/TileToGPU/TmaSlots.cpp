//===- TmaSlots.cpp - shared memory, barriers and tensor maps of TMA slots ===//
//
// Each slot of a kernel (its tile.tma_copy ops, or its tile.tma_store)
// owns, from the start of dynamic shared memory (1024-byte aligned), its
// tile buffer (`stages` stages, or one per program of the CTA in a
// one-stage slot of several programs), then every slot's barriers: per
// stage a "full" mbarrier and, where the slot has them, an "empty" one.
// Thread 0 initialises them before a CTA barrier. Its tensor map is a
// hidden kernel parameter the launcher encodes on the host (a 128-byte
// CUtensorMap passed by value: `tile.tensor_maps` on the gpu.func says
// how, the manifest's `tensorMaps` tells the runtime), so no program
// builds one.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/Tma.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
int64_t roundUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

Value offsetBy(OpBuilder &b, Location loc, Value base, Value stage,
               int64_t bytes) {
  return arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, stage, i32Const(b, loc, bytes)));
}

/// What a slot holds, from its copies or its store (all agree).
struct SlotUse {
  Operation *op = nullptr; ///< the first copy or store of the slot
  Value base;
  SmallVector<int64_t> shape;
  int64_t inner = 0, rowStride = 0, stages = 1;
  bool wholeRows = false;           ///< boxes start at a column (`col`)
  SmallVector<int64_t> strideArgs;  ///< a run-time stride's arguments
  int64_t rowElems = 0;             ///< a padded box's tensor rows
  int64_t eltBytes() const {
    return byteSize(cast<PtrType>(base.getType()).getPointeeType());
  }
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
    bytes[s] = ofSlot[s].shape[0] * ofSlot[s].shape[1] * ofSlot[s].eltBytes();
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
        int64_t(cast<BlockArgument>(c.base).getArgNumber()), c.eltBytes(),
        c.wholeRows ? 0 : c.rowElems ? c.rowElems : inner, c.rowStride,
        128 / c.eltBytes(), outer};
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
    k.slots[s].rowElems = ofSlot[s].shape[ofSlot[s].inner];
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
