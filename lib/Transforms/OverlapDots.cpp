//===- OverlapDots.cpp - accumulate one iteration late --------------------===//
//
// sm_90a, after layouts, before tile-async-dots. In an scf.for whose
// accumulator is yielded by a dot reading a TMA slot (flash_fwd's
// O += P·V), that dot and the ops only it needs (stage 1: the V wait, the
// rescale of the accumulator) run one iteration late, right after the
// first dot of the next iteration (S = Q·Kᵀ):
//
//   prologue:  stage 0 (i = lb)
//   loop i:    stage 0 (i) up to its first dot; stage 1 (i - step);
//              the rest of stage 0 (i)
//   epilogue:  stage 1 (last i)
//
// so that, once both products are asynchronous, the softmax of block i
// runs on the CUDA cores while the tensor cores do P·V of block i - 1
// (FlashAttention-3's intra-warpgroup overlap; not in kernels running
// several programs per CTA, cta_programs > 1). Values stage 1 takes from
// stage 0 travel as new iter_args, except pure functions of the induction
// variable, which stage 1 recomputes for i - step. The whole is guarded by
// `lb < ub` (the prologue waits for copies only a running loop issues).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEOVERLAPDOTS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
struct Plan {
  DotOp dot;                        ///< the accumulating dot (stage 1)
  unsigned acc;                     ///< its iter_arg index
  llvm::SetVector<Operation *> late; ///< stage 1, in body order
  SmallVector<Value> carried;       ///< stage-0 values stage 1 reads
  SmallVector<Operation *> recompute; ///< iv-only ops stage 1 re-runs
};

/// Ops of the body computing `v` from the induction variable and values
/// defined outside the loop only (pure, no regions); failure otherwise.
bool ivOnlySlice(scf::ForOp loop, Value v, llvm::SetVector<Operation *> &out) {
  if (v == loop.getInductionVar())
    return true;
  if (isa<BlockArgument>(v))
    return cast<BlockArgument>(v).getOwner() != loop.getBody();
  Operation *def = v.getDefiningOp();
  if (!loop->isProperAncestor(def))
    return true;
  if (def->getBlock() != loop.getBody() || def->getNumRegions() ||
      !isPure(def))
    return false;
  for (Value o : def->getOperands())
    if (!ivOnlySlice(loop, o, out))
      return false;
  out.insert(def);
  return true;
}

std::optional<Plan> plan(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Plan p;
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    auto d = v.getDefiningOp<DotOp>();
    if (d && d->getBlock() == body && d.getB().getDefiningOp<TmaWaitOp>() &&
        v.hasOneUse()) {
      p.dot = d;
      p.acc = i;
      break;
    }
  }
  if (!p.dot)
    return std::nullopt;
  // Stage 1: the dot and, backwards, every op whose results only it needs
  // (casts stay early: carrying the narrow value is cheaper).
  llvm::SmallPtrSet<Operation *, 16> late = {p.dot};
  for (Operation &op : llvm::reverse(body->getOperations())) {
    if (late.count(&op) || op.getNumResults() == 0 || op.getNumRegions() ||
        isa<CastOp, DotOp>(op))
      continue;
    bool onlyLate = llvm::all_of(op.getUsers(), [&](Operation *u) {
      return late.count(u);
    });
    if (onlyLate && !op.use_empty())
      late.insert(&op);
  }
  // TMA copies into a slot only stage 1 waits on go with it. A slot both
  // stages wait on (one ring read by two products, the backward's Q) keeps
  // its copies in stage 0, which waits first; stage 1 then reads the stage
  // of the iteration before while copy i + 1 fills another one, which
  // takes three stages or more, and no producer warpgroup.
  llvm::SmallDenseSet<int64_t> slots, early;
  for (Operation &op : *body)
    if (auto w = dyn_cast<TmaWaitOp>(op))
      (late.count(&op) ? slots : early).insert(w.getSlot());
  for (Operation &op : *body) {
    std::optional<int64_t> slot = tmaCopySlot(&op);
    if (!slot || !slots.count(*slot))
      continue;
    if (!early.count(*slot)) {
      late.insert(&op);
      continue;
    }
    int64_t stages = 0;
    op.walk([&](TmaCopyOp c) { stages = c.getStages(); });
    if (stages < 3)
      return std::nullopt;
    // A producer warpgroup frees each copy once, after its readers of one
    // iteration (tile-warp-specialize): not a copy read in two.
    if (getSchedule(loop->getParentOfType<func::FuncOp>()).getProducer())
      return std::nullopt;
  }
  for (Operation &op : *body)
    if (late.count(&op))
      p.late.insert(&op);
  // Something to overlap with: stage 0 has a dot of its own (else the
  // asynchronous dot already runs across the loop's back edge).
  if (llvm::none_of(*body, [&](Operation &op) {
        return isa<DotOp>(op) && !late.count(&op);
      }))
    return std::nullopt;
  // Stage 0 must not read the accumulator.
  BlockArgument acc = loop.getRegionIterArgs()[p.acc];
  for (Operation *u : acc.getUsers())
    if (!late.count(u))
      return std::nullopt;
  // What stage 1 reads from stage 0.
  llvm::SetVector<Operation *> recompute;
  llvm::SetVector<Value> carried;
  for (Operation *op : p.late) {
    // Operands, and values a region (an scf.if around a copy) reads.
    llvm::SetVector<Value> reads(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), reads);
    for (Value o : reads) {
      if (o == acc || o == loop.getInductionVar())
        continue;
      Operation *def = o.getDefiningOp();
      bool inBody = isa<BlockArgument>(o)
                        ? cast<BlockArgument>(o).getOwner() == body
                        : def->getBlock() == body;
      if (!inBody || (def && late.count(def)))
        continue;
      llvm::SetVector<Operation *> slice;
      if (ivOnlySlice(loop, o, slice))
        recompute.insert(slice.begin(), slice.end());
      else
        carried.insert(o);
    }
  }
  p.carried.assign(carried.begin(), carried.end());
  p.recompute.assign(recompute.begin(), recompute.end());
  llvm::sort(p.recompute,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return p;
}

/// Clones stage 1 at the builder's point with `iv` for the induction
/// variable; `map` already holds the accumulator and carried values.
void cloneLate(OpBuilder &b, scf::ForOp loop, const Plan &p, Value iv,
               IRMapping &map) {
  map.map(loop.getInductionVar(), iv);
  for (Operation *op : p.recompute)
    b.clone(*op, map);
  for (Operation *op : p.late)
    b.clone(*op, map);
}

void rewrite(scf::ForOp loop, const Plan &p, RewriterBase &rw) {
  Location loc = loop.getLoc();
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  unsigned n = loop.getNumRegionIterArgs();
  rw.setInsertionPoint(loop);
  Value runs =
      arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt, lb, ub);
  auto guard = scf::IfOp::create(rw, loc, loop.getResultTypes(), runs,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(rw);
    rw.setInsertionPointToStart(&guard.getElseRegion().front());
    scf::YieldOp::create(rw, loc, loop.getInitArgs());
  }
  OpBuilder::InsertionGuard g(rw);
  rw.setInsertionPointToStart(&guard.getThenRegion().front());

  // Prologue: stage 0 of the first iteration.
  IRMapping pro;
  pro.map(loop.getInductionVar(), lb);
  for (unsigned k = 0; k < n; ++k)
    pro.map(loop.getRegionIterArgs()[k], loop.getInitArgs()[k]);
  for (Operation &op : body->without_terminator())
    if (!p.late.count(&op))
      rw.clone(op, pro);
  SmallVector<Value> inits;
  for (unsigned k = 0; k < n; ++k)
    inits.push_back(k == p.acc ? loop.getInitArgs()[k]
                               : pro.lookupOrDefault(yield.getOperand(k)));
  for (Value c : p.carried)
    inits.push_back(pro.lookupOrDefault(c));

  // The loop from the second iteration on.
  Value lb1 = arith::AddIOp::create(rw, loc, lb, step);
  auto newLoop = scf::ForOp::create(rw, loc, lb1, ub, step, inits);
  {
    OpBuilder::InsertionGuard g2(rw);
    Block *nb = newLoop.getBody();
    rw.setInsertionPointToStart(nb);
    Value iv = newLoop.getInductionVar();
    IRMapping early, lateMap;
    early.map(loop.getInductionVar(), iv);
    for (unsigned k = 0; k < n; ++k)
      early.map(loop.getRegionIterArgs()[k], newLoop.getRegionIterArgs()[k]);
    lateMap.map(loop.getRegionIterArgs()[p.acc],
                newLoop.getRegionIterArgs()[p.acc]);
    for (auto [j, c] : llvm::enumerate(p.carried))
      lateMap.map(c, newLoop.getRegionIterArgs()[n + j]);
    bool placed = false;
    auto placeLate = [&] {
      Value prev = arith::SubIOp::create(rw, loc, iv, step);
      cloneLate(rw, loop, p, prev, lateMap);
      placed = true;
    };
    for (Operation &op : body->without_terminator()) {
      if (p.late.count(&op))
        continue;
      rw.clone(op, early);
      if (!placed && isa<DotOp>(op))
        placeLate();
    }
    if (!placed)
      placeLate();
    SmallVector<Value> ys;
    for (unsigned k = 0; k < n; ++k)
      ys.push_back(k == p.acc ? lateMap.lookup(Value(p.dot->getResult(0)))
                              : early.lookupOrDefault(yield.getOperand(k)));
    for (Value c : p.carried)
      ys.push_back(early.lookupOrDefault(c));
    scf::YieldOp::create(rw, loc, ys);
  }

  // Epilogue: stage 1 of the last iteration, lb + (ub - lb - 1) / step * step.
  IRMapping epi;
  epi.map(loop.getRegionIterArgs()[p.acc], newLoop.getResult(p.acc));
  for (auto [j, c] : llvm::enumerate(p.carried))
    epi.map(c, newLoop.getResult(n + j));
  Value one = arith::ConstantOp::create(rw, loc, rw.getIntegerAttr(lb.getType(), 1));
  Value span = arith::SubIOp::create(
      rw, loc, arith::SubIOp::create(rw, loc, ub, lb), one);
  Value last = arith::AddIOp::create(
      rw, loc, lb,
      arith::MulIOp::create(rw, loc,
                            arith::DivSIOp::create(rw, loc, span, step), step));
  cloneLate(rw, loop, p, last, epi);
  SmallVector<Value> results;
  for (unsigned k = 0; k < n; ++k)
    results.push_back(k == p.acc ? epi.lookup(Value(p.dot->getResult(0)))
                                 : newLoop.getResult(k));
  scf::YieldOp::create(rw, loc, results);
  rw.replaceOp(loop, guard.getResults());
}

struct OverlapDotsPass
    : public mlir::tile::impl::TileOverlapDotsBase<OverlapDotsPass> {
  using TileOverlapDotsBase::TileOverlapDotsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!targetsSm90a(module, arch))
      return;
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp l) {
      // Not with several programs per CTA (cta_programs): their warps keep
      // the tensor cores busy in turn, and the late dot's registers do not
      // fit what each gets (flash_fwd, D = 64, three programs: 160; with
      // the overlap ptxas serializes the wgmma; without it 1.02-1.14 x two
      // overlapped warpgroups on H100).
      auto fn = l->getParentOfType<func::FuncOp>();
      if (!fn || getSchedule(fn).getCtaPrograms() <= 1)
        loops.push_back(l);
    });
    IRRewriter rw(&getContext());
    for (scf::ForOp l : loops) {
      auto stepC = getConstantIntValue(l.getStep());
      // A masked tail or head (tile-split-masked-loops) runs a block or
      // two: a prologue and an epilogue would only add code.
      if (!stepC || *stepC <= 0 || l->hasAttr(kMaskedTailAttr) ||
          l->hasAttr(kMaskedHeadAttr))
        continue;
      if (std::optional<Plan> p = plan(l))
        rewrite(l, *p, rw);
    }
  }
};
} // namespace
