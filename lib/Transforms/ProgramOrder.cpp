//===- ProgramOrder.cpp - the order in which programs take grid ids -------===//
//
// First pass of stage 3, in kernels whose schedule asks for an order
// (`l2_group` > 0 or `reverse_x`). Programs start in launch order, x
// fastest; this pass renames them: every tile.program_id(0) / (1) of the
// kernel becomes a logical (X, Y) computed from the launch's (x, y), a
// bijection of the 2-D grid (axis 2 is left alone).
//
// Cost model: programs that run at the same time share L2. With
// l2_group = G, the launch runs groups of h = max(1, G / nx) consecutive
// y values (heads, for attention) x-major: the data a y value reads once
// per program (K/V of a head) is read by the group's programs while it is
// in L2, instead of by programs spread over the whole grid. reverse_x
// counts X down: where programs with a larger x run longer (causal query
// blocks), the longest start first and the short ones fill the tail.
//
//   p = x + nx * y;  first = p / (nx * h) * h;  size = min(h, ny - first)
//   r = p - first * nx;  X = r / size;  Y = first + r % size
//   reverse_x: X = nx - 1 - min_u(X, nx - 1)   (= nx - 1 - X)
//
// Post-condition: the kernel's program ids are read once, at its entry.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPROGRAMORDER
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
struct Builder {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  // Signed, as program ids and grid sizes are i32 values >= 0: the later
  // passes' non-negativity proofs follow signed arithmetic.
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
};

void reorder(func::FuncOp fn, ScheduleAttr s) {
  SmallVector<ProgramIdOp> ids;
  fn.walk([&](ProgramIdOp op) {
    if (op.getAxis() < 2)
      ids.push_back(op);
  });
  if (ids.empty())
    return;
  OpBuilder ob(&fn.getBody().front(), fn.getBody().front().begin());
  Builder b{ob, fn.getLoc()};
  Type i32 = ob.getI32Type();
  Value x = ProgramIdOp::create(ob, b.loc, i32, 0);
  Value y = ProgramIdOp::create(ob, b.loc, i32, 1);
  Value nx = NumProgramsOp::create(ob, b.loc, i32, 0);
  Value X = x, Y = y;
  if (int64_t g = s.getL2Group()) {
    Value ny = NumProgramsOp::create(ob, b.loc, i32, 1);
    Value p = b.add(x, b.mul(nx, y));
    Value h = b.max(b.c(1), b.div(b.c(g), nx));
    Value first = b.mul(b.div(p, b.mul(nx, h)), h);
    Value size = b.min(h, b.sub(ny, first));
    Value r = b.sub(p, b.mul(first, nx));
    X = b.div(r, size);
    Y = b.add(first, b.rem(r, size));
  }
  if (s.getReverseX()) {
    // nx - 1 - min_u(X, nx - 1): the clamp is a no-op (X < nx) that
    // states X's range, so that later passes prove the reversed index
    // non-negative (a TMA box's first row, tile-tma-loads).
    Value last = b.sub(nx, b.c(1));
    X = b.sub(last, arith::MinUIOp::create(ob, b.loc, X, last));
  }
  for (ProgramIdOp op : ids) {
    op.getResult().replaceAllUsesWith(op.getAxis() == 0 ? X : Y);
    op.erase();
  }
}

struct ProgramOrderPass
    : public mlir::tile::impl::TileProgramOrderBase<ProgramOrderPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      if (fn.isExternal() || !fn->hasAttr(kKernelAttr))
        return;
      ScheduleAttr s = getSchedule(fn);
      if (s.getL2Group() > 0 || s.getReverseX())
        reorder(fn, s);
    });
  }
};
} // namespace
