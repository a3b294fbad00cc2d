//===- DynamicPersistent.cpp - persistent programs take tiles as they go --===//
//
// Last pass of stage 4, after tile-warp-specialize. tile-persistent's loop
// over the logical programs (`scf.for %t = program_id(0) to total step
// num_programs(0) {tile.persistent}`) hands program p the programs p, p +
// step, ...: a static order in which, for causal attention, some programs
// get several of the longest query blocks and others the shortest (a
// simulation of flash_fwd at 2k, 132 programs: the busiest ~25 % above the
// mean, against ~2 % when each takes the next program as it finishes, as
// the hardware does with an ordinary launch). Each such loop becomes
//
//   %k0 = tile.program_ticket %total
//   %t0 = tile.share_program %k0, 0 {publisher}
//   scf.while (%t = %t0, %n = 0, iter_args...) : %t < %total {
//     %k = tile.program_ticket %total  // the next one, taken early
//     body, with %t for the induction variable
//     %t' = tile.share_program %k, %n + 1 {publisher}
//   }
//
// so programs take logical programs from a launch-wide counter in launch
// order, one ahead (the atomic's latency hides behind the body). In a
// warp-specialized kernel the producer region's copy of the loop takes
// and publishes the tickets and the consumer region's copy reads them
// (no `publisher`, no ticket).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEDYNAMICPERSISTENT
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Whether the loop's thread group takes the tickets: every kernel's loop
/// but the consumer region's copy in a warp-specialized one.
bool publishes(scf::ForOp loop) {
  auto ws = loop->getParentOfType<WarpSpecializeOp>();
  return !ws || ws.getProducer().isAncestor(loop->getParentRegion());
}

LogicalResult makeDynamic(scf::ForOp loop) {
  Location loc = loop.getLoc();
  Type i32 = loop.getInductionVar().getType();
  if (!i32.isInteger(32))
    return loop.emitError("a persistent loop needs an i32 induction variable");
  bool pub = publishes(loop);
  IRRewriter rw(loop->getContext());
  rw.setInsertionPoint(loop);
  Value total = loop.getUpperBound();
  Value zero = arith::ConstantIntOp::create(rw, loc, 0, 32);
  Value one = arith::ConstantIntOp::create(rw, loc, 1, 32);
  auto ticket = [&](OpBuilder &b) -> Value {
    if (!pub)
      return zero;
    return ProgramTicketOp::create(b, loc, i32, total);
  };
  auto share = [&](OpBuilder &b, Value t, Value seq) -> Value {
    return ShareProgramOp::create(b, loc, i32, t, seq, pub);
  };
  Value first = share(rw, ticket(rw), zero);

  SmallVector<Value> inits = {first, zero};
  llvm::append_range(inits, loop.getInitArgs());
  SmallVector<Type> types(2, i32);
  llvm::append_range(types, loop.getResultTypes());
  SmallVector<Location> locs(types.size(), loc);
  auto w = scf::WhileOp::create(rw, loc, types, inits);
  Block *before = rw.createBlock(&w.getBefore(), {}, types, locs);
  Value more = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt,
                                     before->getArgument(0), total);
  scf::ConditionOp::create(rw, loc, more, before->getArguments());
  Block *after = rw.createBlock(&w.getAfter(), {}, types, locs);
  Value next = ticket(rw);
  SmallVector<Value> repl = {after->getArgument(0)};
  llvm::append_range(repl, after->getArguments().drop_front(2));
  auto oldYield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  rw.mergeBlocks(loop.getBody(), after, repl);
  rw.setInsertionPoint(oldYield);
  Value seq = arith::AddIOp::create(rw, loc, after->getArgument(1), one);
  Value shared = share(rw, next, seq);
  // The loop's metadata (no LICM, tile-persistent) rides on the last op of
  // the body to the latch branch (tile-loop-annotations).
  if (Attribute a = loop->getAttr(kLoopAnnotationAttr))
    shared.getDefiningOp()->setAttr(kLoopAnnotationAttr, a);
  SmallVector<Value> yields = {shared, seq};
  llvm::append_range(yields, oldYield.getOperands());
  scf::YieldOp::create(rw, loc, yields);
  rw.eraseOp(oldYield);
  rw.replaceOp(loop, w.getResults().drop_front(2));
  return success();
}

struct DynamicPersistentPass
    : public mlir::tile::impl::TileDynamicPersistentBase<DynamicPersistentPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kPersistentAttr))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(makeDynamic(loop)))
        return signalPassFailure();
  }
};
} // namespace
