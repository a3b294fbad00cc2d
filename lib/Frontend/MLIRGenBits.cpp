//===- MLIRGenBits.cpp - '~', bitcast(x, T), umulhi(a, b) -----------------===//
//
// Bit-level builtins on integers. All are one instruction per element (or
// none: a bitcast only renames the register).
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;
namespace tl = mlir::tile;

/// `~x`: x xor all-ones, on integers (constants fold).
FailureOr<Val> MLIRGen::genBitNot(Val x, SrcLoc l) {
  if (x.kind == Val::Int)
    return Val::ofInt(~x.i);
  Type elem = x.isRuntime() ? feElem(x) : Type();
  if (!elem || !elem.isInteger() || elem.isInteger(1))
    return error(l) << "'~' needs an integer operand, got " << describe(x)
                    << ((elem && elem.isInteger(1)) || x.kind == Val::Bool
                            ? " (use '!' on bools)"
                            : ""),
           failure();
  Type ir = signlessOf(elem);
  auto ones = builder.getIntegerAttr(ir, -1);
  Location at = loc(l);
  if (auto t = dyn_cast<TileType>(x.value.getType())) {
    Value full = tl::FullOp::create(builder, at, t, ones);
    return Val::of(tl::XOrOp::create(builder, at, t, x.value, full), x.uns);
  }
  Value c = arith::ConstantOp::create(builder, at, ones);
  return Val::of(arith::XOrIOp::create(builder, at, x.value, c), x.uns);
}

/// bitcast(x, T): the same bits as another type of the same width.
FailureOr<Val> MLIRGen::genBitcast(Val x, Type to, SrcLoc l) {
  if (x.isConst()) {
    FailureOr<Value> v = toRuntime(x, l);
    if (failed(v))
      return failure();
    x = Val::of(*v);
  }
  if (!x.isRuntime())
    return error(l) << "bitcast needs a value, got " << describe(x), failure();
  Type from = feElem(x);
  if (isa<PtrType>(from) || from.isInteger(1) || to.isInteger(1))
    return error(l) << "cannot bitcast " << describe(x) << " to "
                    << describe(to) << " (bitcast works on numbers)",
           failure();
  unsigned wf = from.getIntOrFloatBitWidth(), wt = to.getIntOrFloatBitWidth();
  if (wf != wt)
    return error(l) << "bitcast needs types of one bit width, got "
                    << describe(x) << " (" << wf << " bits) and "
                    << describe(to) << " (" << wt << " bits)",
           failure();
  Type ir = signlessOf(to);
  Location at = loc(l);
  if (getElementTypeOrSelf(x.value.getType()) == ir)
    return typed(x.value, to);
  if (auto t = dyn_cast<TileType>(x.value.getType()))
    return typed(tl::BitcastOp::create(builder, at, t.withElementType(ir),
                                       x.value),
                 to);
  return typed(arith::BitcastOp::create(builder, at, ir, x.value), to);
}

/// umulhi(a, b): the high half of the full product of two u32 (or u64)
/// values, broadcast like a binary operator.
FailureOr<Val> MLIRGen::genMulHi(Val a, Val b, SrcLoc l) {
  for (const Val *v : {&a, &b})
    if (v->kind != Val::Int && !v->isRuntime())
      return error(l) << "umulhi needs integer values, got " << describe(*v),
             failure();
  FailureOr<Type> elem = commonElemType(a, b, l, "umulhi");
  if (failed(elem))
    return failure();
  if (!isUnsignedType(*elem) || elem->getIntOrFloatBitWidth() < 32)
    return error(l) << "umulhi needs u32 or u64 operands, got "
                    << describe(*elem) << "; cast them, e.g. u32(x)",
           failure();
  Location at = loc(l);
  if (shapeOf(a).empty() && shapeOf(b).empty()) {
    FailureOr<Value> x = materialize(a, *elem, l);
    FailureOr<Value> y =
        failed(x) ? FailureOr<Value>(failure()) : materialize(b, *elem, l);
    if (failed(y))
      return failure();
    return typed(arith::MulUIExtendedOp::create(builder, at, *x, *y).getHigh(),
                 *elem);
  }
  auto shape = broadcastShapes(shapeOf(a), shapeOf(b), l, "umulhi");
  if (failed(shape))
    return failure();
  FailureOr<Value> x = toTile(a, *shape, *elem, l);
  FailureOr<Value> y =
      failed(x) ? FailureOr<Value>(failure()) : toTile(b, *shape, *elem, l);
  if (failed(y))
    return failure();
  auto t = TileType::get(*shape, signlessOf(*elem));
  return typed(tl::MulHiUOp::create(builder, at, t, *x, *y), *elem);
}

FailureOr<Val> MLIRGen::genBitsBuiltin(const CallExpr &e, Slots s) {
  FailureOr<Val> x = arg(s, 0);
  if (failed(x))
    return failure();
  FailureOr<Val> y = arg(s, 1);
  if (failed(y))
    return failure();
  if (e.callee == "umulhi")
    return genMulHi(*x, *y, e.getLoc());
  if (y->kind != Val::Type || isa<PtrType>(y->type))
    return error(s[1]->loc) << "bitcast's dtype must be a scalar type such "
                            << "as u32, got " << describe(*y), failure();
  return genBitcast(*x, y->type, e.getLoc());
}
