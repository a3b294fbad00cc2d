//===- TmaRingSlots.cpp - rings of consecutive loops in one slot ----------===//
//
// tile-tma-loads gives each ring a slot of S stages in shared memory. Two
// loops that run one after the other (siblings in one block: a block-sparse
// kernel's partial and full key blocks, each loading K and V) need their
// rings at different times, so a ring of the second loop shares the slot
// of a ring of the first where the two copy the same box of the same
// tensor (equal SlotKey: one tensor map, one buffer). The shared ring is one
// ring: the second loop's copies are numbered on from the first's, copy
// base + i with base the iterations the earlier loops of the slot ran, so
// the stages' barriers see one sequence of copies. This halves the shared
// memory such kernels ask for: at D = 128 the four rings of K and V in two
// loops take 384 KiB at three stages, of which 200 KiB fit; shared, 192.
//
// Where the loops are in the loop over programs of a persistent kernel, the
// outer loop carries one count for the slot (the iterations of all its
// loops), as for a single ring (ringBase).
//
// Every loop of a shared slot has a base (the first loop's is 0), so each
// of its copies sits in an scf.if of its condition: no copy point is passed
// without a copy. The first loop's one-ahead copy after its last iteration
// has the number of the second loop's first copy; were it a predicated
// copy, both copy points would arrive on the stage's empty barrier (kernels
// without a producer, three or more stages) and the phases would run one
// ahead of the copies: a wait that never returns.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"

#include <map>

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::tma;

namespace {
/// Iterations of `loop` (lb < ub ? (ub - lb + step - 1) / step : 0), built
/// at `b`.
Value tripsOf(OpBuilder &b, Location l, scf::ForOp loop) {
  auto c32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(v));
  };
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Value trips = arith::DivSIOp::create(
      b, l,
      arith::AddIOp::create(b, l, arith::SubIOp::create(b, l, ub, lb),
                            arith::SubIOp::create(b, l, step, c32(1))),
      step);
  Value runs = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, lb, ub);
  return arith::SelectOp::create(b, l, runs, trips, c32(0));
}
} // namespace

RingSlots tma::assignRingSlots(ArrayRef<std::pair<scf::ForOp, Match>> rings) {
  RingSlots out;
  SmallVector<std::optional<SlotKey>> keys;
  for (auto &[loop, m] : rings)
    keys.push_back(slotKey(loop, m));
  for (auto [i, ring] : llvm::enumerate(rings)) {
    scf::ForOp loop = ring.first;
    int64_t found = -1;
    for (auto [s, members] : llvm::enumerate(out.members)) {
      unsigned rep = members.front();
      bool siblings = llvm::all_of(members, [&](unsigned j) {
        scf::ForOp other = rings[j].first;
        return other != loop && other->getBlock() == loop->getBlock() &&
               other->isBeforeInBlock(loop);
      });
      if (keys[i] && keys[rep] && *keys[i] == *keys[rep] && siblings) {
        found = int64_t(s);
        break;
      }
    }
    if (found < 0) {
      found = int64_t(out.members.size());
      out.members.emplace_back();
    }
    out.slotOf.push_back(found);
    out.members[found].push_back(unsigned(i));
  }
  return out;
}

SmallVector<Value>
tma::ringBases(ArrayRef<std::pair<scf::ForOp, Match>> rings,
               const RingSlots &slots,
               const llvm::SetVector<Operation *> &nestedLoops) {
  SmallVector<Value> bases(rings.size());
  // The loops of each slot, in program order; slots with the same loops
  // share their counts.
  std::map<SmallVector<Operation *>, SmallVector<Value>> made;
  for (const SmallVector<unsigned> &members : slots.members) {
    SmallVector<Operation *> loops;
    for (unsigned j : members)
      loops.push_back(rings[j].first);
    Operation *first = loops.front();
    bool nested = nestedLoops.contains(first);
    if (loops.size() == 1 && !nested)
      continue; // a ring of its own: copies counted from 0
    auto it = made.find(loops);
    if (it == made.end()) {
      // Before loop k: the count the outer loop carries (nested) plus the
      // iterations of loops 0 .. k-1. Always ops, never the outer loop's
      // block argument itself: a later count rebuilds the outer loop, and
      // a held block argument would go stale where an op's operand is
      // updated.
      Value counter;
      if (nested)
        counter = addCounter(
            cast<scf::ForOp>(first->getParentOp()),
            [&](OpBuilder &b, Location l) {
              Value sum = tripsOf(b, l, cast<scf::ForOp>(first));
              for (Operation *loop : ArrayRef(loops).drop_front())
                sum = arith::AddIOp::create(b, l, sum,
                                            tripsOf(b, l, cast<scf::ForOp>(loop)));
              return sum;
            });
      SmallVector<Value> at;
      Value before;
      for (auto [k, loop] : llvm::enumerate(loops)) {
        OpBuilder b(loop);
        Location l = loop->getLoc();
        Value zero = arith::ConstantOp::create(b, l, b.getI32IntegerAttr(0));
        Value sum = counter ? counter : zero;
        if (k > 0)
          sum = arith::AddIOp::create(
              b, l, before, tripsOf(b, l, cast<scf::ForOp>(loops[k - 1])));
        else if (counter)
          sum = arith::AddIOp::create(b, l, counter, zero);
        // The first loop gets a base too (0): a base makes each copy sit in
        // an scf.if of its condition. A predicated copy (no base) still
        // passes its copy point: with three or more stages every warp
        // arrives on the stage's empty barrier, and the next loop's first
        // copy, numbered the same as the first loop's last (skipped)
        // one-ahead copy, would arrive again, one phase too many, and the
        // issuing thread would wait for a phase that never completes.
        at.push_back(sum);
        before = sum;
      }
      it = made.emplace(loops, at).first;
    }
    for (auto [k, j] : llvm::enumerate(members))
      bases[j] = it->second[k];
  }
  return bases;
}
