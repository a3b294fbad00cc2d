//===- PingpongDots.cpp - two warpgroups take turns at the tensor cores ---===//
//
// sm_90a, after tile-async-dots, in kernels of two warpgroups (8 warps).
// Both warpgroups run the same code on their own rows, so left alone they
// issue their wgmma groups at the same time, wait for them at the same
// time and then both do the softmax while the tensor cores idle. Here each
// run of asynchronous dots of a block (from its first dot to its last, up
// to a wait for one of them) becomes a turn:
//
//   tile.turn_wait      // warpgroup g: named barrier 1 + g
//   ... dots of the group (and what lies between them) ...
//   tile.turn_pass      // arrive on the other warpgroup's barrier
//
// and warpgroup 1 passes once at kernel entry, so warpgroup 0 issues first:
// one warpgroup's products run while the other does its elementwise work
// (FlashAttention-3's ping-pong schedule). Turns order the issue only;
// values do not depend on them.
//
// A turn must not hold anything that waits for the other warpgroup, or the
// two would wait for each other: no CTA barrier (a tile.tma_wait may zero
// rows behind one: it moves before the group with the pure scalars it
// reads, or the group ends there; layout conversions, reductions, dots
// that are not asynchronous and ops with regions end a group), and TMA
// copies inside a turn need three or more stages (with two, the issuing
// thread waits for every warp to reach the copy). Turns are made only when
// some run does at least 256 multiply-adds per element of its first
// product (flash_fwd at D = 128: S = Q·Kᵀ and P·V, 128 each; at D = 64,
// 128 in all, they cost 5 %). Schedules opt out with
// pingpong = false. A persistent kernel's ring copies sit in
// scf.ifs (tile-tma-loads), which end a run, so its runs hold one dot each
// and get no turns: letting those ifs into turns made flash_fwd at D = 128
// (128/128/8, producer, persistent) 5-13 % slower on H100.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPINGPONGDOTS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
bool isAsyncDot(Operation *op) {
  auto d = dyn_cast<DotOp>(op);
  return d && d.getAsync();
}

/// Ops of `block` before `op` that `op` needs, in block order, if they are
/// all pure, region-free and lie after `start`: they can move with `op`.
bool collectSlice(Operation *op, Operation *start,
                  llvm::SetVector<Operation *> &slice) {
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != start->getBlock() ||
        def->isBeforeInBlock(start) || slice.contains(def))
      continue;
    if (def == start || !isPure(def) || def->getNumRegions() ||
        !collectSlice(def, start, slice))
      return false;
    slice.insert(def);
  }
  return true;
}

/// Moves a tma_wait (and the pure scalars it reads) before `start`, or
/// with `dryRun` only says whether it could.
bool hoistBefore(TmaWaitOp wait, Operation *start, bool dryRun) {
  llvm::SetVector<Operation *> slice;
  if (!collectSlice(wait, start, slice))
    return false;
  if (dryRun)
    return true;
  SmallVector<Operation *> ops(slice.begin(), slice.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ops)
    op->moveBefore(start);
  wait->moveBefore(start);
  return true;
}

/// Whether `op` may sit inside a turn (lowers without a CTA barrier).
bool allowedInTurn(Operation *op) {
  if (op->getNumRegions() || isa<ConvertLayoutOp, ReduceOp>(op))
    return false;
  if (auto d = dyn_cast<DotOp>(op))
    return d.getAsync();
  return true;
}

/// Multiply-adds per element of the first dot's result: M*N*K summed over
/// the dots, over M*N of the first.
int64_t workPerElement(ArrayRef<DotOp> dots) {
  auto dims = [](DotOp d) {
    auto a = cast<TileType>(d.getA().getType());
    auto c = cast<TileType>(d.getAcc().getType());
    return std::make_tuple(c.getDimSize(0), c.getDimSize(1), a.getDimSize(1));
  };
  auto [m0, n0, k0] = dims(dots.front());
  int64_t macs = 0;
  for (DotOp d : dots) {
    auto [m, n, k] = dims(d);
    macs += m * n * k;
  }
  return macs / std::max<int64_t>(1, m0 * n0);
}

/// Wraps each run of asynchronous dots of `block` in a turn when `make`
/// (else only measures); returns the largest work per element of a run.
int64_t makeTurns(Block &block, OpBuilder &b, bool make) {
  int64_t most = 0;
  for (Operation *op = &block.front(); op; op = op->getNextNode()) {
    if (!isAsyncDot(op))
      continue;
    Operation *start = op, *end = op;
    llvm::SmallPtrSet<Operation *, 4> dots = {op};
    SmallVector<DotOp> inOrder = {cast<DotOp>(op)};
    for (Operation *cur = op->getNextNode(); cur && !cur->hasTrait<OpTrait::IsTerminator>();) {
      Operation *next = cur->getNextNode();
      if (isAsyncDot(cur)) {
        dots.insert(cur);
        inOrder.push_back(cast<DotOp>(cur));
        end = cur;
      } else if (auto w = dyn_cast<DotWaitOp>(cur)) {
        Operation *src = w.getSrc().getDefiningOp();
        if (src && dots.contains(src))
          break;
      } else if (auto tw = dyn_cast<TmaWaitOp>(cur)) {
        if (!hoistBefore(tw, start, /*dryRun=*/!make))
          break;
      } else if (!allowedInTurn(cur)) {
        break;
      }
      cur = next;
    }
    most = std::max(most, workPerElement(inOrder));
    if (make) {
      b.setInsertionPoint(start);
      TurnWaitOp::create(b, start->getLoc());
      b.setInsertionPointAfter(end);
      TurnPassOp::create(b, end->getLoc(), /*first=*/false);
      end = end->getNextNode(); // the turn_pass
    }
    op = end;
  }
  return most;
}

/// Multiply-adds per element of a turn's first product below which turns
/// are not made.
constexpr int64_t kMinWorkPerElement = 256;

struct PingpongDotsPass
    : public mlir::tile::impl::TilePingpongDotsBase<PingpongDotsPass> {
  using TilePingpongDotsBase::TilePingpongDotsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!targetsSm90a(module, arch))
      return;
    module.walk([&](func::FuncOp fn) {
      // Turns are named barriers of the CTA's two warpgroups: not with
      // several programs per CTA (cta_programs).
      if (fn.isExternal() || getNumWarps(fn) != 8 ||
          !getSchedule(fn).getPingpong() ||
          getSchedule(fn).getCtaPrograms() > 1)
        return;
      bool asyncDots = false, twoStages = false;
      fn.walk([&](Operation *op) {
        asyncDots |= isAsyncDot(op);
        // One-stage slots are filled once, in the kernel's body before any
        // turn (tile-tma-loads); their CTA barrier holds no turn.
        if (auto c = dyn_cast<TmaCopyOp>(op))
          twoStages |= c.getStages() == 2 ||
                       (c.getStages() == 1 && !isa<func::FuncOp>(c->getParentOp()));
      });
      if (!asyncDots || twoStages)
        return;
      OpBuilder b(fn.getContext());
      SmallVector<Block *> blocks;
      fn.walk([&](Block *block) {
        if (!block->empty())
          blocks.push_back(block);
      });
      // Turns pay off when a warpgroup's products take about as long as
      // the other's elementwise work: measured on H100, flash_fwd gains at
      // D = 128 (256 multiply-adds per score: +5-9 %) and loses at D = 64
      // (128: -5 %).
      int64_t most = 0;
      for (Block *block : blocks)
        most = std::max(most, makeTurns(*block, b, /*make=*/false));
      if (most < kMinWorkPerElement)
        return;
      for (Block *block : blocks)
        makeTurns(*block, b, /*make=*/true);
      b.setInsertionPointToStart(&fn.getBody().front());
      TurnPassOp::create(b, fn.getLoc(), /*first=*/true);
    });
  }
};
} // namespace
