//===- ReadsAfterWrites.cpp - loads that may read what the kernel wrote ---===//
//
// tile.load becomes inline `ld.global` asm. As pure asm, LLVM may merge two
// loads of one address or move a load across a store (asm has no memory
// operands for alias analysis to see), which is right only while the kernel
// has written nothing the load could read. So a load that may run after a
// global write of its own program -- a store, atomic or TMA store before it
// in program order, or one in a loop around both -- is marked
// kAfterWriteAttr and lowered as asm with side effects (kept in order, never
// merged). Loads before any write (flash_fwd's: every write is after its
// loop) stay pure, free for LLVM to schedule.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::tile;

namespace {
/// True when `op` may run after `write` in one execution of the kernel:
/// `write` comes first in program order, or a loop holds both.
bool mayFollow(Operation *op, Operation *write) {
  // The innermost ancestor of `write` that also holds `op`.
  Operation *w = write;
  while (w && !w->getParentRegion()->isAncestor(op->getParentRegion()))
    w = w->getParentOp();
  if (!w)
    return false;
  Operation *o = op;
  while (o->getBlock() != w->getBlock())
    o = o->getParentOp();
  if (o == w)
    return false; // `op` is inside the write's own regions: not a write op
  if (w->getBlock() == o->getBlock() && w->isBeforeInBlock(o))
    return true;
  // `write` is after `op` in their common block: still after it on the
  // next trip of any loop around both.
  for (Operation *p = w->getParentOp(); p; p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p) || isa<scf::WhileOp>(p))
      return true;
  return false;
}
} // namespace

void lowering::annotateReadsAfterWrites(Operation *root) {
  root->walk([&](func::FuncOp fn) {
    SmallVector<Operation *> writes;
    fn.walk([&](Operation *op) {
      if (isa<StoreOp, AtomicAddOp, TmaStoreOp, ScalarStoreOp>(op))
        writes.push_back(op);
    });
    if (writes.empty())
      return;
    fn.walk([&](LoadOp load) {
      if (llvm::any_of(writes,
                       [&](Operation *w) { return mayFollow(load, w); }))
        load->setAttr(kAfterWriteAttr, UnitAttr::get(load->getContext()));
    });
  });
}
