//===- GridOffsets.cpp - grids over 65535 along y and z -------------------===//
//
// A launch has at most 65535 programs along y and z (2^31 - 1 along x). The
// launcher runs a larger grid as several launches of at most 65535 along
// each, and each launch's programs must still see their coordinates in the
// whole grid: program_id(d) = blockIdx.d + where the launch starts, and
// num_programs(d) = the whole grid's size. Both come as i32 parameters
// (tile.grid_args; Manifest::gridArgs), so the cost in a kernel that reads
// program_id(1) is one add of a parameter (constant bank) per read and 4
// bytes of parameters; kernels that read neither y nor z get nothing.
//
// Persistent kernels (tile-persistent, stage 3) already loop over a logical
// grid of any size they are passed: their program ids no longer read y or
// z, so they get an empty list.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"
#include "lib/Transforms/GridArgs.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEGRIDOFFSETS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Appends an i32 parameter named `name` (tile.name) to `fn`.
FailureOr<Value> appendParam(func::FuncOp fn, StringRef name) {
  OpBuilder b(fn.getContext());
  unsigned n = fn.getNumArguments();
  auto attrs = b.getDictionaryAttr(
      b.getNamedAttr("tile.name", b.getStringAttr(name)));
  if (failed(fn.insertArgument(n, b.getI32Type(), attrs, fn.getLoc())))
    return failure();
  return Value(fn.getArgument(n));
}

LogicalResult addGridArgs(func::FuncOp fn) {
  SmallVector<ProgramIdOp> ids[3];
  SmallVector<NumProgramsOp> sizes[3];
  fn.walk([&](Operation *op) {
    if (auto p = dyn_cast<ProgramIdOp>(op))
      ids[p.getAxis()].push_back(p);
    else if (auto n = dyn_cast<NumProgramsOp>(op))
      sizes[n.getAxis()].push_back(n);
  });
  SmallVector<Attribute> names;
  Builder nb(fn.getContext());
  for (unsigned d : {1u, 2u}) {
    std::string axis(1, "xyz"[d]);
    if (!ids[d].empty()) {
      FailureOr<Value> offset = appendParam(fn, "program_offset_" + axis);
      if (failed(offset))
        return fn.emitError("cannot add the grid offset parameter");
      names.push_back(nb.getStringAttr("offset_" + axis));
      for (ProgramIdOp op : ids[d]) {
        OpBuilder b(op->getContext());
        b.setInsertionPointAfter(op);
        Value sum =
            arith::AddIOp::create(b, op.getLoc(), op.getResult(), *offset);
        op.getResult().replaceAllUsesExcept(sum, sum.getDefiningOp());
      }
    }
    if (!sizes[d].empty()) {
      FailureOr<Value> size = appendParam(fn, "grid_size_" + axis);
      if (failed(size))
        return fn.emitError("cannot add the grid size parameter");
      names.push_back(nb.getStringAttr("size_" + axis));
      for (NumProgramsOp op : sizes[d]) {
        op.getResult().replaceAllUsesWith(*size);
        op->erase();
      }
    }
  }
  fn->setAttr(kGridArgsAttr, nb.getArrayAttr(names));
  return success();
}

struct GridOffsetsPass
    : public mlir::tile::impl::TileGridOffsetsBase<GridOffsetsPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](func::FuncOp fn) {
      if (fn.isExternal() || !fn->hasAttr(kKernelAttr) ||
          fn->hasAttr(kGridArgsAttr))
        return;
      if (fn->hasAttr(kPersistentAttr)) {
        fn->setAttr(kGridArgsAttr, ArrayAttr::get(fn.getContext(), {}));
        return;
      }
      failedAny |= failed(addGridArgs(fn));
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
