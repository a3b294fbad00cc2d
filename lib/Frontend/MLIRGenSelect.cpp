//===- MLIRGenSelect.cpp - select, fma and casts --------------------------===//
//
// where(c, a, b), fma(a, b, c) and conversions between types: operands
// broadcast and constants adapted to the other operand's type first, as for
// the binary operators (MLIRGenOps.cpp); constants fold.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;
namespace tl = mlir::tile;

FailureOr<Val> MLIRGen::genSelect(Val c, Val a, Val b, SrcLoc l) {
  if (c.kind == Val::Bool)
    return c.b ? a : b;
  if (!isBoolTyped(c))
    return error(l) << "the condition must be a bool, got " << describe(c),
           failure();
  for (const Val *v : {&a, &b})
    if (v->kind == Val::None || v->kind == Val::Type)
      return error(l) << "select needs values, got " << describe(*v),
             failure();
  if (failed(widenIntegers(a, b, l)))
    return failure();
  FailureOr<Type> elem = commonElemType(a, b, l, "a select");
  if (failed(elem))
    return failure();
  if (shapeOf(c).empty() && shapeOf(a).empty() && shapeOf(b).empty()) {
    FailureOr<Value> x = materialize(a, *elem, l);
    FailureOr<Value> y = failed(x) ? FailureOr<Value>(failure()) : materialize(b, *elem, l);
    if (failed(y))
      return failure();
    return typed(arith::SelectOp::create(builder, loc(l), c.value, *x, *y),
                 *elem);
  }
  auto s1 = broadcastShapes(shapeOf(c), shapeOf(a), l, "a select");
  if (failed(s1))
    return failure();
  auto shape = broadcastShapes(*s1, shapeOf(b), l, "a select");
  if (failed(shape))
    return failure();
  FailureOr<Value> cv = toTile(c, *shape, builder.getI1Type(), l);
  FailureOr<Value> x = failed(cv) ? FailureOr<Value>(failure()) : toTile(a, *shape, *elem, l);
  FailureOr<Value> y = failed(x) ? FailureOr<Value>(failure()) : toTile(b, *shape, *elem, l);
  if (failed(y))
    return failure();
  return typed(tl::WhereOp::create(builder, loc(l),
                                   TileType::get(*shape, signlessOf(*elem)),
                                   *cv, *x, *y),
               *elem);
}

/// fma(a, b, c) = a * b + c rounded once: floats only, broadcast like a
/// binary operator; compile-time constants fold.
FailureOr<Val> MLIRGen::genFma(Val a, Val b, Val c, SrcLoc l) {
  for (const Val *v : {&a, &b, &c})
    if (v->kind == Val::None || v->kind == Val::Type || v->kind == Val::Bool)
      return error(l) << "fma needs floating-point values, got "
                      << describe(*v), failure();
  if (a.isConst() && b.isConst() && c.isConst()) {
    if (a.kind != Val::Float && b.kind != Val::Float && c.kind != Val::Float)
      return error(l) << "fma needs floating-point values, got integer "
                         "constants (write one as a float, e.g. 2.0)", failure();
    auto num = [](const Val &v) { return v.kind == Val::Int ? double(v.i) : v.f; };
    return Val::ofFloat(std::fma(num(a), num(b), num(c)));
  }
  // One element type for the three (each pair must agree).
  FailureOr<Type> elem = commonElemType(a, b, l, "fma");
  if (failed(elem) || failed(commonElemType(a, c, l, "fma")) ||
      failed(commonElemType(b, c, l, "fma")))
    return failure();
  for (const Val *v : {&a, &b, &c})
    if (v->isRuntime())
      elem = getElementTypeOrSelf(v->value.getType());
  if (!isa<FloatType>(*elem))
    return error(l) << "fma needs floating-point values, got "
                    << describe(*elem), failure();
  if (shapeOf(a).empty() && shapeOf(b).empty() && shapeOf(c).empty()) {
    SmallVector<Value, 3> s;
    for (const Val *v : {&a, &b, &c}) {
      FailureOr<Value> x = materialize(*v, *elem, l);
      if (failed(x))
        return failure();
      s.push_back(*x);
    }
    return Val::of(math::FmaOp::create(builder, loc(l), s[0], s[1], s[2]));
  }
  auto s1 = broadcastShapes(shapeOf(a), shapeOf(b), l, "fma");
  if (failed(s1))
    return failure();
  auto shape = broadcastShapes(*s1, shapeOf(c), l, "fma");
  if (failed(shape))
    return failure();
  SmallVector<Value, 3> t;
  for (const Val *v : {&a, &b, &c}) {
    FailureOr<Value> x = toTile(*v, *shape, *elem, l);
    if (failed(x))
      return failure();
    t.push_back(*x);
  }
  return Val::of(tl::FmaOp::create(builder, loc(l), TileType::get(*shape, *elem),
                                   t[0], t[1], t[2]));
}

/// Scalar conversion between integer and float types (signless IR types);
/// `uns` makes the integer side unsigned: the source of an int-to-int or
/// int-to-float conversion, the result of a float-to-int one.
static Value scalarCast(OpBuilder &b, Location l, Value x, Type to, bool uns) {
  Type from = x.getType();
  if (from == to)
    return x;
  bool fromF = isa<FloatType>(from), toF = isa<FloatType>(to);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (to.isInteger(1)) {
    if (fromF) {
      Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(from, 0.0));
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x, zero);
    }
    Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x, zero);
  }
  if (!fromF && !toF) {
    if (fw == tw)
      return x;
    if (fw < tw)
      return from.isInteger(1) || uns
                 ? Value(arith::ExtUIOp::create(b, l, to, x))
                 : Value(arith::ExtSIOp::create(b, l, to, x));
    return arith::TruncIOp::create(b, l, to, x);
  }
  if (!fromF)
    return from.isInteger(1) || uns
               ? Value(arith::UIToFPOp::create(b, l, to, x))
               : Value(arith::SIToFPOp::create(b, l, to, x));
  if (!toF)
    return uns ? Value(arith::FPToUIOp::create(b, l, to, x))
               : Value(arith::FPToSIOp::create(b, l, to, x));
  if (fw < tw)
    return arith::ExtFOp::create(b, l, to, x);
  if (fw > tw)
    return arith::TruncFOp::create(b, l, to, x);
  Value wide = arith::ExtFOp::create(b, l, b.getF32Type(), x); // f16 <-> bf16
  return arith::TruncFOp::create(b, l, to, wide);
}

FailureOr<Val> MLIRGen::genCast(Val x, Type to, SrcLoc l) {
  if (x.kind == Val::None || x.kind == Val::Type)
    return error(l) << "cannot cast " << describe(x), failure();
  if (mlir::tile::isFp8(to) &&
      !(x.isRuntime() && isa<TileType>(x.value.getType())))
    return error(l) << "fp8 values live in tiles: " << describe(to)
                    << "(x) needs a tile, got " << describe(x), failure();
  if (x.isConst()) {
    Val c = x;
    if (to.isInteger(1)) {
      c = Val::ofBool(x.kind == Val::Bool ? x.b
                      : x.kind == Val::Int ? x.i != 0 : x.f != 0);
    } else if (to.isInteger()) {
      if (x.kind == Val::Float) {
        if (!(std::fabs(x.f) < 9.2e18))
          return error(l) << "cannot convert " << describe(x) << " to "
                          << describe(to), failure();
        c = Val::ofInt(int64_t(x.f));
      } else if (x.kind == Val::Bool) {
        c = Val::ofInt(x.b);
      }
    } else if (x.kind == Val::Bool) {
      c = Val::ofFloat(x.b ? 1.0 : 0.0);
    }
    FailureOr<Value> v = materialize(c, to, l);
    if (failed(v))
      return failure();
    return typed(*v, to);
  }
  Type t = x.value.getType();
  if (isa<PtrType>(getElementTypeOrSelf(t)))
    return error(l) << "cannot cast " << describe(x) << " to " << describe(to),
           failure();
  // The integer side whose signedness matters: the source unless the
  // source is a float.
  bool uns = isa<FloatType>(getElementTypeOrSelf(t)) ? isUnsignedType(to)
                                                     : x.uns;
  Type irTo = signlessOf(to);
  if (auto tt = dyn_cast<TileType>(t)) {
    if (tt.getElementType() == irTo) // same bits (i32 <-> u32): no op
      return typed(x.value, to);
    // fp8 <-> integers go through f32 (the lowering converts fp8 only to
    // and from floats).
    Type from = tt.getElementType();
    if ((mlir::tile::isFp8(from) && isa<IntegerType>(irTo)) ||
        (mlir::tile::isFp8(irTo) && isa<IntegerType>(from))) {
      FailureOr<Val> mid = genCast(x, builder.getF32Type(), l);
      return failed(mid) ? mid : genCast(*mid, to, l);
    }
    auto c = tl::CastOp::create(builder, loc(l), tt.withElementType(irTo),
                                x.value);
    if (uns && !irTo.isInteger(1))
      c.setIsUnsigned(true);
    return typed(c, to);
  }
  return typed(scalarCast(builder, loc(l), x.value, irTo, uns), to);
}
