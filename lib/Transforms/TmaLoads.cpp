//===- TmaLoads.cpp - loop loads of dot B operands as TMA copies ----------===//
//
// sm_90a only, in kernels whose schedule has tma = true (the default:
// +12-23 % over register prefetch for flash_fwd on H100). A tile.load in an scf.for body that
//   * feeds only the B operand of one tile.dot (read in place by wgmma),
//   * reads a 2-D f16/bf16 box of a row-major tensor: stride 1 along one
//     dimension (a row, a multiple of 64 elements), a constant row stride
//     along the other, and the loop moves it only through the row index Y
//     (pointer = loop-invariant base + Y * stride + invariant offsets),
//   * is masked exactly by `Y < bound` (bound loop-invariant, Y with stride
//     1 and a provably non-negative start) with `other` zero or absent,
//   * has a base that is a pointer argument of the kernel plus offsets that
//     are provably whole rows (multiples of the row stride),
// becomes a bulk tensor copy: the launcher maps the whole allocation behind
// the argument as rows of the stride (manifest `tensorMaps`), the copy
// reads rows counted from the argument, and the wait zeroes the rows of
// the box at or past `bound` just as the mask made them zero. Each load
// gets a slot of S stages (the schedule's num_stages, 2 to 4, default 3;
// fewer where they would not fit in 200 KiB): iteration i reads stage
// i % S and, at its top, starts copy i + 1 into the next stage; the first
// copy starts before the loop. With S >= 3 the warp that issues the copies
// need not wait for the slowest warp (see tile.tma_copy). A loop in the
// body of another loop (the loop over programs of a persistent kernel) runs
// its ring on across the outer iterations: the outer loop carries the count
// of copies made, copy i is copy base + i, and each copy sits in an scf.if
// of its condition, so that no copy point is passed without a copy (the
// stages' barriers count copies). Loads in deeper nests stay loads.
//
// With tma_a = true as well (opt-in), a load outside loops that only the A
// operands of such dots read (K contiguous, masked the same way: Q in
// flash_fwd) becomes one copy into a one-stage slot that wgmma reads in
// place, where it fits with the rings in 224 KiB: its registers go back to
// the loop (at D = 128, BM = BN = 128, 8 warps: 248 -> 229; timing
// unchanged on H100). In a persistent kernel
// such a load in the body of the loop over programs is copied once per
// program, by the program's own warps (each of cta_programs programs has
// its own slot; tile-warp-specialize leaves these copies in place): the
// loop counts its programs and copy n waits for barrier phase n % 2.
//
// With tma_store = true (the default), a tile.store outside loops (or once
// per program in the loop over programs) of a 2-D f16/bf16 box along its
// rows, masked by `row < bound` like the loads, becomes
// `if (0 <= row0 && row0 + rows <= bound) tile.tma_store else the store`:
// the threads write the tile into a buffer of its own and a bulk copy
// writes the whole box (docs/dialect.md). Only where that paid on H100
// (causal D = 64 2k: +3-5 %): one program per CTA, stores that would
// otherwise be narrow (fewer than 2 * kWideStoreMinAccesses 16-bit values
// per thread), and a buffer that fits with the other slots and keeps the
// CTAs per SM that min_blocks asks for.
//
//===----------------------------------------------------------------------===//
#include "lib/Analysis/AxisInfo.h"
#include "lib/Transforms/Passes.h"
#include "dialects/tile/TargetInfo.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILETMALOADS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// What a load must look like to become a TMA copy.
struct Match {
  LoadOp load;      ///< null for a store (then `ptr` is the store's)
  Value ptr;        ///< the access's pointer tile
  DotOp dot;
  unsigned inner;   ///< contiguous dimension of the tile
  int64_t stride;   ///< elements between rows (with strideArgs: a factor)
  Value rowIndex;   ///< 1-D tile Y: the row of each element along the outer dim
  Value bound;      ///< scalar i32: rows >= bound are masked off
  /// A row stride known at run time: the scalar (null for a constant one)
  /// and the integer kernel arguments whose product times `stride` it is
  /// (the launcher builds the tensor map from them).
  Value strideValue;
  SmallVector<int64_t> strideArgs;
};

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
  if (auto sub = dyn_cast<arith::SubIOp>(def)) {
    Value a = sub.getLhs();
    // gx - 1 (tile-persistent's loop runs no program where gx = 0).
    if (isLogicalGridSize(a) && constantOf(sub.getRhs()) == 1)
      return true;
    // a - min(x, a) with x >= 0: a query block counted from the last one,
    // gx - 1 - min(x, gx - 1) (tile-persistent's program_id(0)). Unsigned,
    // a >= 0 too, so that it is the signed minimum.
    Operation *mn = sub.getRhs().getDefiningOp();
    if (isa_and_nonnull<arith::MinSIOp, arith::MinUIOp>(mn) &&
        llvm::is_contained(mn->getOperands(), a)) {
      Value x = mn->getOperand(mn->getOperand(0) == a ? 1 : 0);
      return nonNegative(x) && (isa<arith::MinSIOp>(mn) || nonNegative(a));
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
  if (isa<arith::MinSIOp, arith::MinUIOp>(def))
    return nonNegative(def->getOperand(0)) && nonNegative(def->getOperand(1));
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

/// The scalar a uniform tile is made of (through broadcasts and splats),
/// or null.
Value scalarOf(Value v) {
  while (auto b = v.getDefiningOp<BroadcastOp>())
    v = b.getOperand();
  auto s = v.getDefiningOp<SplatOp>();
  return s ? s.getOperand() : Value();
}

/// The factor S of `mul(expand_dims(Y, inner), S)` (through broadcasts), or
/// null.
Value rowFactor(Value v, Value y, unsigned inner) {
  while (auto b = v.getDefiningOp<BroadcastOp>())
    v = b.getOperand();
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return Value();
  for (int i = 0; i < 2; ++i) {
    auto e = mul->getOperand(i).getDefiningOp<ExpandDimsOp>();
    if (e && e.getOperand() == y && e.getAxis() == int64_t(inner))
      return mul->getOperand(1 - i);
  }
  return Value();
}

/// `mul(expand_dims(Y, inner), S)` (through broadcasts) with S the
/// constant `stride`, or with `strideValue` a splat of that scalar.
bool isRowOffset(Value v, Value y, unsigned inner, int64_t stride,
                 Value strideValue) {
  Value f = rowFactor(v, y, inner);
  if (!f)
    return false;
  return strideValue ? scalarOf(f) == strideValue : constantOf(f) == stride;
}

/// The scalar row stride of a pointer chain whose row term is
/// `Y * splat(s)` with `s` not a constant; null when there is none.
Value runtimeRowStride(Value ptr, Value y, unsigned inner) {
  while (true) {
    Operation *def = ptr.getDefiningOp();
    if (auto b = dyn_cast_or_null<BroadcastOp>(def)) {
      ptr = b.getOperand();
    } else if (auto add = dyn_cast_or_null<AddPtrOp>(def)) {
      if (Value f = rowFactor(add.getOffset(), y, inner))
        if (Value s = scalarOf(f); s && !constantOf(s))
          return s;
      ptr = add.getPtr();
    } else {
      return Value();
    }
  }
}

/// `s` as a constant times a product of integer kernel arguments (through
/// multiplications and sign extensions); the arguments' numbers are
/// appended to `args`.
std::optional<int64_t> strideMonomial(Value s, SmallVectorImpl<int64_t> &args) {
  if (auto c = constantOf(s))
    return *c;
  if (auto arg = dyn_cast<BlockArgument>(s)) {
    if (!arg.getOwner()->isEntryBlock() ||
        !isa<func::FuncOp>(arg.getOwner()->getParentOp()) ||
        !arg.getType().isSignlessInteger())
      return std::nullopt;
    args.push_back(arg.getArgNumber());
    return 1;
  }
  Operation *def = s.getDefiningOp();
  if (isa_and_nonnull<arith::ExtSIOp>(def))
    return strideMonomial(def->getOperand(0), args);
  if (isa_and_nonnull<arith::MulIOp>(def)) {
    std::optional<int64_t> a = strideMonomial(def->getOperand(0), args);
    std::optional<int64_t> b = a ? strideMonomial(def->getOperand(1), args)
                                 : std::nullopt;
    if (!b)
      return std::nullopt;
    return *a * *b;
  }
  return std::nullopt;
}

/// Whether `v` is computed from `y`.
bool dependsOn(Value v, Value y) {
  if (v == y)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions())
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value o) { return dependsOn(o, y); });
}

/// Every addend of the pointer chain is loop-invariant except exactly one
/// row offset of `y`.
bool pointerMovesOnlyByRow(scf::ForOp loop, Value ptr, Value y, unsigned inner,
                           int64_t stride, Value strideValue) {
  int rowTerms = 0;
  while (true) {
    if (!dependsOn(ptr, y) && isInvariant(loop, ptr))
      return rowTerms == 1;
    Operation *def = ptr.getDefiningOp();
    if (auto b = dyn_cast_or_null<BroadcastOp>(def)) {
      ptr = b.getOperand();
    } else if (auto s = dyn_cast_or_null<SplatOp>(def)) {
      if (!isInvariant(loop, s.getOperand()))
        return false;
      return rowTerms == 1;
    } else if (auto add = dyn_cast_or_null<AddPtrOp>(def)) {
      Value off = add.getOffset();
      if (isRowOffset(off, y, inner, stride, strideValue))
        ++rowTerms;
      else if (dependsOn(off, y) || !isInvariant(loop, off))
        return false;
      ptr = add.getPtr();
    } else {
      return false;
    }
  }
}

std::string originProblem(scf::ForOp loop, const Match &mt);

/// The box checks shared by copies and stores: a 2-D box of a row-major
/// tensor, addressed by `ptr` and masked exactly by `mask` = `Y < bound`
/// (see the file comment); `other` (a load's) zero or absent. `loop` is
/// null for an access outside loops.
std::optional<Match> matchBox(scf::ForOp loop, Value ptr, Value mask,
                              Value other, TileType type,
                              const AxisAnalysis &axes,
                              bool needNonNegativeRows = true,
                              std::string *why = nullptr) {
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
  if (stride && (*stride < type.getDimSize(*inner) || (*stride * bytes) % 16))
    return fail("its row stride (" + std::to_string(*stride * bytes) +
                " bytes) is not a multiple of 16 bytes at least a row long");
  if (type.getDimSize(*inner) % 64 || type.getDimSize(outer) > 256)
    return fail("its box is " + std::to_string(type.getDimSize(outer)) +
                " rows of " + std::to_string(type.getDimSize(*inner)) +
                " elements; TMA rings need rows of a multiple of 64 elements "
                "(128-byte swizzle) and at most 256 rows");
  if ((info->divisibility * bytes) % 16)
    return fail("its base is not provably 16-byte aligned");
  // mask = broadcast(expand_dims(cmp lt (Y, splat(bound)), inner))
  Value m = mask;
  if (auto b = m.getDefiningOp<BroadcastOp>())
    m = b.getOperand();
  auto e = m.getDefiningOp<ExpandDimsOp>();
  auto cmp = e && e.getAxis() == int64_t(*inner)
                 ? e.getOperand().getDefiningOp<CmpOp>()
                 : CmpOp();
  if (!cmp || cmp.getPredicate() != CmpPredicate::lt)
    return fail("its mask is not `row < bound` along the rows");
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
    strideValue = runtimeRowStride(ptr, y, *inner);
    if (!strideValue || !isInvariant(loop, strideValue))
      return fail("its row stride is neither a compile-time constant nor a "
                  "loop-invariant scalar multiplying the row index");
    std::optional<int64_t> factor = strideMonomial(strideValue, strideArgs);
    if (!factor)
      return fail("its run-time row stride is not a product of integer "
                  "kernel arguments and constants (the launcher builds the "
                  "tensor map from them)");
    if (*factor <= 0 || (*factor * bytes) % 16)
      return fail("its run-time row stride is not provably a multiple of 16 "
                  "bytes (a constant factor of " +
                  std::to_string(*factor * bytes) + " bytes)");
    stride = *factor;
  }
  if (!pointerMovesOnlyByRow(loop, ptr, y, *inner, *stride, strideValue))
    return fail("its address is not a loop-invariant base plus whole rows "
                "(the loop must move it only through the row index)");
  Match box{LoadOp(), ptr, DotOp(), *inner, *stride, y,
            boundSplat.getOperand(), strideValue, strideArgs};
  if (std::string problem = originProblem(loop, box); !problem.empty())
    return fail(problem);
  return box;
}

/// matchBox of a load that `dot` reads.
std::optional<Match> matchLoadBox(scf::ForOp loop, LoadOp load, DotOp dot,
                                  const AxisAnalysis &axes,
                                  std::string *why = nullptr) {
  std::optional<Match> m =
      matchBox(loop, load.getPtr(), load.getMask(), load.getOther(),
               cast<TileType>(load.getType()), axes, true, why);
  if (m) {
    m->load = load;
    m->dot = dot;
  }
  return m;
}

/// A load in a loop body that only one dot's B operand reads.
std::optional<Match> match(scf::ForOp loop, LoadOp load,
                           const AxisAnalysis &axes,
                           std::string *why = nullptr) {
  auto fail = [&](const std::string &reason) -> std::optional<Match> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  auto type = cast<TileType>(load.getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()))
    return fail("it is not a 2-D f16/bf16 tile");
  if (!load->hasOneUse())
    return fail("it has more than one reader (a ring slot is read by one "
                "dot's B operand)");
  auto dot = dyn_cast<DotOp>(*load->user_begin());
  if (!dot || dot.getB() != load.getResult() || dot->getBlock() != load->getBlock() ||
      dot.getA() == load.getResult())
    return fail("its reader is not the B operand of a dot in the same loop "
                "body");
  // The dot must become wgmma (the only reader of a slot): whole warpgroups,
  // each warp on its own 16 rows of 64-row blocks, N <= 256.
  int64_t warps = getNumWarps(load->getParentOfType<func::FuncOp>());
  int64_t rowsM = cast<TileType>(dot.getA().getType()).getDimSize(0);
  if (warps % 4 || rowsM < 16 * warps || rowsM % 64)
    return fail("its dot (M = " + std::to_string(rowsM) + ", " +
                std::to_string(warps) +
                " warps) cannot become wgmma: M must be a multiple of 64 "
                "with 16 rows per warp, on whole warpgroups");
  if (type.getDimSize(1) % 8 || type.getDimSize(1) > 256 ||
      type.getDimSize(0) % 16)
    return fail("its dot's N or K does not suit wgmma (N a multiple of 8, "
                "at most 256; K a multiple of 16)");
  return matchLoadBox(loop, load, dot, axes, why);
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

/// Whether `load` is what the schedule's tma_a is about: outside loops (in the kernel's
/// body, or in the body of the loop over programs of a persistent kernel:
/// once per program) and read only as the A operand of dots whose B is
/// read from a slot (`slotDots`).
bool readOnlyAsSlotDotA(LoadOp load, const DenseSet<Operation *> &slotDots) {
  if (load.use_empty() ||
      !(isa<func::FuncOp>(load->getParentOp()) || programLoopOf(load)))
    return false;
  return llvm::all_of(load->getUsers(), [&](Operation *user) {
    auto d = dyn_cast<DotOp>(user);
    return d && d.getA() == load.getResult() && d.getB() != load.getResult() &&
           slotDots.contains(d);
  });
}

/// Such a load (the caller checked readOnlyAsSlotDotA), K contiguous: one
/// copy into a one-stage slot, read in place by wgmma (Q of flash_fwd: its
/// registers go to the softmax).
std::optional<Match> matchA(LoadOp load, const AxisAnalysis &axes) {
  auto type = cast<TileType>(load.getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()))
    return std::nullopt;
  int64_t warps = getNumWarps(load->getParentOfType<func::FuncOp>());
  int64_t rowsM = type.getDimSize(0);
  if (warps % 4 || rowsM < 16 * warps || rowsM % 64)
    return std::nullopt;
  auto dot = cast<DotOp>(*load->user_begin());
  std::optional<Match> m = matchLoadBox(nullptr, load, dot, axes);
  if (!m || m->inner != 1)
    return std::nullopt;
  return m;
}

/// Whether scalar `v` is provably a multiple of `k`.
bool multipleOf(Value v, int64_t k) {
  if (auto c = constantOf(v))
    return *c % k == 0;
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<arith::MulIOp>(def))
    return multipleOf(def->getOperand(0), k) || multipleOf(def->getOperand(1), k);
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
    return multipleOf(def->getOperand(0), k) && multipleOf(def->getOperand(1), k);
  if (isa_and_nonnull<arith::ExtSIOp>(def))
    return multipleOf(def->getOperand(0), k);
  return false;
}

/// Where a box's masked tensor starts, counted from the kernel argument
/// `arg`: its first row, and its first column (null when the offset is
/// provably whole rows: the tensor map then spans only the box's columns).
struct ArgumentRows {
  Value arg, row, col;
};

/// Splits the scalar pointer `p` (a chain of tile.addptr) into the kernel
/// argument it starts from and its offset in rows of `stride` elements
/// (`stride64`, i64, when known only at run time), building at `b` the i32
/// row (offset / stride) and, unless every offset is provably whole rows,
/// the i32 column (offset % stride: once per program, where a head's
/// columns sit inside a row of [B, S, H, D]).
FailureOr<ArgumentRows> splitRows(OpBuilder &b, Location loc, Value p,
                                  int64_t stride, Value stride64,
                                  int64_t width, std::string *why) {
  auto fail = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return failure();
  };
  SmallVector<Value> offsets;
  bool wholeRows = !stride64, inWidths = stride % width == 0;
  while (auto add = p.getDefiningOp<AddPtrOp>()) {
    wholeRows = wholeRows && multipleOf(add.getOffset(), stride);
    inWidths = inWidths && multipleOf(add.getOffset(), width);
    offsets.push_back(add.getOffset());
    p = add.getPtr();
  }
  auto arg = dyn_cast<BlockArgument>(p);
  if (!arg || !arg.getOwner()->isEntryBlock() ||
      !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return fail("its address does not start at a pointer argument of the "
                "kernel");
  // A box that starts inside a row must end there (TMA reads columns past
  // the row as zero, where the load would read the next row): provable
  // when the row stride and the offset are multiples of the box's width.
  if (!wholeRows && !inWidths)
    return fail("its box may straddle two rows: the offset from the "
                "argument is not provably whole rows, nor are it and the "
                "row stride multiples of the box's " +
                std::to_string(width) + " columns");
  auto i64 = b.getI64Type();
  Value sum = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  for (Value o : offsets) {
    if (!o.getType().isInteger(64))
      o = arith::ExtSIOp::create(b, loc, i64, o);
    sum = arith::AddIOp::create(b, loc, sum, o);
  }
  Value s = stride64 ? stride64
                     : Value(arith::ConstantOp::create(
                           b, loc, b.getI64IntegerAttr(stride)));
  Value rows = arith::DivSIOp::create(b, loc, sum, s);
  Value col;
  if (!wholeRows)
    col = arith::TruncIOp::create(b, loc, b.getI32Type(),
                                  arith::RemSIOp::create(b, loc, sum, s));
  return ArgumentRows{arg, arith::TruncIOp::create(b, loc, b.getI32Type(), rows),
                      col};
}

/// `p` addresses row `y` of a box of rows `stride` (or `stride64`) elements
/// apart: splitRows of p - y * stride.
FailureOr<ArgumentRows> argumentRows(OpBuilder &b, Location loc, Value p,
                                     Value y, int64_t stride, Value stride64,
                                     int64_t width, std::string *why) {
  Value s = stride64 ? stride64
                     : Value(arith::ConstantOp::create(
                           b, loc, b.getI64IntegerAttr(stride)));
  Value back = arith::SubIOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)),
      arith::MulIOp::create(
          b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), y), s));
  return splitRows(b, loc, AddPtrOp::create(b, loc, p.getType(), p, back),
                   stride, stride64, width, why);
}

/// Builds the scalar value of tile `v` at coordinate 0 (iota -> 0), with
/// the values of `map` substituted (the induction variable).
FailureOr<Value> originOf(OpBuilder &b, scf::ForOp loop, Value v,
                          IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Location loc = v.getLoc();
  auto recur = [&](Value x) { return originOf(b, loop, x, map); };
  if (!isa<TileType>(v.getType())) {
    if (definedOutside(loop, v))
      return v;
    Operation *def = v.getDefiningOp();
    if (!def || !isPure(def) || def->getNumRegions() || def->getNumResults() != 1)
      return failure();
    for (Value o : def->getOperands())
      if (failed(recur(o)))
        return failure();
    Operation *c = b.clone(*def, map);
    return c->getResult(0);
  }
  Operation *def = v.getDefiningOp();
  Value out;
  if (auto s = dyn_cast_or_null<SplatOp>(def)) {
    FailureOr<Value> x = recur(s.getOperand());
    if (failed(x))
      return failure();
    out = *x;
  } else if (isa_and_nonnull<IotaOp>(def)) {
    out = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(cast<TileType>(v.getType()).getElementType(), 0));
  } else if (auto f = dyn_cast_or_null<FullOp>(def)) {
    out = arith::ConstantOp::create(b, loc, cast<TypedAttr>(f.getValue()));
  } else if (isa_and_nonnull<ExpandDimsOp, BroadcastOp>(def)) {
    FailureOr<Value> x = recur(def->getOperand(0));
    if (failed(x))
      return failure();
    out = *x;
  } else if (isa_and_nonnull<AddOp, MulOp, AddPtrOp>(def)) {
    FailureOr<Value> l = recur(def->getOperand(0));
    FailureOr<Value> r = failed(l) ? l : recur(def->getOperand(1));
    if (failed(r))
      return failure();
    if (isa<AddPtrOp>(def))
      out = AddPtrOp::create(b, loc, l->getType(), *l, *r);
    else if (isa<AddOp>(def))
      out = arith::AddIOp::create(b, loc, *l, *r);
    else
      out = arith::MulIOp::create(b, loc, *l, *r);
  } else {
    return failure();
  }
  map.map(v, out);
  return out;
}

/// Where the copies of `mt` read: the kernel argument, the row of it where
/// the masked tensor's row 0 sits, and the box's first row `y0` (the
/// induction variable mapped by `map`; no loop: a load outside loops),
/// built at `b`.
struct BoxOrigin {
  Value arg, rowBase, y0;
  Value col; ///< first column (null: 0, the map spans the box's columns)
};
FailureOr<BoxOrigin> boxOrigin(OpBuilder &b, scf::ForOp loop, Match mt,
                               IRMapping &map, std::string *why = nullptr) {
  FailureOr<Value> p0 = originOf(b, loop, mt.ptr, map);
  FailureOr<Value> y0 = failed(p0) ? p0 : originOf(b, loop, mt.rowIndex, map);
  if (failed(y0)) {
    if (why)
      *why = "its first address is not computed by pure integer and pointer "
             "ops the pass can rebuild";
    return failure();
  }
  Value stride64;
  if (mt.strideValue) {
    FailureOr<Value> s = originOf(b, loop, mt.strideValue, map);
    if (failed(s))
      return failure();
    stride64 = s->getType().isInteger(64)
                   ? *s
                   : arith::ExtSIOp::create(b, mt.ptr.getLoc(), b.getI64Type(), *s);
  }
  auto type = cast<TileType>(mt.ptr.getType());
  FailureOr<ArgumentRows> split =
      argumentRows(b, mt.ptr.getLoc(), *p0, *y0, mt.stride, stride64,
                   type.getDimSize(mt.inner), why);
  if (failed(split))
    return failure();
  return BoxOrigin{split->arg, split->row, *y0, split->col};
}

/// Why boxOrigin cannot be built for `mt` (empty when it can): a dry run
/// into a scratch block, erased after.
std::string originProblem(scf::ForOp loop, const Match &mt) {
  Block scratch;
  OpBuilder b(mt.ptr.getContext());
  b.setInsertionPointToEnd(&scratch);
  IRMapping map;
  if (loop)
    map.map(loop.getInductionVar(), loop.getLowerBound());
  std::string why;
  bool ok = succeeded(boxOrigin(b, loop, mt, map, &why));
  for (Operation &op : scratch)
    op.dropAllReferences();
  while (!scratch.empty())
    scratch.back().erase();
  return ok ? std::string() : why;
}

DenseI64ArrayAttr strideArgsAttr(OpBuilder &b, const Match &mt) {
  return mt.strideArgs.empty() ? DenseI64ArrayAttr()
                               : b.getDenseI64ArrayAttr(mt.strideArgs);
}

/// Copy `iter` of the box whose first row is `y`, where `pred` holds.
void createCopy(OpBuilder &b, Match mt, const BoxOrigin &o, Value y,
                Value iter, Value pred, int64_t slot, int64_t stages) {
  Location loc = mt.load.getLoc();
  auto type = cast<TileType>(mt.load.getType());
  TmaCopyOp::create(b, loc, o.arg, arith::AddIOp::create(b, loc, o.rowBase, y),
                    iter, pred, o.col, b.getI64IntegerAttr(slot),
                    b.getI64IntegerAttr(stages),
                    b.getDenseI64ArrayAttr(type.getShape()),
                    b.getI64IntegerAttr(mt.inner),
                    b.getI64IntegerAttr(mt.stride), strideArgsAttr(b, mt),
                    UnitAttr());
}

/// The load becomes a wait for stage `stage` (barrier parity `parity`),
/// keeping the rows before `mt.bound` of the box whose first row is `y`.
void replaceByWait(OpBuilder &b, Match mt, Value stage, Value parity,
                   Value y, int64_t slot) {
  LoadOp load = mt.load;
  Location loc = load.getLoc();
  Value valid = arith::SubIOp::create(b, loc, mt.bound, y);
  auto wait = TmaWaitOp::create(b, loc, load.getType(), stage, parity, valid,
                                b.getI64IntegerAttr(slot),
                                b.getI64IntegerAttr(mt.inner));
  load.replaceAllUsesWith(wait.getResult());
  load.erase();
}

/// Copy `iter` where `pred` holds: a predicated copy, or with `guarded`
/// (rings that continue across an outer loop) a copy inside `if (pred)`,
/// so that a copy point that copies nothing is never passed (the stages'
/// empty barriers count only the copies made).
void createCopyIf(OpBuilder &b, Match mt, const BoxOrigin &o, Value y,
                  Value iter, Value pred, int64_t slot, int64_t stages,
                  bool guarded) {
  if (!guarded)
    return createCopy(b, mt, o, y, iter, pred, slot, stages);
  Location loc = mt.load.getLoc();
  auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  createCopy(b, mt, o, y, iter,
             arith::ConstantOp::create(b, loc, b.getBoolAttr(true)), slot,
             stages);
}

} // namespace

std::optional<int64_t> mlir::tile::tmaCopySlot(Operation *op) {
  if (auto c = dyn_cast<TmaCopyOp>(op))
    return c.getSlot();
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (!ifOp || ifOp.getNumResults() || !ifOp.getElseRegion().empty())
    return std::nullopt;
  std::optional<int64_t> slot;
  ifOp.thenBlock()->walk([&](TmaCopyOp c) { slot = c.getSlot(); });
  return slot;
}

namespace {
/// A new i32 iter_arg of `loop`, 0 at entry, that each iteration adds
/// `step(b, loc)` to (built at the end of the body); returns it. The
/// loop's discardable attributes (tile.persistent) stay.
Value addCounter(scf::ForOp loop,
                 function_ref<Value(OpBuilder &, Location)> step) {
  Location loc = loop.getLoc();
  IRRewriter rw(loop->getContext());
  rw.setInsertionPoint(loop);
  Value zero = arith::ConstantOp::create(rw, loc, rw.getI32IntegerAttr(0));
  SmallVector<NamedAttribute> attrs(loop->getDiscardableAttrs());
  auto grown = loop.replaceWithAdditionalYields(
      rw, zero, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> args) {
        return SmallVector<Value>{
            arith::AddIOp::create(b, l, args.front(), step(b, l))};
      });
  auto newLoop = cast<scf::ForOp>(grown->getOperation());
  for (NamedAttribute a : attrs)
    newLoop->setDiscardableAttr(a.getName(), a.getValue());
  return newLoop.getRegionIterArgs().back();
}

/// `loop` (in a loop body) as a ring that continues from one iteration of
/// the enclosing loop to the next: a new i32 iter_arg of the enclosing
/// loop counts the copies made so far (its iterations of `loop` each
/// copy once), and is returned.
Value ringBase(scf::ForOp loop) {
  return addCounter(
      cast<scf::ForOp>(loop->getParentOp()), [&](OpBuilder &b, Location l) {
        // Iterations of `loop`: lb < ub ? (ub - lb + step - 1) / step : 0.
        auto c32 = [&](int64_t v) {
          return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(v));
        };
        Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
              step = loop.getStep();
        Value trips = arith::DivSIOp::create(
            b, l,
            arith::AddIOp::create(
                b, l, arith::SubIOp::create(b, l, ub, lb),
                arith::SubIOp::create(b, l, step, c32(1))),
            step);
        Value runs =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, lb, ub);
        return Value(arith::SelectOp::create(b, l, runs, trips, c32(0)));
      });
}

/// Whether `loop` runs once per kernel (no loop around it: `base` stays
/// null) or once per iteration of the loop whose body holds it, itself in
/// no loop (`base` becomes that ring's copy count); other nestings keep
/// their loads.
bool ringPlacement(scf::ForOp loop, bool &nested) {
  nested = false;
  for (Operation *p = loop->getParentOp(); p && !isa<func::FuncOp>(p);
       p = p->getParentOp()) {
    if (!isa<scf::ForOp>(p))
      continue;
    if (nested || p != loop->getParentOp())
      return false;
    nested = true;
  }
  return true;
}

LogicalResult rewrite(scf::ForOp loop, Match mt, int64_t slot,
                      int64_t stages, Value base) {
  Location loc = mt.load.getLoc();
  Value iv = loop.getInductionVar(), lb = loop.getLowerBound(),
        ub = loop.getUpperBound(), step = loop.getStep();

  // Scalars first (pure ops; left for DCE if anything fails): at the top
  // of the body, the iteration number and the next iteration's first row ...
  OpBuilder b(mt.dot->getContext());
  b.setInsertionPointToStart(loop.getBody());
  auto c32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value iter = arith::DivSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
  if (base)
    iter = arith::AddIOp::create(b, loc, base, iter);
  IRMapping next;
  Value nextIv = arith::AddIOp::create(b, loc, iv, step);
  next.map(iv, nextIv);
  FailureOr<Value> yn = originOf(b, loop, mt.rowIndex, next);
  if (failed(yn))
    return failure();
  Value nextOk =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, nextIv, ub);
  Value afterScalars = nextOk;
  // ... and before the loop the first row and the argument's row of the
  // masked tensor's row 0.
  b.setInsertionPoint(loop);
  IRMapping first;
  first.map(iv, lb);
  FailureOr<BoxOrigin> origin = boxOrigin(b, loop, mt, first);
  if (failed(origin))
    return failure();
  // Iteration i uses copy i (stage i % stages); the copy for i + 1 starts
  // at the top of iteration i, a whole iteration ahead; the first copy
  // starts before the loop.
  bool guarded = bool(base);
  createCopyIf(b, mt, *origin, origin->y0, base ? base : c32(0),
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub),
               slot, stages, guarded);
  b.setInsertionPointAfterValue(afterScalars);
  createCopyIf(b, mt, *origin, *yn, arith::AddIOp::create(b, loc, iter, c32(1)),
               nextOk, slot, stages, guarded);
  // In the loop: wait for this iteration's copy, in stage i % stages with
  // barrier parity (i / stages) % 2. Rows from `bound` on are masked off.
  b.setInsertionPoint(mt.load);
  Value stage = arith::RemUIOp::create(b, loc, iter, c32(stages));
  Value parity = arith::AndIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, iter, c32(stages)), c32(1));
  IRMapping cur;
  cur.map(iv, iv);
  FailureOr<Value> y = originOf(b, loop, mt.rowIndex, cur);
  if (failed(y))
    return failure();
  replaceByWait(b, mt, stage, parity, *y, slot);
  return success();
}

/// The loop over programs gets an i32 iter_arg counting the programs run
/// before this one (0, 1, ...); returns it.
Value programCount(scf::ForOp loop) {
  return addCounter(loop, [](OpBuilder &b, Location l) {
    return Value(arith::ConstantOp::create(b, l, b.getI32IntegerAttr(1)));
  });
}

/// A load of matchA as one copy into a one-stage slot and its wait, where
/// the load was. In the loop over programs, copy n of the slot (the n-th
/// program this one runs) completes phase n of its barrier: the wait's
/// parity is n % 2.
LogicalResult rewriteA(Match mt, int64_t slot) {
  Location loc = mt.load.getLoc();
  Value count;
  if (scf::ForOp programs = programLoopOf(mt.load))
    count = programCount(programs);
  OpBuilder b(mt.load);
  IRMapping none;
  FailureOr<BoxOrigin> origin = boxOrigin(b, nullptr, mt, none);
  if (failed(origin))
    return failure();
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value iter = count ? count : zero;
  Value parity =
      count ? arith::AndIOp::create(
                  b, loc, count,
                  arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1)))
            : zero;
  createCopy(b, mt, *origin, origin->y0, iter, yes, slot, /*stages=*/1);
  replaceByWait(b, mt, zero, parity, origin->y0, slot);
  return success();
}

/// A store outside loops (in the kernel's body, or in the body of the
/// loop over programs of a persistent kernel) of a 2-D f16/bf16 box along
/// its rows, masked by `row < bound`. Its first row need not be provably
/// non-negative: the rewrite checks the whole box at run time.
std::optional<Match> matchStore(StoreOp st, const AxisAnalysis &axes) {
  auto type = cast<TileType>(st.getValue().getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()) ||
      !(isa<func::FuncOp>(st->getParentOp()) || programLoopOf(st)))
    return std::nullopt;
  std::optional<Match> m = matchBox(nullptr, st.getPtr(), st.getMask(), Value(),
                                    type, axes, /*needNonNegativeRows=*/false);
  if (!m || m->inner != 1)
    return std::nullopt;
  return m;
}

/// `if (0 <= y0 && y0 + rows <= bound) tma_store else store`: the copy
/// writes whole boxes, so a box the mask cuts keeps the masked store.
LogicalResult rewriteStore(StoreOp st, Match mt, int64_t slot) {
  Location loc = st.getLoc();
  OpBuilder b(st);
  IRMapping none;
  FailureOr<BoxOrigin> origin = boxOrigin(b, nullptr, mt, none);
  if (failed(origin))
    return failure();
  auto type = cast<TileType>(st.getValue().getType());
  auto c32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value y0 = origin->y0;
  Value whole = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, y0, c32(0)),
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sle,
          arith::AddIOp::create(b, loc, y0, c32(type.getDimSize(0))), mt.bound));
  auto ifOp = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  TmaStoreOp::create(b, loc, origin->arg,
                     arith::AddIOp::create(b, loc, origin->rowBase, y0),
                     st.getValue(), origin->col, b.getI64IntegerAttr(slot),
                     b.getI64IntegerAttr(mt.inner),
                     b.getI64IntegerAttr(mt.stride), strideArgsAttr(b, mt));
  st->moveBefore(ifOp.elseBlock()->getTerminator());
  return success();
}

constexpr const char *kStaysLoad =
    "schedule tma_a = true, but this load of a dot's A operand stays a load: ";

/// Shared memory the TMA rings may take (of sm_90a's 227 KiB per block),
/// and all TMA slots with the one-stage ones (the rest is left for
/// barriers, alignment and scratch buffers).
constexpr int64_t kRingBudget = 200 * 1024;
const int64_t kTmaSharedBudget = targetInfo("sm_90a").sharedPerBlock - 3 * 1024;
/// Shared memory of an sm_90a SM for CTAs, and what each CTA takes besides
/// its slots (the slots' 1 KiB alignment, barriers, the system's 1 KiB).
const int64_t kSmSharedBytes = targetInfo("sm_90a").sharedPerSM;
constexpr int64_t kCtaSharedOverhead = 3 * 1024;

struct TmaLoadsPass : public mlir::tile::impl::TileTmaLoadsBase<TmaLoadsPass> {
  using TileTmaLoadsBase::TileTmaLoadsBase;

  /// With remarks on: "stays off TMA: <why>" at each load in a loop that
  /// a dot reads, under `scope`.
  void remarkLoopLoads(Operation *scope, StringRef why) {
    if (!remarks && !getOperation()->hasAttr(kRemarksAttr))
      return;
    scope->walk([&](LoadOp ld) {
      if (ld->getParentOfType<scf::ForOp>() &&
          llvm::any_of(ld->getUsers(), [](Operation *u) { return isa<DotOp>(u); }))
        ld.emitRemark("dot operand load stays off TMA: ") << why;
    });
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    remarks = remarks || module->hasAttr(kRemarksAttr);
    // tma_a is opt-in (default false): where it cannot apply, say so.
    if (!targetsSm90a(module, arch)) {
      remarkLoopLoads(module, "TMA needs sm_90a");
      return warnOptInNeedsSm90a(module, arch, "tma_a",
                                 [](ScheduleAttr s) { return s.getTmaA(); },
                                 "TMA copies need sm_90a");
    }
    module.walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(kKernelAttr))
        return;
      if (!getSchedule(fn).getTma()) {
        remarkLoopLoads(fn, "the schedule has tma = false");
        if (getSchedule(fn).getTmaA())
          fn.emitWarning("schedule tma_a = true has no effect with tma = "
                         "false: it extends the TMA copies to a dot's A operand");
        return;
      }
      AxisAnalysis axes(fn);
      SmallVector<std::pair<scf::ForOp, Match>> matches;
      llvm::SetVector<Operation *> nestedLoops; // rings an outer loop continues
      fn.walk([&](scf::ForOp loop) {
        bool nested;
        bool placed = ringPlacement(loop, nested);
        for (Operation &op : *loop.getBody()) {
          auto ld = dyn_cast<LoadOp>(op);
          if (!ld)
            continue;
          std::string why = "its loop is nested two deep (a ring lives in "
                            "a loop or in the loop over programs' loop)";
          if (placed)
            if (std::optional<Match> m = match(loop, ld, axes, &why)) {
              matches.push_back({loop, *m});
              if (nested)
                nestedLoops.insert(loop);
              continue;
            }
          if (remarks && llvm::any_of(ld->getUsers(), [](Operation *u) {
                return isa<DotOp>(u);
              }))
            ld.emitRemark("dot operand load stays off TMA: ") << why;
        }
      });
      // A loop that continues an inner ring keeps its own loads (it is
      // rebuilt with the ring's count: copies in its body would hold the
      // old loop).
      DenseSet<Operation *> outers;
      for (Operation *loop : nestedLoops)
        outers.insert(loop->getParentOp());
      llvm::erase_if(matches, [&](std::pair<scf::ForOp, Match> &m) {
        return outers.contains(m.first.getOperation());
      });
      // A operands outside loops of the dots whose B becomes a copy.
      DenseSet<Operation *> slotDots;
      for (auto &m : matches)
        slotDots.insert(m.second.dot);
      // tma_a asked for: an A operand it leaves as a load gets a warning.
      SmallVector<Match> aMatches;
      if (!slotDots.empty() && getSchedule(fn).getTmaA())
        fn.walk([&](LoadOp ld) {
          if (!readOnlyAsSlotDotA(ld, slotDots))
            return;
          if (std::optional<Match> m = matchA(ld, axes))
            aMatches.push_back(*m);
          else
            ld.emitWarning(kStaysLoad)
                << "its box does not qualify (2-D f16/bf16, K contiguous, "
                   "masked by row < bound, a first row the pass can prove "
                   "non-negative; docs/dialect.md)";
        });
      // Stages: the schedule's num_stages (default 3), fewer where the
      // rings would not fit in kRingBudget; the one-stage A slots only
      // where they fit with the rings in kTmaSharedBudget.
      auto bytesOf = [](Match m) {
        return cast<TileType>(m.load.getType()).getNumElements() * 2;
      };
      int64_t stageBytes = 0, aBytes = 0;
      for (auto &m : matches)
        stageBytes += bytesOf(m.second);
      int64_t stages = getSchedule(fn).getNumStages();
      while (stages > 2 && stages * stageBytes > kRingBudget)
        --stages;
      // A slot in the loop over programs: one per program of the CTA.
      for (Match m : aMatches)
        aBytes += bytesOf(m) * (programLoopOf(m.load)
                                    ? getSchedule(fn).getCtaPrograms()
                                    : 1);
      if (stages * stageBytes + aBytes > kTmaSharedBudget) {
        for (Match m : aMatches)
          m.load.emitWarning(kStaysLoad)
              << "its slot does not fit with the TMA rings in "
              << kTmaSharedBudget / 1024 << " KiB of shared memory";
        aMatches.clear();
        aBytes = 0;
      }
      // Last first, so that the copies at the top of a loop body come out
      // in program order (each rewrite inserts at the top).
      // A loop in a loop (the persistent loop over programs) gets its
      // copy count from the outer loop, once for all its slots.
      DenseMap<Operation *, Value> bases;
      for (Operation *loop : nestedLoops)
        bases[loop] = ringBase(cast<scf::ForOp>(loop));
      for (int64_t i = int64_t(matches.size()) - 1; i >= 0; --i)
        (void)rewrite(matches[i].first, matches[i].second, i, stages,
                      bases.lookup(matches[i].first));
      int64_t slot = matches.size();
      for (Match m : aMatches) {
        Operation *load = m.load;
        if (succeeded(rewriteA(m, slot)))
          ++slot;
        else
          load->emitWarning(kStaysLoad) << "its copy could not be built";
      }
      // Stores of whole boxes (tma_store, default true): one buffer each.
      // Only where they pay on H100 (causal D = 64 2k: +3-5 %): one
      // program per CTA (the buffer and its barriers are the program's);
      // stores that would otherwise be narrow (4 bytes per thread: a warp
      // writes 16 bytes of each of 8 rows; wide ones already write whole
      // sectors); where the buffer fits with the other slots, and does not
      // cost a CTA of the min_blocks asked for.
      if (!getSchedule(fn).getTmaStore() ||
          getSchedule(fn).getCtaPrograms() != 1)
        return;
      int64_t used = stages * stageBytes + aBytes;
      int64_t ctas = std::max<int64_t>(1, getSchedule(fn).getMinBlocks());
      int64_t threads = 32 * getNumWarps(fn);
      SmallVector<std::pair<StoreOp, Match>> stores;
      fn.walk([&](StoreOp st) {
        auto t = cast<TileType>(st.getValue().getType());
        if (t.getNumElements() / threads >= 2 * kWideStoreMinAccesses)
          return;
        if (std::optional<Match> m = matchStore(st, axes))
          stores.push_back({st, *m});
      });
      for (auto [st, m] : stores) {
        int64_t bytes = cast<TileType>(st.getValue().getType()).getNumElements() * 2;
        if (used + bytes > kTmaSharedBudget ||
            ctas * (used + bytes + kCtaSharedOverhead) > kSmSharedBytes)
          continue;
        if (succeeded(rewriteStore(st, m, slot))) {
          used += bytes;
          ++slot;
        }
      }
    });
  }
};
} // namespace
