//===- MLIRGenScalar.cpp - scalar memory, reductions, math, widening ------===//
//
// Run-time scalars beside the tiles:
//  - load/store through a scalar pointer (tile.scalar_load/scalar_store);
//  - a reduction of a 1-D tile to a scalar: reduce a [1, N] view along its
//    last axis, then take the one element (tile.to_scalar);
//  - math builtins on run-time scalars: the tile op on a one-element tile,
//    so scalars and tiles round alike (exp2 is ex2.approx.ftz in both);
//  - an i32 operand meeting an i64 one is sign-extended to i64; a u32 one
//    is zero-extended (to i64, or to u64 when it meets a u64).
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

#include "llvm/ADT/StringSwitch.h"

#include <functional>

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;
namespace tl = mlir::tile;

/// load(p, mask: m, other: v) / store(p, x, mask: m) with a scalar pointer:
/// mask, other and the stored value are scalars too.
FailureOr<Val> MLIRGen::genScalarMemory(const CallExpr &e, Slots s, Val ptr) {
  StringRef n = e.callee;
  bool isLoad = n == "load";
  // The pointee's frontend type (u32 for ptr<u32>); the IR's is signless.
  Type pointee = withSignedness(
      cast<PtrType>(ptr.value.getType()).getPointeeType(), ptr.uns);
  if (mlir::tile::isFp8(pointee))
    return error(s[0]->loc) << "fp8 values live in tiles: '" << n << "' of "
                            << describe(ptr) << " needs a tile of pointers "
                            << "(add an offset tile, e.g. p + iota(N))",
           failure();
  if (n == "atomic_add")
    return error(s[0]->loc) << "'atomic_add' needs a tile of pointers, got "
                            << describe(ptr) << " (add an offset tile, e.g. "
                            << "p + iota(N))",
           failure();
  unsigned maskSlot = isLoad ? 1 : 2, valueSlot = isLoad ? 2 : 1;
  Value mask, value;
  if (s[maskSlot]) {
    FailureOr<Val> m = arg(s, maskSlot);
    if (failed(m))
      return failure();
    bool isBool = m->kind == Val::Bool ||
                  (m->isRuntime() && m->value.getType().isInteger(1));
    if (!isBool)
      return error(s[maskSlot]->loc)
                 << "the mask of a scalar '" << n << "' must be a bool "
                 << "scalar, got " << describe(*m)
                 << (shapeOf(*m).empty() ? "" : " (for a tile, add an offset "
                                                "tile to the pointer)"),
             failure();
    FailureOr<Value> mv = materialize(*m, builder.getI1Type(), s[maskSlot]->loc);
    if (failed(mv))
      return failure();
    mask = *mv;
  }
  if (s[valueSlot]) {
    if (isLoad && !s[maskSlot])
      return error(s[valueSlot]->loc) << "'other' needs a 'mask'", failure();
    FailureOr<Val> v = arg(s, valueSlot);
    if (failed(v))
      return failure();
    const char *what = isLoad ? "'other'" : "the stored value";
    if (!shapeOf(*v).empty())
      return error(s[valueSlot]->loc)
                 << what << " of a scalar '" << n << "' must be a scalar, got "
                 << describe(*v) << " (for a tile, add an offset tile to the "
                 << "pointer)",
             failure();
    if (v->isRuntime() && feType(*v) != pointee)
      return error(s[valueSlot]->loc)
                 << what << " has type " << describe(feType(*v))
                 << " but the pointee type is " << describe(pointee)
                 << "; cast it, e.g. " << describe(pointee) << "(x)",
             failure();
    FailureOr<Value> vv = coerce(*v, pointee, s[valueSlot]->loc, what);
    if (failed(vv))
      return failure();
    value = *vv;
  }
  Location l = loc(e.getLoc());
  if (isLoad)
    return typed(tl::ScalarLoadOp::create(builder, l, signlessOf(pointee),
                                          ptr.value, mask, value),
                 pointee);
  tl::ScalarStoreOp::create(builder, l, ptr.value, value, mask);
  return Val();
}

/// reduce_max/sum/min of a 1-D tile: [N] -> [1, N] -> [1] -> scalar (an
/// unsigned tile gives an unsigned scalar).
FailureOr<Val> MLIRGen::genReduceToScalar(const CallExpr &e, Val x) {
  auto t = cast<TileType>(x.value.getType());
  Location l = loc(e.getLoc());
  Type el = t.getElementType();
  auto row = TileType::get({1, t.getDimSize(0)}, el);
  Value r = tl::ExpandDimsOp::create(builder, l, row, x.value, uint32_t(0));
  tl::ReduceKind kind = e.callee == "reduce_max"   ? tl::ReduceKind::Max
                        : e.callee == "reduce_sum" ? tl::ReduceKind::Sum
                                                   : tl::ReduceKind::Min;
  r = tl::ReduceOp::create(builder, l, TileType::get({1}, el), kind, r,
                           uint32_t(1));
  return Val::of(tl::ToScalarOp::create(builder, l, el, r), x.uns);
}

/// exp, exp2, log, log2, sqrt, rsqrt, tanh, abs of a run-time scalar.
FailureOr<Val> MLIRGen::genScalarMath(StringRef n, Val x, SrcLoc sl) {
  Type t = x.value.getType();
  bool ok = n == "abs" ? !t.isInteger(1) && !isa<PtrType>(t)
                       : isa<FloatType>(t);
  if (!ok)
    return error(sl) << "'" << n << "' needs a "
                     << (n == "abs" ? "numeric" : "float") << " value, got "
                     << describe(x), failure();
  if (n == "abs" && x.uns)
    return x; // |x| of an unsigned x, as for tiles
  if (n != "abs" && t.isF64())
    return error(sl) << "'" << n << "' does not support f64, got "
                     << describe(x), failure();
  Location l = loc(sl);
  auto one = TileType::get({1}, t);
  Value v = tl::SplatOp::create(builder, l, one, x.value);
  Value r = llvm::StringSwitch<std::function<Value()>>(n)
      .Case("exp", [&] { return tl::ExpOp::create(builder, l, one, v); })
      .Case("exp2", [&] { return tl::Exp2Op::create(builder, l, one, v); })
      .Case("log", [&] { return tl::LogOp::create(builder, l, one, v); })
      .Case("log2", [&] { return tl::Log2Op::create(builder, l, one, v); })
      .Case("sqrt", [&] { return tl::SqrtOp::create(builder, l, one, v); })
      .Case("rsqrt", [&] { return tl::RsqrtOp::create(builder, l, one, v); })
      .Case("tanh", [&] { return tl::TanhOp::create(builder, l, one, v); })
      .Default([&] { return tl::AbsOp::create(builder, l, one, v); })();
  return Val::of(tl::ToScalarOp::create(builder, l, t, r), x.uns);
}

/// i32 meeting i64: sign-extended to i64. u32 meeting i64: zero-extended
/// to i64; u32 meeting u64: zero-extended to u64 (both keep the value). An
/// i32 meeting a u64 is left alone: mixed signedness is an error later.
LogicalResult MLIRGen::widenIntegers(Val &a, Val &b, SrcLoc l) {
  if (!a.isRuntime() || !b.isRuntime())
    return success();
  Type ea = getElementTypeOrSelf(a.value.getType());
  Type eb = getElementTypeOrSelf(b.value.getType());
  Val *narrow = ea.isInteger(32) && eb.isInteger(64)   ? &a
                : ea.isInteger(64) && eb.isInteger(32) ? &b
                                                       : nullptr;
  if (!narrow)
    return success();
  const Val &wideVal = narrow == &a ? b : a;
  if (wideVal.uns && !narrow->uns)
    return success();
  Type to = wideVal.uns ? withSignedness(builder.getI64Type(), true)
                        : builder.getI64Type();
  FailureOr<Val> wide = genCast(*narrow, to, l);
  if (failed(wide))
    return failure();
  *narrow = *wide;
  return success();
}
