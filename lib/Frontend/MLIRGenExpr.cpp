//===- MLIRGenExpr.cpp - expressions, operators, broadcasting -------------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

FailureOr<Val> MLIRGen::genExpr(const Expr &e) {
  if (!enterGen(e.getLoc()))
    return failure();
  FailureOr<Val> v = genExprImpl(e);
  --genDepth;
  return v;
}

FailureOr<Val> MLIRGen::genExprImpl(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Int: return Val::ofInt(llvm::cast<IntExpr>(e).value);
  case Expr::Float: return Val::ofFloat(llvm::cast<FloatExpr>(e).value);
  case Expr::Name: return genName(llvm::cast<NameExpr>(e));
  case Expr::Unary: return genUnary(llvm::cast<UnaryExpr>(e));
  case Expr::Binary: return genBinaryExpr(llvm::cast<BinaryExpr>(e));
  case Expr::Ternary: return genTernary(llvm::cast<TernaryExpr>(e));
  case Expr::Call: return genCall(llvm::cast<CallExpr>(e));
  case Expr::Index: return genIndex(llvm::cast<IndexExpr>(e));
  case Expr::List:
    return error(e.getLoc()) << "a list like [a, b] is only allowed as the "
                             << "shape argument of full() or zeros()",
           failure();
  }
  return failure();
}

FailureOr<Val> MLIRGen::genName(const NameExpr &e) {
  if (Binding *b = lookup(e.name)) {
    if (b->val.kind == Val::Fn)
      return error(e.getLoc()) << "'" << e.name << "' is "
                               << describe(b->val) << "; call it as "
                               << e.name << "(...) or pass it to a helper",
             failure();
    return b->val;
  }
  StringRef n = e.name;
  if (n == "inf")
    return Val::ofFloat(INFINITY);
  if (n == "LOG2E")
    return Val::ofFloat(1.4426950408889634);
  if (n == "LN2")
    return Val::ofFloat(0.6931471805599453);
  if (n == "true" || n == "false")
    return Val::ofBool(n == "true");
  if (succeeded(typeByName(n)))
    return Val::ofType(*typeByName(n));
  if (fns.count(n))
    return error(e.getLoc()) << "'" << n << "' is a function; call it as "
                             << n << "(...)", failure();
  return error(e.getLoc()) << "unknown name '" << n << "'", failure();
}

FailureOr<Val> MLIRGen::genUnary(const UnaryExpr &e) {
  FailureOr<Val> x = genExpr(*e.operand);
  if (failed(x))
    return failure();
  Location l = loc(e.getLoc());
  if (e.op == Tok::Tilde)
    return genBitNot(*x, e.getLoc());
  if (e.op == Tok::Not) {
    if (x->kind == Val::Bool)
      return Val::ofBool(!x->b);
    if (!x->isRuntime() || !getElementTypeOrSelf(x->value.getType()).isInteger(1))
      return error(e.getLoc()) << "'!' needs a bool operand, got "
                               << describe(*x), failure();
    Type t = x->value.getType();
    FailureOr<Value> ones = isa<TileType>(t)
        ? toTile(Val::ofBool(true), shapeOf(*x), builder.getI1Type(), e.getLoc())
        : materialize(Val::ofBool(true), t, e.getLoc());
    if (failed(ones))
      return failure();
    if (isa<TileType>(t))
      return Val::of(mlir::tile::XOrOp::create(builder, l, t, x->value, *ones));
    return Val::of(arith::XOrIOp::create(builder, l, x->value, *ones));
  }
  // Unary minus.
  if (x->kind == Val::Int) {
    if (x->i == INT64_MIN)
      return error(e.getLoc()) << "integer overflow in a compile-time "
                               << "expression", failure();
    return Val::ofInt(-x->i);
  }
  if (x->kind == Val::Float)
    return Val::ofFloat(-x->f);
  Type t = x->isRuntime() ? x->value.getType() : Type();
  Type elem = t ? getElementTypeOrSelf(t) : Type();
  if (!elem || elem.isInteger(1) || isa<PtrType>(elem))
    return error(e.getLoc()) << "'-' needs a numeric operand, got "
                             << describe(*x), failure();
  if (isa<TileType>(t))
    return Val::of(mlir::tile::NegOp::create(builder, l, t, x->value), x->uns);
  if (isa<FloatType>(t))
    return Val::of(arith::NegFOp::create(builder, l, x->value));
  return genBinary(BinOp::Sub, Val::ofInt(0), *x, e.getLoc());
}

FailureOr<Val> MLIRGen::genBinaryExpr(const BinaryExpr &e) {
  static const std::pair<Tok, BinOp> table[] = {
      {Tok::Plus, BinOp::Add}, {Tok::Minus, BinOp::Sub},
      {Tok::Star, BinOp::Mul}, {Tok::Slash, BinOp::Div},
      {Tok::Percent, BinOp::Rem}, {Tok::Lt, BinOp::Lt}, {Tok::Le, BinOp::Le},
      {Tok::Gt, BinOp::Gt}, {Tok::Ge, BinOp::Ge}, {Tok::EqEq, BinOp::Eq},
      {Tok::Ne, BinOp::Ne}, {Tok::AndAnd, BinOp::And}, {Tok::OrOr, BinOp::Or},
      {Tok::Amp, BinOp::BitAnd}, {Tok::Pipe, BinOp::BitOr},
      {Tok::Caret, BinOp::BitXor}, {Tok::Shl, BinOp::Shl},
      {Tok::Shr, BinOp::Shr}};
  BinOp op = BinOp::Add;
  for (auto [t, o] : table)
    if (t == e.op)
      op = o;
  FailureOr<Val> a = genExpr(*e.lhs);
  if (failed(a))
    return failure();
  if (op == BinOp::And || op == BinOp::Or) {
    // Compile-time bools short-circuit: `!CAUSAL || x` never emits `x`.
    bool isAnd = op == BinOp::And;
    if (a->kind == Val::Bool && a->b != isAnd)
      return *a;
    FailureOr<Val> b = genExpr(*e.rhs);
    if (failed(b))
      return failure();
    for (const Val *v : {&*a, &*b})
      if (!isBoolTyped(*v))
        return error(e.getLoc()) << tokSpelling(e.op)
                                 << " needs bool operands, got " << describe(*v),
               failure();
    if (a->kind == Val::Bool)
      return *b;
    if (b->kind == Val::Bool)
      return b->b == isAnd ? *a : *b;
    return genBinary(op, *a, *b, e.getLoc());
  }
  FailureOr<Val> b = genExpr(*e.rhs);
  if (failed(b))
    return failure();
  return genBinary(op, *a, *b, e.getLoc());
}

FailureOr<Val> MLIRGen::genTernary(const TernaryExpr &e) {
  FailureOr<Val> c = genExpr(*e.cond);
  if (failed(c))
    return failure();
  if (c->kind == Val::Bool)
    return genExpr(c->b ? *e.lhs : *e.rhs);
  FailureOr<Val> a = genExpr(*e.lhs);
  if (failed(a))
    return failure();
  FailureOr<Val> b = genExpr(*e.rhs);
  if (failed(b))
    return failure();
  return genSelect(*c, *a, *b, e.getLoc());
}

FailureOr<Val> MLIRGen::genIndex(const IndexExpr &e) {
  FailureOr<Val> x = genExpr(*e.base);
  if (failed(x))
    return failure();
  auto tt = x->isRuntime() ? dyn_cast<TileType>(x->value.getType()) : TileType();
  if (!tt)
    return error(e.getLoc()) << "only tiles can be indexed, got "
                             << describe(*x), failure();
  int64_t slices = llvm::count(e.newAxis, false);
  if (slices != tt.getRank())
    return error(e.getLoc()) << "index has " << slices << " ':' but the tile "
                             << "has rank " << tt.getRank()
                             << " (write one ':' per dimension)", failure();
  Value v = x->value;
  SmallVector<int64_t> shape(tt.getShape());
  for (auto [axis, isNew] : llvm::enumerate(e.newAxis)) {
    if (!isNew)
      continue;
    shape.insert(shape.begin() + axis, 1);
    auto t = TileType::get(shape, tt.getElementType());
    v = mlir::tile::ExpandDimsOp::create(builder, loc(e.getLoc()), t, v,
                                         uint32_t(axis));
  }
  return Val::of(v, x->uns);
}
