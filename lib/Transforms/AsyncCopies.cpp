//===- AsyncCopies.cpp - cp.async rings for mma.sync dots' B operands -----===//
//
// Kernels whose schedule has cp_async = true. A tile.load in an scf.for
// body whose only readers are B operands (directly or through a trans:
// K of Q·Kᵀ) of dots that lower to mma.sync
// (sm_80, or on sm_90a dots that cannot be wgmma: M below 64 rows per
// warpgroup, as decode's 16) and whose address depends only on the
// induction variable (gathers through index loads included) becomes a
// ring of `num_stages` shared-memory stages filled by cp.async:
//
//   before the loop:  copies of iterations 0 .. S-2, one commit each
//   top of body i:    wait_group S-2 + CTA barrier   (copy i landed; stage
//                     (i-1) % S is no longer read)
//                     copies of iteration i + S-1 into that stage, commit
//   the load:         the view of stage i % S, which mma.sync reads with
//                     ldmatrix in place
//   after the loop:   wait_group 0 + barrier
//
// Cost model: register prefetch (tile-pipeline-loads) holds the next
// block in registers across the body (decode at BN = 128, D = 128: 128 of
// 255 registers) and issues it only after the body's math; the ring holds
// S - 1 blocks in flight in shared memory from the top of the body, costs
// S stages of rows padded by 16 bytes (fewer CTAs per SM) and one CTA
// barrier per iteration, and skips the store of B into shared memory the
// mma.sync lowering otherwise does. Masked elements read as zero
// (src-size 0: nothing is read).
//
// Stages: the schedule's num_stages, fewer (down to 2) where a kernel's
// rings would not fit in the target's shared memory less kScratchBytes;
// loads whose rings still do not fit stay loads. With remarks, each load a
// dot reads in a loop of such a kernel that stays a load says why.
//
//===----------------------------------------------------------------------===//
#include "lib/Analysis/AxisInfo.h"
#include "lib/Transforms/LoopSlice.h"
#include "lib/Transforms/Passes.h"
#include "dialects/tile/TargetInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEASYNCCOPIES
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Shared memory left for the lowering's temporaries (cross-warp
/// reductions, layout conversions, the A staging of other dots).
constexpr int64_t kScratchBytes = 16 * 1024;

struct Candidate {
  mutable LoadOp load;
  unsigned inner = 0;      ///< contiguous dimension
  SmallVector<Operation *> slice;
  int64_t stageBytes() const {
    auto t = cast<TileType>(load.getType());
    return t.getDimSize(1 - inner) * (t.getDimSize(inner) + 8) *
           (t.getElementTypeBitWidth() / 8);
  }
};

bool isZeroTile(Value v) {
  if (!v)
    return true;
  auto full = v.getDefiningOp<FullOp>();
  if (!full)
    return false;
  Attribute a = full.getValue();
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValue().isZero() && !f.getValue().isNegative();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getValue().isZero();
  return false;
}

/// Why `ld` cannot become a ring (empty: it can).
std::string problem(scf::ForOp loop, LoadOp ld, bool sm90, int64_t warps,
                    const AxisAnalysis &axes, Candidate &c) {
  auto t = cast<TileType>(ld.getType());
  if (t.getRank() != 2 || !(t.getElementType().isF16() || t.getElementType().isBF16()))
    return "cp.async rings hold 2-D f16/bf16 tiles";
  if (ld->use_empty())
    return "it has no reader";
  // Readers: dots' B operands, directly or through one trans (K of
  // Q·Kᵀ), in the load's block.
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : ld->getUses()) {
    auto tr = dyn_cast<TransOp>(use.getOwner());
    if (!tr || tr->getBlock() != ld->getBlock() || tr->use_empty()) {
      uses.push_back(&use);
      continue;
    }
    for (OpOperand &u : tr->getUses())
      uses.push_back(&u);
  }
  for (OpOperand *use : uses) {
    auto dot = dyn_cast<DotOp>(use->getOwner());
    if (!dot || use->getOperandNumber() != 1 || dot.getA() == use->get() ||
        dot->getBlock() != ld->getBlock())
      return "its readers are not all B operands of dots in its loop body "
             "(directly or through a trans)";
    int64_t m = cast<TileType>(dot.getA().getType()).getDimSize(0);
    if (sm90 && !(warps % 4 || m < 16 * warps || m % 64))
      return "its dot can run on wgmma (TMA rings or register staging serve "
             "it; cp.async rings feed mma.sync)";
  }
  if (!isZeroTile(ld.getOther()))
    return "its masked elements are not zero";
  std::optional<unsigned> dim = axes.contiguousDim(ld.getPtr());
  if (!dim)
    return "no dimension of its addresses is contiguous";
  if (t.getDimSize(*dim) < 8)
    return "its rows are shorter than 16 bytes";
  if (axes.vectorWidth(ld.getPtr(), ld.getMask(), ld.getOther(), *dim, 8) < 2)
    return "its addresses or mask do not allow 4-byte copies";
  FailureOr<SmallVector<Operation *>> slice = addressSlice(loop, ld);
  if (failed(slice))
    return "its address depends on a value the loop carries or on an op "
           "with side effects";
  c.load = ld;
  c.inner = *dim;
  c.slice = std::move(*slice);
  return "";
}

/// The iteration number of `iv` (i32): (iv - lb) / step, in iv's type.
Value iterationOf(OpBuilder &b, Location loc, scf::ForOp loop, Value iv) {
  Value i = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, iv, loop.getLowerBound()),
      loop.getStep());
  Type i32 = b.getI32Type();
  if (i.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, i32, i);
  if (i.getType() != i32)
    return arith::TruncIOp::create(b, loc, i32, i);
  return i;
}

Value ivConst(OpBuilder &b, Location loc, Type t, int64_t v) {
  if (t.isIndex())
    return arith::ConstantIndexOp::create(b, loc, v);
  return arith::ConstantIntOp::create(b, loc, t, v);
}

/// The copies of every candidate for iteration `iv` into stage `stage`,
/// and their commit.
void copiesAt(OpBuilder &b, scf::ForOp loop, ArrayRef<Candidate> cands,
              ArrayRef<Operation *> slice, ArrayRef<int64_t> slots,
              int64_t stages, Value iv, Value stage) {
  IRMapping map;
  Value inRange =
      cloneSliceAt(b, loop, slice, loop.getInductionVar(), iv, map);
  for (auto [c, slot] : llvm::zip(cands, slots)) {
    Location loc = c.load.getLoc();
    auto t = cast<TileType>(c.load.getPtr().getType());
    Value mask = andSplat(b, loc, t.getShape(), inRange,
                          c.load.getMask() ? map.lookupOrDefault(c.load.getMask())
                                           : Value());
    AsyncCopyOp::create(b, loc, map.lookupOrDefault(c.load.getPtr()), stage,
                        mask, slot, stages, c.inner);
  }
  AsyncCommitOp::create(b, loop.getLoc());
}

void rewrite(scf::ForOp loop, ArrayRef<Candidate> cands,
             ArrayRef<int64_t> slots, int64_t stages) {
  // One slice for all: the loads' address ops (shared rows, page ids)
  // are cloned once per iteration.
  llvm::SetVector<Operation *> all;
  for (const Candidate &c : cands)
    all.insert(c.slice.begin(), c.slice.end());
  SmallVector<Operation *> slice(all.begin(), all.end());
  llvm::sort(slice, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  Location loc = loop.getLoc();
  Type ivType = loop.getInductionVar().getType();
  auto i32 = [&](OpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };

  OpBuilder pre(loop);
  for (int64_t s = 0; s + 1 < stages; ++s) {
    Value iv = arith::AddIOp::create(
        pre, loc, loop.getLowerBound(),
        arith::MulIOp::create(pre, loc, loop.getStep(),
                              ivConst(pre, loc, ivType, s)));
    copiesAt(pre, loop, cands, slice, slots, stages, iv, i32(pre, s));
  }

  OpBuilder top = OpBuilder::atBlockBegin(loop.getBody());
  AsyncWaitOp::create(top, loc, stages - 2);
  Value iv = loop.getInductionVar();
  Value i = iterationOf(top, loc, loop, iv);
  Value ahead = arith::AddIOp::create(
      top, loc, iv,
      arith::MulIOp::create(top, loc, loop.getStep(),
                            ivConst(top, loc, ivType, stages - 1)));
  Value nextStage = arith::RemUIOp::create(
      top, loc, arith::AddIOp::create(top, loc, i, i32(top, stages - 1)),
      i32(top, stages));
  copiesAt(top, loop, cands, slice, slots, stages, ahead, nextStage);
  Value stage = arith::RemUIOp::create(top, loc, i, i32(top, stages));

  for (auto [c, slot] : llvm::zip(cands, slots)) {
    OpBuilder at(c.load);
    Value view = AsyncViewOp::create(at, c.load.getLoc(), c.load.getType(),
                                     stage, slot, c.inner);
    c.load.getResult().replaceAllUsesWith(view);
    c.load->erase();
  }
  OpBuilder post(loop->getContext());
  post.setInsertionPointAfter(loop);
  AsyncWaitOp::create(post, loc, 0);
}

struct AsyncCopiesPass
    : public mlir::tile::impl::TileAsyncCopiesBase<AsyncCopiesPass> {
  using TileAsyncCopiesBase::TileAsyncCopiesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool remark = remarks || module->hasAttr(kRemarksAttr);
    bool sm90 = targetsSm90a(module, arch);
    StringRef target = arch;
    if (target.empty())
      if (auto a = module->getAttrOfType<StringAttr>(kArchAttr))
        target = a.getValue();
    int64_t budget = targetInfo(target).sharedPerBlock - kScratchBytes;
    module.walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(kKernelAttr) || !getSchedule(fn).getCpAsync())
        return;
      AxisAnalysis axes(fn);
      int64_t warps = getNumWarps(fn);
      int64_t stages = getSchedule(fn).getNumStages();
      int64_t used = 0, slot = 0;
      SmallVector<scf::ForOp> loops;
      fn.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops) {
        auto stays = [&](LoadOp ld, const Twine &why) {
          bool readByDot = llvm::any_of(
              ld->getUsers(), [](Operation *u) { return isa<DotOp>(u); });
          if (remark && readByDot)
            ld.emitRemark("dot operand load stays off cp.async: ") << why;
        };
        SmallVector<Candidate> cands;
        for (LoadOp ld : loop.getBody()->getOps<LoadOp>()) {
          if (loop->hasAttr(kPersistentAttr)) {
            stays(ld, "its loop is the loop over programs");
            continue;
          }
          Candidate c;
          std::string why = problem(loop, ld, sm90, warps, axes, c);
          if (why.empty())
            cands.push_back(std::move(c));
          else
            stays(ld, why);
        }
        if (cands.empty())
          continue;
        // Stages for this loop: as many as fit with the rings before it;
        // the last loads stay loads while even two do not fit.
        int64_t bytes = 0;
        for (const Candidate &c : cands)
          bytes += c.stageBytes();
        int64_t s = stages;
        while (s > 2 && used + s * bytes > budget)
          --s;
        while (!cands.empty() && used + s * bytes > budget) {
          bytes -= cands.back().stageBytes();
          stays(cands.back().load,
                Twine("its ring does not fit in shared memory (") +
                    Twine(budget / 1024) + " KiB for rings)");
          cands.pop_back();
        }
        if (cands.empty())
          continue;
        used += s * bytes;
        SmallVector<int64_t> slots;
        for (size_t k = 0; k < cands.size(); ++k)
          slots.push_back(slot++);
        rewrite(loop, cands, slots, s);
      }
    });
  }
};
} // namespace
