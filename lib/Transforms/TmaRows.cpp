//===- TmaRows.cpp - a TMA box's pointer: whole rows, and their stride ---===//
//
// Part of matchBox (TmaBox.h): the pointer of a box access is a
// loop-invariant base plus one row term `expand_dims(Y) * S` (through
// broadcasts), with S a constant or a splat of a run-time scalar that is a
// constant times a product of integer kernel arguments, which the launcher
// multiplies out to build the tensor map.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::tma {

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
/// appended to `args`. Only i32/i64 arguments: an unsigned one (u32, whose
/// source type the frontend records as a `tile.type` arg attribute; the IR
/// is signless) is neither accepted as a stride by the manifest nor by the
/// launcher, so such a load stays off TMA.
std::optional<int64_t> strideMonomial(Value s, SmallVectorImpl<int64_t> &args) {
  if (auto c = constantOf(s))
    return *c;
  if (auto arg = dyn_cast<BlockArgument>(s)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!arg.getOwner()->isEntryBlock() || !fn ||
        !arg.getType().isSignlessInteger() ||
        fn.getArgAttr(arg.getArgNumber(), "tile.type"))
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

/// Counts the moving terms (`isTerm`) among the addends of offset `off`
/// (through broadcasts, tile.add and integer widening casts: `base + keys
/// * D + cols` computed as one i64 offset); false when another addend
/// depends on `y` or is not loop-invariant.
static bool movingTermsOf(scf::ForOp loop, Value off, Value y,
                          function_ref<bool(Value)> isTerm, int &terms) {
  if (isTerm(off)) {
    ++terms;
    return true;
  }
  if (!dependsOn(off, y))
    return isInvariant(loop, off);
  Operation *def = off.getDefiningOp();
  auto recur = [&](Value v) { return movingTermsOf(loop, v, y, isTerm, terms); };
  if (isa_and_nonnull<BroadcastOp>(def))
    return recur(def->getOperand(0));
  if (auto c = dyn_cast_or_null<CastOp>(def))
    return widensInt(c) && recur(c.getOperand());
  if (isa_and_nonnull<AddOp>(def))
    return recur(def->getOperand(0)) && recur(def->getOperand(1));
  return false;
}

bool pointerMovesOnlyBy(scf::ForOp loop, Value ptr, Value y,
                        function_ref<bool(Value)> isTerm) {
  int terms = 0;
  while (true) {
    if (!dependsOn(ptr, y) && isInvariant(loop, ptr))
      return terms == 1;
    Operation *def = ptr.getDefiningOp();
    if (auto b = dyn_cast_or_null<BroadcastOp>(def)) {
      ptr = b.getOperand();
    } else if (auto s = dyn_cast_or_null<SplatOp>(def)) {
      if (!isInvariant(loop, s.getOperand()))
        return false;
      return terms == 1;
    } else if (auto add = dyn_cast_or_null<AddPtrOp>(def)) {
      if (!movingTermsOf(loop, add.getOffset(), y, isTerm, terms))
        return false;
      ptr = add.getPtr();
    } else {
      return false;
    }
  }
}

/// Every addend of the pointer chain is loop-invariant except exactly one
/// row offset of `y`.
bool pointerMovesOnlyByRow(scf::ForOp loop, Value ptr, Value y, unsigned inner,
                           int64_t stride, Value strideValue) {
  return pointerMovesOnlyBy(loop, ptr, y, [&](Value off) {
    return isRowOffset(off, y, inner, stride, strideValue);
  });
}

} // namespace mlir::tile::tma
