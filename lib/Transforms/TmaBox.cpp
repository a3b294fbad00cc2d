//===- TmaBox.cpp - which accesses are TMA boxes, and where they start ---===//
//
// See TmaBox.h.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"

#include "lib/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::tma {

/// W where `mask` is `m && col < W` (either order), `col < W` along the
/// `inner` dimension as tile-pad-shapes builds it (broadcast(expand_dims(
/// cmp lt (iota, W), outer))); `rowMask` becomes m. 0 otherwise.
int64_t paddedRowElems(Value mask, unsigned inner, Value &rowMask) {
  auto a = mask ? mask.getDefiningOp<AndOp>() : AndOp();
  if (!a)
    return 0;
  for (int i = 0; i < 2; ++i) {
    Value pad = a->getOperand(i);
    if (auto b = pad.getDefiningOp<BroadcastOp>())
      pad = b.getOperand();
    auto e = pad.getDefiningOp<ExpandDimsOp>();
    if (!e || e.getAxis() != int64_t(1 - inner))
      continue;
    auto c = e.getOperand().getDefiningOp<CmpOp>();
    if (!c || c.getPredicate() != CmpPredicate::lt ||
        !c.getLhs().getDefiningOp<IotaOp>())
      continue;
    std::optional<int64_t> w = constantOf(c.getRhs());
    if (!w || *w <= 0)
      continue;
    rowMask = a->getOperand(1 - i);
    return *w;
  }
  return 0;
}

/// Without a loop (a load of a dot's A operand outside loops) every value
/// counts as defined outside.
bool definedOutside(scf::ForOp loop, Value v) {
  return !loop || !loop->isAncestor(v.getParentRegion()->getParentOp());
}

/// Defined outside `loop`, or by pure ops of its body from such values
/// (never the induction variable or an iter_arg).
bool isInvariant(scf::ForOp loop, Value v) {
  if (definedOutside(loop, v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return isInvariant(loop, o); });
}

std::optional<int64_t> constantOf(Value v) {
  if (auto f = v.getDefiningOp<FullOp>())
    if (auto i = dyn_cast<IntegerAttr>(f.getValue()))
      return i.getInt();
  if (auto s = v.getDefiningOp<SplatOp>())
    return constantOf(s.getOperand());
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getInt();
  return std::nullopt;
}

bool isZero(Value v) {
  auto f = v.getDefiningOp<FullOp>();
  if (!f)
    return false;
  if (auto x = dyn_cast<FloatAttr>(f.getValue()))
    return x.getValue().isZero() && !x.getValue().isNegative();
  return false;
}

/// The scf.for whose induction variable `v` is, when its step is a positive
/// constant (so that lb <= iv < ub); null otherwise.
scf::ForOp risingLoopOf(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())
                  : scf::ForOp();
  auto step = loop ? constantOf(loop.getStep()) : std::nullopt;
  return loop && arg == loop.getInductionVar() && step && *step > 0
             ? loop
             : scf::ForOp();
}

/// Scalars a row index may start at without TMA (which reads negative rows
/// as zero) and the masked load disagreeing.
bool nonNegative(Value v) {
  if (auto c = constantOf(v))
    return *c >= 0;
  if (isa<BlockArgument>(v)) {
    scf::ForOp loop = risingLoopOf(v);
    // tile-persistent's loop steps by num_programs(0) > 0.
    auto owner = dyn_cast<scf::ForOp>(
        cast<BlockArgument>(v).getOwner()->getParentOp());
    if (!loop && owner && owner.getInductionVar() == v &&
        owner->hasAttr(kPersistentAttr))
      loop = owner;
    return loop && nonNegative(loop.getLowerBound());
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ProgramIdOp, CtaMemberOp>(def))
    return true;
  if (isa<arith::RemUIOp, arith::DivUIOp>(def))
    return nonNegative(def->getOperand(0));
  // x / y and x % y, signed, with x, y >= 0 (a window's first key block,
  // max(0, x) / BN * BN).
  if (isa<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp,
          arith::CeilDivSIOp>(def))
    return nonNegative(def->getOperand(0)) && nonNegative(def->getOperand(1));
  if (auto sub = dyn_cast<arith::SubIOp>(def)) {
    Value a = sub.getLhs();
    // gx - 1 (tile-persistent's loop runs no program where gx = 0; a
    // running program's num_programs is at least 1).
    if ((isLogicalGridSize(a) || a.getDefiningOp<NumProgramsOp>()) &&
        constantOf(sub.getRhs()) == 1)
      return true;
    // a - min(x, a) with x >= 0: a query block counted from the last one,
    // gx - 1 - min(x, gx - 1) (tile-persistent's program_id(0)). Unsigned,
    // a >= 0 is enough: the unsigned minimum is then in [0, a], whatever
    // x is (tile-program-order's reverse_x, nx - 1 - min_u(X, nx - 1)).
    Operation *mn = sub.getRhs().getDefiningOp();
    if (isa_and_nonnull<arith::MinSIOp, arith::MinUIOp>(mn) &&
        llvm::is_contained(mn->getOperands(), a)) {
      Value x = mn->getOperand(mn->getOperand(0) == a ? 1 : 0);
      return isa<arith::MinSIOp>(mn) ? nonNegative(x) : nonNegative(a);
    }
    // c - iv with iv < ub <= c + 1 (a loop counting down:
    // `range(top, -1, -BN)`).
    auto c = constantOf(a);
    scf::ForOp loop = risingLoopOf(sub.getRhs());
    auto ub = loop ? constantOf(loop.getUpperBound()) : std::nullopt;
    return c && ub && *ub <= *c + 1;
  }
  if (isa<arith::AddIOp, arith::MulIOp, AddOp, MulOp>(def))
    return nonNegative(def->getOperand(0)) && nonNegative(def->getOperand(1));
  if (isa<arith::MinSIOp>(def))
    return nonNegative(def->getOperand(0)) && nonNegative(def->getOperand(1));
  // Unsigned, the minimum is at most either operand: one below 2^31 (or
  // 2^63) keeps it non-negative as a signed value.
  if (isa<arith::MinUIOp>(def))
    return nonNegative(def->getOperand(0)) || nonNegative(def->getOperand(1));
  if (isa<arith::MaxSIOp, MaxOp>(def))
    return nonNegative(def->getOperand(0)) || nonNegative(def->getOperand(1));
  if (isa<arith::SelectOp>(def))
    return nonNegative(def->getOperand(1)) && nonNegative(def->getOperand(2));
  if (isa<SplatOp, arith::ExtSIOp, arith::ExtUIOp>(def))
    return nonNegative(def->getOperand(0));
  if (isa<IotaOp>(def))
    return true;
  return false;
}

/// The box checks shared by copies and stores: a 2-D box of a row-major
/// tensor, addressed by `ptr` and masked exactly by `mask` = `Y < bound`
/// (see the file comment); `other` (a load's) zero or absent. `loop` is
/// null for an access outside loops.
std::optional<Match> matchBox(scf::ForOp loop, Value ptr, Value mask,
                              Value other, TileType type,
                              const AxisAnalysis &axes,
                              bool needNonNegativeRows, std::string *why,
                              bool allowColumns) {
  auto fail = [&](const std::string &reason) -> std::optional<Match> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  if (!mask)
    return fail("it has no mask `row < bound` (a TMA box is clipped at the "
                "bound)");
  if (other && !isZero(other))
    return fail("its `other` is not zero (TMA fills out-of-bounds rows with 0)");
  const AxisInfo *info = axes.lookup(ptr);
  std::optional<unsigned> inner = axes.contiguousDim(ptr);
  if (!info || !inner)
    return fail("its addresses are not contiguous along either dimension");
  unsigned outer = 1 - *inner;
  std::optional<int64_t> stride = info->stride[outer];
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  // A padded box (tile-pad-shapes: mask `row < bound && col < W`): rows of
  // the tensor are W long, the box's columns from W on read as zero.
  Value rowMask = mask;
  int64_t rowElems = paddedRowElems(mask, *inner, rowMask);
  int64_t rowLength = rowElems ? rowElems : type.getDimSize(*inner);
  int64_t slab = 128 / bytes; // elements of a 128-byte swizzle row
  if (rowElems && ((rowElems * bytes) % 16 || rowElems < slab))
    return fail("its padded rows of " + std::to_string(rowElems) +
                " elements are not a multiple of 16 bytes of at least " +
                std::to_string(slab) + " elements");
  if (stride && (*stride < rowLength || (*stride * bytes) % 16))
    return fail("its row stride (" + std::to_string(*stride * bytes) +
                " bytes) is not a multiple of 16 bytes at least a row long");
  if (type.getDimSize(*inner) % slab || type.getDimSize(outer) > 256)
    return fail("its box is " + std::to_string(type.getDimSize(outer)) +
                " rows of " + std::to_string(type.getDimSize(*inner)) +
                " elements; TMA rings need rows of a multiple of " +
                std::to_string(slab) +
                " elements (128-byte swizzle) and at most 256 rows");
  if ((info->divisibility * bytes) % 16)
    return fail("its base is not provably 16-byte aligned");
  // mask = broadcast(expand_dims(cmp lt (Y, splat(bound)), inner))
  Value m = rowMask;
  if (auto b = m.getDefiningOp<BroadcastOp>())
    m = b.getOperand();
  auto e = m.getDefiningOp<ExpandDimsOp>();
  auto cmp = e && e.getAxis() == int64_t(*inner)
                 ? e.getOperand().getDefiningOp<CmpOp>()
                 : CmpOp();
  if (!cmp || cmp.getPredicate() != CmpPredicate::lt) {
    if (allowColumns && !rowElems)
      return matchColumnBox(loop, ptr, mask, type, axes, *inner, stride, why);
    return fail("its mask is not `row < bound` along the rows");
  }
  auto boundSplat = cmp.getRhs().getDefiningOp<SplatOp>();
  Value y = cmp.getLhs();
  const AxisInfo *yInfo = axes.lookup(y);
  // TMA coordinates are i32: so must the row index and the loop be.
  if (!cast<TileType>(y.getType()).getElementType().isInteger(32) ||
      (loop && !loop.getInductionVar().getType().isInteger(32)))
    return fail("its row index or loop is not i32 (TMA coordinates are i32)");
  if (!boundSplat || !isInvariant(loop, boundSplat.getOperand()) ||
      !boundSplat.getOperand().getType().isInteger(32))
    return fail("its mask's bound is not a loop-invariant i32 scalar");
  if (!yInfo || yInfo->stride[0] != 1 ||
      (needNonNegativeRows && !nonNegative(y)))
    return fail("its rows are not consecutive from a first row the compiler "
                "can prove non-negative");
  // A row stride known at run time: `Y * s` with s a product of integer
  // arguments and a constant, so that the launcher can build the map.
  Value strideValue;
  SmallVector<int64_t> strideArgs;
  if (!stride) {
    std::string problem;
    stride = runtimeStride(loop, ptr, y, *inner, bytes, axes, strideValue,
                           strideArgs, problem);
    if (!stride)
      return fail(problem);
  }
  if (!pointerMovesOnlyByRow(loop, ptr, y, *inner, *stride, strideValue))
    return fail("its address is not a loop-invariant base plus whole rows "
                "(the loop must move it only through the row index)");
  Match box{LoadOp(), ptr, DotOp(), *inner, *stride, y,
            boundSplat.getOperand(), strideValue, strideArgs, rowElems};
  if (std::string problem = originProblem(loop, box); !problem.empty())
    return fail(problem);
  return box;
}

/// matchBox of a load that `dot` reads.
std::optional<Match> matchLoadBox(scf::ForOp loop, LoadOp load, DotOp dot,
                                  const AxisAnalysis &axes, std::string *why,
                                  bool allowColumns) {
  std::optional<Match> m =
      matchBox(loop, load.getPtr(), load.getMask(), load.getOther(),
               cast<TileType>(load.getType()), axes, true, why, allowColumns);
  if (m) {
    m->load = load;
    m->dot = dot;
  }
  return m;
}

std::optional<int64_t> runtimeStride(scf::ForOp loop, Value ptr, Value y,
                                     unsigned inner, int64_t bytes,
                                     const AxisAnalysis &axes,
                                     Value &strideValue,
                                     SmallVectorImpl<int64_t> &strideArgs,
                                     std::string &why) {
  strideValue = runtimeRowStride(ptr, y, inner);
  if (!strideValue || !isInvariant(loop, strideValue)) {
    why = "its row stride is neither a compile-time constant nor a "
          "loop-invariant scalar multiplying the row index";
    return std::nullopt;
  }
  std::optional<int64_t> factor = strideMonomial(strideValue, strideArgs);
  if (!factor) {
    why = "its run-time row stride is not a product of integer kernel "
          "arguments and constants (the launcher builds the tensor map from "
          "them)";
    return std::nullopt;
  }
  // The arguments' divisibility (require(x % C == 0)) counts too.
  int64_t divides = axes.scalarDivisibility(strideValue);
  if (*factor <= 0 || ((*factor * bytes) % 16 && (divides * bytes) % 16)) {
    why = "its run-time row stride is not provably a multiple of 16 bytes "
          "(a constant factor of " +
          std::to_string(*factor * bytes) + " bytes)";
    return std::nullopt;
  }
  return factor;
}

/// The loop over programs of a persistent kernel (tile-persistent's, in
/// the kernel's body) whose body holds `op`; null otherwise.
scf::ForOp programLoopOf(Operation *op) {
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  return loop && loop->hasAttr(kPersistentAttr) &&
                 isa<func::FuncOp>(loop->getParentOp())
             ? loop
             : scf::ForOp();
}

} // namespace mlir::tile::tma
