//===- Persistent.cpp - resident programs loop over the launch grid -------===//
//
// First pass of stage 3, in kernels with the compile-time parameter
// PERSISTENT = true (opt-in). The kernel is launched with as many programs
// as fit on the GPU at once (the launcher's choice, along x) and each one
// runs the body for the programs of the grid the user launched (the
// logical grid) in turn:
//
//   %first = tile.program_id 0           // this program of the launch
//   %step  = tile.num_programs 0         // programs launched
//   scf.for %t = %first to %gx*%gy*%gz step %step {tile.persistent} {
//     body, with program_id(d) the d-th coordinate of %t (x fastest) and
//     num_programs(d) = %gd
//   }
//
// %gx, %gy, %gz are three i32 parameters appended to the kernel's (the
// kernel carries `tile.persistent`; the manifest says `"persistent": true`
// and the launcher passes the logical grid there, after the user's
// arguments and before the tensor maps). Programs of the logical grid run
// in launch order: t = x + gx * (y + gy * z), program p taking t = p,
// p + step, ... in this static form, which the stage 3 and 4 passes see;
// tile-dynamic-persistent (end of stage 4) then lets each program take the
// next t from a counter of the launch as it finishes one. Their results
// are those of the ordinary launch as long as programs do not communicate
// (tile kernels cannot).
//
// What this buys is in the other passes: TMA rings continue from one
// program's loop to the next (tile-tma-loads carries the copy count), so
// with a producer warpgroup the next program's first K/V copies overlap
// this one's epilogue, and the launch has no tail of partial waves. Q with
// TMA (TMA_A) is filled once per launch and is not supported here.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPERSISTENT
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
LogicalResult makePersistent(func::FuncOp fn) {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("PERSISTENT = true needs a kernel body of one block");
  if (getKernelParam(fn, "TMA_A", false))
    return fn.emitError("PERSISTENT = true does not support TMA_A = true "
                        "(its one-stage slot is filled once per launch)");
  SmallVector<Operation *> ids;
  fn.walk([&](Operation *op) {
    if (isa<ProgramIdOp, NumProgramsOp>(op))
      ids.push_back(op);
  });

  // The logical grid: three i32 parameters after the user's.
  Location loc = fn.getLoc();
  OpBuilder b(fn.getContext());
  auto i32 = b.getI32Type();
  unsigned n = fn.getNumArguments();
  SmallVector<Value> grid;
  for (unsigned d = 0; d < 3; ++d) {
    std::string name = std::string("grid_") + "xyz"[d];
    auto attrs = b.getDictionaryAttr(
        b.getNamedAttr("tile.name", b.getStringAttr(name)));
    if (failed(fn.insertArgument(n + d, i32, attrs, loc)))
      return fn.emitError("cannot add the grid parameters");
    grid.push_back(fn.getArgument(n + d));
  }
  fn->setAttr(kPersistentAttr, b.getUnitAttr());

  // for t = program_id(0) to gx * gy * gz step num_programs(0)
  Block &body = fn.getBody().front();
  b.setInsertionPointToStart(&body);
  Value first = ProgramIdOp::create(b, loc, i32, 0);
  Value step = NumProgramsOp::create(b, loc, i32, 0);
  Value total = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
  auto loop = scf::ForOp::create(b, loc, first, total, step);
  loop->setAttr(kPersistentAttr, b.getUnitAttr());
  // No LICM on it (tile-loop-annotations makes this `!llvm.loop`): values
  // invariant in the loop over programs (per-thread offsets of the Q load
  // and O store) would be hoisted out of it and held in registers through
  // every program (flash_fwd, D = 64, 128 x 64, 8 warps: 122 -> 155).
  loop->setAttr(kLoopAnnotationAttr,
                parseAttribute("#llvm.loop_annotation<licm = "
                               "#llvm.loop_licm<disable = true>>",
                               fn.getContext()));
  Block *inner = loop.getBody();
  inner->getOperations().splice(inner->begin(), body.getOperations(),
                                std::next(loop->getIterator()),
                                body.getTerminator()->getIterator());

  // The logical program's coordinates, x fastest.
  b.setInsertionPointToStart(inner);
  Value t = loop.getInductionVar();
  Value yz = arith::DivUIOp::create(b, loc, t, grid[0]);
  Value coord[3] = {arith::RemUIOp::create(b, loc, t, grid[0]),
                    arith::RemUIOp::create(b, loc, yz, grid[1]),
                    arith::DivUIOp::create(b, loc, yz, grid[1])};
  for (Operation *op : ids) {
    if (auto pid = dyn_cast<ProgramIdOp>(op))
      pid.replaceAllUsesWith(coord[pid.getAxis()]);
    else
      op->getResult(0).replaceAllUsesWith(
          grid[cast<NumProgramsOp>(op).getAxis()]);
    op->erase();
  }
  return success();
}

struct PersistentPass
    : public mlir::tile::impl::TilePersistentBase<PersistentPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](func::FuncOp fn) {
      if (!fn.isExternal() && fn->hasAttr(kKernelAttr) &&
          !fn->hasAttr(kPersistentAttr) &&
          getKernelParam(fn, "PERSISTENT", false))
        failedAny |= failed(makePersistent(fn));
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
