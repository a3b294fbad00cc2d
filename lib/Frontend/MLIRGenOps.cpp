//===- MLIRGenOps.cpp - binary operators ----------------------------------===//
//
// Constant folding of compile-time operands, pointer arithmetic, then the
// scalar (arith) or tile (tile dialect) form of each operator, with
// broadcasting and constant adaptation done first.
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

static const char *opName(BinOp op) {
  switch (op) {
  case BinOp::Add: return "'+'";
  case BinOp::Sub: return "'-'";
  case BinOp::Mul: return "'*'";
  case BinOp::Div: return "'/'";
  case BinOp::Rem: return "'%'";
  case BinOp::Lt: return "'<'";
  case BinOp::Le: return "'<='";
  case BinOp::Gt: return "'>'";
  case BinOp::Ge: return "'>='";
  case BinOp::Eq: return "'=='";
  case BinOp::Ne: return "'!='";
  case BinOp::And: return "'&&'";
  case BinOp::Or: return "'||'";
  case BinOp::Max: return "max()";
  case BinOp::Min: return "min()";
  case BinOp::BitAnd: return "'&'";
  case BinOp::BitOr: return "'|'";
  case BinOp::BitXor: return "'^'";
  case BinOp::Shl: return "'<<'";
  case BinOp::Shr: return "'>>'";
  }
  return "operator";
}

/// & | ^ << >>: integers only (not bools, not floats).
static bool isBitOp(BinOp op) {
  return op == BinOp::BitAnd || op == BinOp::BitOr || op == BinOp::BitXor ||
         op == BinOp::Shl || op == BinOp::Shr;
}

static bool isCompare(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt ||
         op == BinOp::Ge || op == BinOp::Eq || op == BinOp::Ne;
}

template <typename T> static bool compare(BinOp op, T a, T b) {
  switch (op) {
  case BinOp::Lt: return a < b;
  case BinOp::Le: return a <= b;
  case BinOp::Gt: return a > b;
  case BinOp::Ge: return a >= b;
  case BinOp::Eq: return a == b;
  default: return a != b;
  }
}

/// Folds an operator on two compile-time constants.
static FailureOr<Val> fold(BinOp op, const Val &a, const Val &b,
                           function_ref<InFlightDiagnostic()> err) {
  if (a.kind == Val::Bool || b.kind == Val::Bool) {
    if (a.kind != Val::Bool || b.kind != Val::Bool)
      return err() << "cannot mix a bool and a number in " << opName(op),
             failure();
    if (op == BinOp::And || op == BinOp::Or)
      return Val::ofBool(op == BinOp::And ? (a.b && b.b) : (a.b || b.b));
    if (op == BinOp::Eq || op == BinOp::Ne)
      return Val::ofBool((a.b == b.b) == (op == BinOp::Eq));
    return err() << opName(op) << " is not defined on bool values", failure();
  }
  if (op == BinOp::And || op == BinOp::Or)
    return err() << opName(op) << " needs bool operands", failure();
  if (isBitOp(op) && (a.kind == Val::Float || b.kind == Val::Float))
    return err() << opName(op) << " needs integer operands, got "
                 << (a.kind == Val::Float ? "a float" : "an integer") << " and "
                 << (b.kind == Val::Float ? "a float" : "an integer")
                 << " constant", failure();
  if (a.kind == Val::Float || b.kind == Val::Float) {
    double x = a.kind == Val::Float ? a.f : double(a.i);
    double y = b.kind == Val::Float ? b.f : double(b.i);
    if (isCompare(op))
      return Val::ofBool(compare(op, x, y));
    switch (op) {
    case BinOp::Add: return Val::ofFloat(x + y);
    case BinOp::Sub: return Val::ofFloat(x - y);
    case BinOp::Mul: return Val::ofFloat(x * y);
    case BinOp::Div: return Val::ofFloat(x / y);
    case BinOp::Rem: return Val::ofFloat(std::fmod(x, y));
    case BinOp::Max: return Val::ofFloat(std::isnan(x) || x > y ? x : y);
    default: return Val::ofFloat(std::isnan(x) || x < y ? x : y);
    }
  }
  int64_t x = a.i, y = b.i, r = 0;
  if (isCompare(op))
    return Val::ofBool(compare(op, x, y));
  bool overflow = false;
  switch (op) {
  case BinOp::Add: overflow = __builtin_add_overflow(x, y, &r); break;
  case BinOp::Sub: overflow = __builtin_sub_overflow(x, y, &r); break;
  case BinOp::Mul: overflow = __builtin_mul_overflow(x, y, &r); break;
  case BinOp::Div:
  case BinOp::Rem:
    if (y == 0)
      return err() << "division by zero in a compile-time expression",
             failure();
    if (x == INT64_MIN && y == -1)
      overflow = true;
    else
      r = op == BinOp::Div ? x / y : x % y;
    break;
  case BinOp::Max: r = std::max(x, y); break;
  case BinOp::BitAnd: r = x & y; break;
  case BinOp::BitOr: r = x | y; break;
  case BinOp::BitXor: r = x ^ y; break;
  case BinOp::Shl:
  case BinOp::Shr:
    if (y < 0 || y > 63)
      return err() << "shift amount " << y << " out of range [0, 63] in a "
                   << "compile-time expression", failure();
    r = op == BinOp::Shr ? x >> y : int64_t(uint64_t(x) << y);
    overflow = op == BinOp::Shl && (r >> y) != x;
    break;
  default: r = std::min(x, y); break;
  }
  if (overflow)
    return err() << "integer overflow in a compile-time expression", failure();
  return Val::ofInt(r);
}

static tl::CmpPredicate tilePred(BinOp op) {
  switch (op) {
  case BinOp::Lt: return tl::CmpPredicate::lt;
  case BinOp::Le: return tl::CmpPredicate::le;
  case BinOp::Gt: return tl::CmpPredicate::gt;
  case BinOp::Ge: return tl::CmpPredicate::ge;
  case BinOp::Eq: return tl::CmpPredicate::eq;
  default: return tl::CmpPredicate::ne;
  }
}

/// The scalar form of `op` on two values of one type; `uns`: unsigned
/// integers.
static Value scalarOp(OpBuilder &b, Location l, BinOp op, Value x, Value y,
                      bool uns) {
  bool isF = isa<FloatType>(x.getType());
  if (isCompare(op)) {
    if (isF) {
      arith::CmpFPredicate p[] = {arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE,
                                  arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE,
                                  arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE};
      return arith::CmpFOp::create(b, l, p[int(op) - int(BinOp::Lt)], x, y);
    }
    using P = arith::CmpIPredicate;
    P p[] = {P::slt, P::sle, P::sgt, P::sge, P::eq, P::ne};
    P u[] = {P::ult, P::ule, P::ugt, P::uge, P::eq, P::ne};
    return arith::CmpIOp::create(b, l, (uns ? u : p)[int(op) - int(BinOp::Lt)],
                                 x, y);
  }
  if (uns) {
    switch (op) {
    case BinOp::Div: return arith::DivUIOp::create(b, l, x, y);
    case BinOp::Rem: return arith::RemUIOp::create(b, l, x, y);
    case BinOp::Max: return arith::MaxUIOp::create(b, l, x, y);
    case BinOp::Min: return arith::MinUIOp::create(b, l, x, y);
    case BinOp::Shr: return arith::ShRUIOp::create(b, l, x, y);
    default: break;
    }
  }
  switch (op) {
  case BinOp::BitAnd: return arith::AndIOp::create(b, l, x, y);
  case BinOp::BitOr: return arith::OrIOp::create(b, l, x, y);
  case BinOp::BitXor: return arith::XOrIOp::create(b, l, x, y);
  case BinOp::Shl: return arith::ShLIOp::create(b, l, x, y);
  case BinOp::Shr: return arith::ShRSIOp::create(b, l, x, y);
  case BinOp::Add: return isF ? Value(arith::AddFOp::create(b, l, x, y)) : Value(arith::AddIOp::create(b, l, x, y));
  case BinOp::Sub: return isF ? Value(arith::SubFOp::create(b, l, x, y)) : Value(arith::SubIOp::create(b, l, x, y));
  case BinOp::Mul: return isF ? Value(arith::MulFOp::create(b, l, x, y)) : Value(arith::MulIOp::create(b, l, x, y));
  case BinOp::Div: return isF ? Value(arith::DivFOp::create(b, l, x, y)) : Value(arith::DivSIOp::create(b, l, x, y));
  case BinOp::Rem: return isF ? Value(arith::RemFOp::create(b, l, x, y)) : Value(arith::RemSIOp::create(b, l, x, y));
  case BinOp::Max: return isF ? Value(arith::MaximumFOp::create(b, l, x, y)) : Value(arith::MaxSIOp::create(b, l, x, y));
  case BinOp::Min: return isF ? Value(arith::MinimumFOp::create(b, l, x, y)) : Value(arith::MinSIOp::create(b, l, x, y));
  case BinOp::And: return arith::AndIOp::create(b, l, x, y);
  default: return arith::OrIOp::create(b, l, x, y);
  }
}

/// The tile form of `op` on two tiles of one type; `uns`: unsigned integers.
static Value tileOp(OpBuilder &b, Location l, BinOp op, Value x, Value y,
                    bool uns) {
  auto t = cast<TileType>(x.getType());
  if (isCompare(op)) {
    tl::CmpPredicate p = tilePred(op);
    if (uns && p >= tl::CmpPredicate::lt)
      p = tl::CmpPredicate(int(p) - int(tl::CmpPredicate::lt) +
                           int(tl::CmpPredicate::ult));
    return tl::CmpOp::create(b, l, t.withElementType(b.getI1Type()), p, x, y);
  }
  if (uns) {
    switch (op) {
    case BinOp::Div: return tl::DivUOp::create(b, l, t, x, y);
    case BinOp::Rem: return tl::RemUOp::create(b, l, t, x, y);
    case BinOp::Max: return tl::MaxUOp::create(b, l, t, x, y);
    case BinOp::Min: return tl::MinUOp::create(b, l, t, x, y);
    case BinOp::Shr: return tl::ShrUOp::create(b, l, t, x, y);
    default: break;
    }
  }
  switch (op) {
  case BinOp::BitAnd: return tl::AndOp::create(b, l, t, x, y);
  case BinOp::BitOr: return tl::OrOp::create(b, l, t, x, y);
  case BinOp::BitXor: return tl::XOrOp::create(b, l, t, x, y);
  case BinOp::Shl: return tl::ShlOp::create(b, l, t, x, y);
  case BinOp::Shr: return tl::ShrSOp::create(b, l, t, x, y);
  case BinOp::Add: return tl::AddOp::create(b, l, t, x, y);
  case BinOp::Sub: return tl::SubOp::create(b, l, t, x, y);
  case BinOp::Mul: return tl::MulOp::create(b, l, t, x, y);
  case BinOp::Div: return tl::DivOp::create(b, l, t, x, y);
  case BinOp::Rem: return tl::RemOp::create(b, l, t, x, y);
  case BinOp::Max: return tl::MaxOp::create(b, l, t, x, y);
  case BinOp::Min: return tl::MinOp::create(b, l, t, x, y);
  case BinOp::And: return tl::AndOp::create(b, l, t, x, y);
  default: return tl::OrOp::create(b, l, t, x, y);
  }
}

bool ::tile::frontend::isBoolTyped(const Val &v) {
  return v.kind == Val::Bool ||
         (v.isRuntime() && getElementTypeOrSelf(v.value.getType()).isInteger(1));
}

static bool isPtrTyped(const Val &v) {
  return v.isRuntime() && isa<PtrType>(getElementTypeOrSelf(v.value.getType()));
}

FailureOr<Val> MLIRGen::genBinary(BinOp op, Val a, Val b, SrcLoc l) {
  for (const Val *v : {&a, &b})
    if (v->kind == Val::None || v->kind == Val::Type)
      return error(l) << opName(op) << " needs values, got " << describe(*v),
             failure();
  if (a.isConst() && b.isConst())
    return fold(op, a, b, [&] { return error(l); });
  if (failed(widenIntegers(a, b, l)))
    return failure();

  // Pointer arithmetic: ptr + int offsets (in elements).
  if (isPtrTyped(a) || isPtrTyped(b)) {
    if (op != BinOp::Add || (isPtrTyped(a) && isPtrTyped(b)))
      return error(l) << "only 'pointer + integer' is supported on pointers, "
                      << "got " << describe(a) << " " << opName(op) << " "
                      << describe(b), failure();
    const Val &p = isPtrTyped(a) ? a : b, &o = isPtrTyped(a) ? b : a;
    Type ot = o.isRuntime() ? feElem(o)
                            : (o.kind == Val::Int ? defaultType(o) : Type());
    if (!ot || !(ot.isSignlessInteger(32) || ot.isSignlessInteger(64)))
      return error(l) << "pointer offsets must be i32 or i64 integers, got "
                      << describe(o), failure();
    Type pt = getElementTypeOrSelf(p.value.getType());
    if (shapeOf(p).empty() && shapeOf(o).empty()) {
      FailureOr<Value> off = materialize(o, ot, l);
      if (failed(off))
        return failure();
      return Val::of(tl::AddPtrOp::create(builder, loc(l), pt, p.value, *off),
                     p.uns);
    }
    auto shape = broadcastShapes(shapeOf(p), shapeOf(o), l, "pointer '+'");
    if (failed(shape))
      return failure();
    FailureOr<Value> pv = toTile(p, *shape, feElem(p), l);
    FailureOr<Value> ov = failed(pv) ? FailureOr<Value>(failure()) : toTile(o, *shape, ot, l);
    if (failed(ov))
      return failure();
    return Val::of(tl::AddPtrOp::create(builder, loc(l),
                                        TileType::get(*shape, pt), *pv, *ov),
                   p.uns);
  }

  FailureOr<Type> elem = commonElemType(a, b, l, opName(op));
  if (failed(elem))
    return failure();
  if (mlir::tile::isFp8(*elem))
    return error(l) << noFp8Arithmetic(*elem, opName(op)), failure();
  bool isBool = elem->isInteger(1);
  if (isBitOp(op) && (isBool || !elem->isInteger()))
    return error(l) << opName(op) << " needs integer operands, got "
                    << describe(*elem)
                    << (isBool ? " (use &&, || and ! on bools)" : ""),
           failure();
  if ((op == BinOp::And || op == BinOp::Or) != isBool)
    return error(l) << (isBool ? "arithmetic and comparisons are not defined "
                                 "on bool values; use &&, || and !"
                               : "needs bool operands")
                    << " (" << opName(op) << " on " << describe(*elem) << ")",
           failure();
  bool uns = isUnsignedType(*elem);
  Type resElem = isCompare(op) ? Type(builder.getI1Type()) : *elem;
  if (shapeOf(a).empty() && shapeOf(b).empty()) {
    FailureOr<Value> x = materialize(a, *elem, l);
    FailureOr<Value> y = failed(x) ? FailureOr<Value>(failure()) : materialize(b, *elem, l);
    if (failed(y))
      return failure();
    return typed(scalarOp(builder, loc(l), op, *x, *y, uns), resElem);
  }
  auto shape = broadcastShapes(shapeOf(a), shapeOf(b), l, opName(op));
  if (failed(shape))
    return failure();
  FailureOr<Value> x = toTile(a, *shape, *elem, l);
  FailureOr<Value> y = failed(x) ? FailureOr<Value>(failure()) : toTile(b, *shape, *elem, l);
  if (failed(y))
    return failure();
  return typed(tileOp(builder, loc(l), op, *x, *y, uns), resElem);
}
