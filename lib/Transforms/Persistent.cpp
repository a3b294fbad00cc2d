//===- Persistent.cpp - resident programs loop over the launch grid -------===//
//
// First pass of stage 3, in kernels whose schedule has
// persistent = true (opt-in). The kernel is launched with as many programs
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
// cta_programs = G > 1 (with producer, sm_90a): each resident CTA runs G
// programs at once, consecutive along x, on G groups of num_warps warps
// that share one producer warpgroup's copies (tile-warp-specialize checks
// that the copies do not depend on which of the G programs is asking).
// The loop then runs over ceil(gx / G) * gy * gz tickets and program_id(0)
// is min((t mod ceil(gx / G)) * G + tile.cta_member, gx - 1): where G does
// not divide gx, the last CTA of a row repeats program gx - 1 in its spare
// members (same inputs, same code: the same values stored twice), as they
// must take part in the shared rings anyway. program_id(0) / G is the
// CTA's x, the same in all its programs: divisions by G become that value
// (flash_fwd's causal programs read the keys of their CTA's longest query
// block that way, so that its programs can share the copies).
//
// What this buys is in the other passes: TMA rings continue from one
// program's loop to the next (tile-tma-loads carries the copy count), so
// with a producer warpgroup the next program's first K/V copies overlap
// this one's epilogue, and the launch has no tail of partial waves; Q with
// TMA (tma_a) is copied once per program into a slot of its own.
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
/// tile.name of the logical grid's parameters: grid_x, grid_y, grid_z.
constexpr llvm::StringLiteral kGridPrefix = "grid_";

LogicalResult makePersistent(func::FuncOp fn) {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("persistent = true needs a kernel body of one block");
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
    std::string name = (kGridPrefix + Twine("xyz"[d])).str();
    auto attrs = b.getDictionaryAttr(
        b.getNamedAttr("tile.name", b.getStringAttr(name)));
    if (failed(fn.insertArgument(n + d, i32, attrs, loc)))
      return fn.emitError("cannot add the grid parameters");
    grid.push_back(fn.getArgument(n + d));
  }
  fn->setAttr(kPersistentAttr, b.getUnitAttr());

  // for t = program_id(0) to gx' * gy * gz step num_programs(0), where
  // gx' = ceil(gx / G) (cta_programs = G, 1 by default) counts CTAs along x
  Block &body = fn.getBody().front();
  b.setInsertionPointToStart(&body);
  int64_t members = getSchedule(fn).getCtaPrograms();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); };
  Value ctasX = members == 1
                    ? grid[0]
                    : arith::DivUIOp::create(
                          b, loc, arith::AddIOp::create(b, loc, grid[0], c32(members - 1)),
                          c32(members));
  Value first = ProgramIdOp::create(b, loc, i32, 0);
  Value step = NumProgramsOp::create(b, loc, i32, 0);
  Value total = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ctasX, grid[1]), grid[2]);
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
  Value yz = arith::DivUIOp::create(b, loc, t, ctasX);
  Value x = arith::RemUIOp::create(b, loc, t, ctasX);
  Value ctaX = x;
  if (members > 1)
    x = arith::MinUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, x, c32(members)),
                              CtaMemberOp::create(b, loc, i32)),
        arith::SubIOp::create(b, loc, grid[0], c32(1)));
  Value coord[3] = {x, arith::RemUIOp::create(b, loc, yz, grid[1]),
                    arith::DivUIOp::create(b, loc, yz, grid[1])};
  for (Operation *op : ids) {
    if (auto pid = dyn_cast<ProgramIdOp>(op))
      pid.replaceAllUsesWith(coord[pid.getAxis()]);
    else
      op->getResult(0).replaceAllUsesWith(
          grid[cast<NumProgramsOp>(op).getAxis()]);
    op->erase();
  }
  // program_id(0) / G (non-negative: signed or not) is the CTA's x.
  if (members > 1)
    for (Operation *user : llvm::make_early_inc_range(coord[0].getUsers()))
      if (isa<arith::DivSIOp, arith::DivUIOp>(user) &&
          user->getOperand(0) == coord[0] &&
          getConstantIntValue(user->getOperand(1)) == members)
        user->getResult(0).replaceAllUsesWith(ctaX);
  return success();
}

/// What cta_programs = G > 1 needs of the kernel (every check of it but
/// those that need the IR of later passes: tile-warp-specialize's on the
/// copies, convert-tile-to-gpu's on the target).
LogicalResult checkCtaPrograms(func::FuncOp fn) {
  int64_t g = getSchedule(fn).getCtaPrograms();
  if (g <= 1)
    return success();
  // The schedule's own rules (persistent, producer, 32 warps) hold: the
  // attribute verified them.
  if (fn.walk([](AtomicAddOp) { return WalkResult::interrupt(); }).wasInterrupted())
    return fn.emitError("cta_programs > 1 does not support atomic_add: a CTA's "
                        "spare programs repeat the last one of their row");
  return success();
}

struct PersistentPass
    : public mlir::tile::impl::TilePersistentBase<PersistentPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](func::FuncOp fn) {
      if (failed(checkCtaPrograms(fn))) {
        failedAny = true;
        return;
      }
      if (!fn.isExternal() && fn->hasAttr(kKernelAttr) &&
          !fn->hasAttr(kPersistentAttr) &&
          getSchedule(fn).getPersistent())
        failedAny |= failed(makePersistent(fn));
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace

bool mlir::tile::isLogicalGridSize(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto fn = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                : func::FuncOp();
  if (!fn || !fn->hasAttr(kPersistentAttr))
    return false;
  auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tile.name");
  return name && name.getValue().starts_with(kGridPrefix);
}
