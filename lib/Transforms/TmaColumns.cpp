//===- TmaColumns.cpp - a TMA box that moves along its rows ---------------===//
//
// Part of matchBox (TmaBox.h), for rings: a load whose loop moves it along
// its rows, masked at a column (`X < bound`) instead of a row: Vᵀ of an
// attention kernel whose keys are contiguous (fp8 wgmma reads P·V's B with
// the keys contiguous), a dQ pass reading Kᵀ. The copy starts at column X
// of whole rows; the map spans rows up to the row stride, so columns past
// it read as zero; the wait zeroes the columns from the bound on. That is
// the masked load's result only where every column the mask keeps lies in
// its row: the bound is at most the row stride (a constant, or a kernel's
// `require(stride >= bound)`), the base is whole rows.
// Cost model: as a row ring; the wait zeroes columns only in the box that
// crosses the bound (the last one), a 16-byte store per row and chunk.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"

#include "dialects/tile/Params.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::tma {

namespace {
/// `v` through broadcasts and integer widening casts.
Value stripWidening(Value v) {
  while (true) {
    if (auto b = v.getDefiningOp<BroadcastOp>())
      v = b.getOperand();
    else if (auto c = v.getDefiningOp<CastOp>(); c && widensInt(c))
      v = c.getOperand();
    else
      return v;
  }
}

/// `expand_dims(X, outer)` (through broadcasts and widening): X's column
/// term.
bool isColumnTerm(Value v, Value x, unsigned outer) {
  auto e = stripWidening(v).getDefiningOp<ExpandDimsOp>();
  return e && e.getOperand() == x && e.getAxis() == int64_t(outer);
}

/// The Y of the row term `mul(expand_dims(Y, inner), S)` among the addends
/// of the pointer chain `ptr` (through broadcasts, tile.add, widening);
/// null when there is none.
Value rowIndexOf(Value ptr, unsigned inner) {
  SmallVector<Value> work;
  while (true) {
    if (auto b = ptr.getDefiningOp<BroadcastOp>()) {
      ptr = b.getOperand();
    } else if (auto add = ptr.getDefiningOp<AddPtrOp>()) {
      work.push_back(add.getOffset());
      ptr = add.getPtr();
    } else {
      break;
    }
  }
  while (!work.empty()) {
    Value v = stripWidening(work.pop_back_val());
    if (auto mul = v.getDefiningOp<MulOp>()) {
      for (Value o : mul->getOperands())
        if (auto e = stripWidening(o).getDefiningOp<ExpandDimsOp>();
            e && e.getAxis() == int64_t(inner))
          return e.getOperand();
    } else if (auto add = v.getDefiningOp<AddOp>()) {
      work.push_back(add.getLhs());
      work.push_back(add.getRhs());
    }
  }
  return Value();
}

/// The kernel argument `v` is (through sign extension), or null.
BlockArgument kernelArgument(Value v) {
  while (auto e = v.getDefiningOp<arith::ExtSIOp>())
    v = e.getIn();
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->isEntryBlock() &&
                 isa<func::FuncOp>(arg.getOwner()->getParentOp())
             ? arg
             : BlockArgument();
}

/// Whether `bound` <= the row stride (`stride` times the arguments
/// `strideArgs`, all >= 1 where the product is the stride): a constant
/// bound and stride, or a bound argument with `require(s >= bound)` for a
/// stride argument s that is the whole product.
bool boundWithinRow(Value bound, int64_t stride, ArrayRef<int64_t> strideArgs) {
  std::optional<int64_t> c = constantOf(bound);
  if (strideArgs.empty())
    return c && *c <= stride;
  if (c && *c <= 0)
    return true;
  BlockArgument arg = kernelArgument(bound);
  if (!arg || strideArgs.size() != 1 || stride < 1)
    return false;
  auto fn = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto atMost = fn.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                       kAtMostAttr);
  // bound <= s <= s * stride (a negative s: bound < 0 keeps no column).
  return atMost && llvm::is_contained(atMost.asArrayRef(), strideArgs[0]);
}
} // namespace

std::optional<Match> matchColumnBox(scf::ForOp loop, Value ptr, Value mask,
                                    TileType type, const AxisAnalysis &axes,
                                    unsigned inner,
                                    std::optional<int64_t> stride,
                                    std::string *why) {
  auto fail = [&](const std::string &reason) -> std::optional<Match> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  unsigned outer = 1 - inner;
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  // mask = broadcast(expand_dims(cmp lt (X, splat(bound)), outer))
  Value m = mask;
  if (auto b = m.getDefiningOp<BroadcastOp>())
    m = b.getOperand();
  auto e = m.getDefiningOp<ExpandDimsOp>();
  auto cmp = e && e.getAxis() == int64_t(outer)
                 ? e.getOperand().getDefiningOp<CmpOp>()
                 : CmpOp();
  if (!cmp || cmp.getPredicate() != CmpPredicate::lt)
    return fail("its mask is neither `row < bound` along the rows nor "
                "`column < bound` along a row");
  if (!loop)
    return fail("its mask is `column < bound`: only a loop's ring moves "
                "along its rows");
  Value x = cmp.getLhs();
  auto boundSplat = cmp.getRhs().getDefiningOp<SplatOp>();
  const AxisInfo *xInfo = axes.lookup(x);
  if (!cast<TileType>(x.getType()).getElementType().isInteger(32) ||
      !loop.getInductionVar().getType().isInteger(32))
    return fail("its column index or loop is not i32 (TMA coordinates are "
                "i32)");
  if (!boundSplat || !isInvariant(loop, boundSplat.getOperand()) ||
      !boundSplat.getOperand().getType().isInteger(32))
    return fail("its mask's bound is not a loop-invariant i32 scalar");
  if (!xInfo || xInfo->stride[0] != 1 || !nonNegative(x))
    return fail("its columns are not consecutive from a first column the "
                "compiler can prove non-negative");
  Value y = rowIndexOf(ptr, inner);
  const AxisInfo *yInfo = y ? axes.lookup(y) : nullptr;
  if (!y || !yInfo || yInfo->stride[0] != 1 ||
      !cast<TileType>(y.getType()).getElementType().isInteger(32) ||
      !nonNegative(y) || !isInvariant(loop, y))
    return fail("its rows are not a loop-invariant `row * stride` term of "
                "consecutive i32 rows from a non-negative first row");
  Value strideValue;
  SmallVector<int64_t> strideArgs;
  if (!stride) {
    std::string problem;
    stride = runtimeStride(loop, ptr, y, inner, bytes, axes, strideValue,
                           strideArgs, problem);
    if (!stride)
      return fail(problem);
  }
  if (!boundWithinRow(boundSplat.getOperand(), *stride, strideArgs))
    return fail("its column bound is not provably at most the row stride "
                "(TMA would read the next row's columns as zero; say "
                "`require(stride >= bound)`)");
  if (!pointerMovesOnlyBy(loop, ptr, x, [&](Value off) {
        return isColumnTerm(off, x, outer);
      }))
    return fail("its address is not a loop-invariant base plus the column "
                "index (the loop must move it only along its rows)");
  Match box{LoadOp(), ptr, DotOp(), inner, *stride, y,
            boundSplat.getOperand(), strideValue, strideArgs, 0};
  box.colIndex = x;
  if (std::string problem = originProblem(loop, box); !problem.empty())
    return fail(problem);
  return box;
}

} // namespace mlir::tile::tma
