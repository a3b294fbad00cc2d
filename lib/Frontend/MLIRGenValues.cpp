//===- MLIRGenValues.cpp - constants, coercion, broadcasting, messages ----===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;

//===----------------------------------------------------------------------===//
// Describing values in messages
//===----------------------------------------------------------------------===//

std::string MLIRGen::describe(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto tt = dyn_cast<TileType>(t)) {
    os << describe(tt.getElementType()) << "[";
    llvm::interleave(tt.getShape(), os, ", ");
    os << "]";
  } else if (auto p = dyn_cast<PtrType>(t)) {
    os << "ptr<" << describe(p.getPointeeType()) << ">";
  } else if (auto i = dyn_cast<IntegerType>(t); i && i.isUnsigned()) {
    os << "u" << i.getWidth();
  } else if (mlir::tile::isFp8(t)) {
    os << mlir::tile::fp8Name(t);
  } else {
    t.print(os);
  }
  return s;
}

std::string MLIRGen::noFp8Arithmetic(Type elem, StringRef what) {
  return (what + " on " + describe(elem) +
          " values is not supported: fp8 tiles are loaded, stored, cast, "
          "selected (where) and multiplied (dot); cast to f16, bf16 or f32 "
          "to compute, e.g. f32(x)")
      .str();
}

std::string MLIRGen::describe(const Val &v) {
  switch (v.kind) {
  case Val::Int: return "integer constant " + std::to_string(v.i);
  case Val::Float: {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "float constant " << llvm::format("%g", v.f);
    return s;
  }
  case Val::Bool: return std::string("bool constant ") + (v.b ? "true" : "false");
  case Val::Type: return "type " + describe(v.type);
  case Val::Runtime:
    return (isa<TileType>(v.value.getType()) ? "tile " : "scalar ") +
           describe(feType(v));
  case Val::None: return "no value";
  case Val::Fn: return "function '" + v.fn->name + "'";
  }
  return "value";
}

llvm::ArrayRef<int64_t> MLIRGen::shapeOf(const Val &v) {
  if (v.isRuntime())
    if (auto t = dyn_cast<TileType>(v.value.getType()))
      return t.getShape();
  return {};
}

static std::string shapeStr(llvm::ArrayRef<int64_t> s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

//===----------------------------------------------------------------------===//
// Constants, types, broadcasting
//===----------------------------------------------------------------------===//

Type MLIRGen::defaultType(const Val &v) {
  switch (v.kind) {
  case Val::Int:
    return v.i == int64_t(int32_t(v.i)) ? builder.getI32Type()
                                        : builder.getI64Type();
  case Val::Float: return builder.getF32Type();
  case Val::Bool: return builder.getI1Type();
  case Val::Runtime: return feElem(v);
  default: return {};
  }
}

FailureOr<TypedAttr> MLIRGen::constAttr(const Val &v, Type t, SrcLoc l) {
  if (v.kind == Val::Int && t.isInteger() && !t.isInteger(1)) {
    unsigned w = t.getIntOrFloatBitWidth();
    bool fits = isUnsignedType(t)
                    ? v.i >= 0 && (w == 64 || v.i < (int64_t(1) << w))
                    : w == 64 || (v.i >= -(int64_t(1) << (w - 1)) &&
                                  v.i < (int64_t(1) << (w - 1)));
    if (!fits)
      return error(l) << "integer constant " << v.i << " does not fit in "
                      << describe(t), failure();
    return TypedAttr(builder.getIntegerAttr(signlessOf(t), v.i));
  }
  if ((v.kind == Val::Int || v.kind == Val::Float) && isa<FloatType>(t))
    return TypedAttr(builder.getFloatAttr(t, v.kind == Val::Int ? double(v.i) : v.f));
  if (v.kind == Val::Bool && t.isInteger(1))
    return TypedAttr(builder.getIntegerAttr(t, v.b ? 1 : 0));
  return error(l) << "cannot use " << describe(v) << " as a " << describe(t)
                  << " value", failure();
}

FailureOr<Value> MLIRGen::materialize(Val v, Type t, SrcLoc l) {
  if (v.isRuntime()) {
    if (feType(v) == t)
      return v.value;
    return error(l) << "expected a " << describe(t) << " value, got "
                    << describe(v), failure();
  }
  FailureOr<TypedAttr> a = constAttr(v, t, l);
  if (failed(a))
    return failure();
  return arith::ConstantOp::create(builder, loc(l), *a).getResult();
}

FailureOr<Value> MLIRGen::toRuntime(Val v, SrcLoc l) {
  if (v.isRuntime())
    return v.value;
  if (!v.isConst())
    return error(l) << "expected a value, got " << describe(v), failure();
  return materialize(v, defaultType(v), l);
}

FailureOr<SmallVector<int64_t>>
MLIRGen::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b, SrcLoc l,
                         StringRef what) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> r(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return error(l) << "cannot broadcast shapes " << shapeStr(a) << " and "
                      << shapeStr(b) << " in " << what, failure();
    r[i] = x == 1 ? y : x;
  }
  return r;
}

FailureOr<Value> MLIRGen::toTile(Val v, ArrayRef<int64_t> shape, Type feElt,
                                 SrcLoc l) {
  Type elem = signlessOf(feElt);
  auto type = TileType::get(shape, elem);
  if (!v.isRuntime()) {
    FailureOr<TypedAttr> a = constAttr(v, feElt, l);
    if (failed(a))
      return failure();
    return mlir::tile::FullOp::create(builder, loc(l), type, *a).getResult();
  }
  Value x = v.value;
  auto tt = dyn_cast<TileType>(x.getType());
  if (feElem(v) != feElt)
    return error(l) << "expected " << describe(feElt) << " elements, got "
                    << describe(v), failure();
  if (!tt)
    return mlir::tile::SplatOp::create(builder, loc(l), type, x).getResult();
  if (tt.getRank() > int64_t(shape.size()))
    return error(l) << "cannot broadcast " << shapeStr(tt.getShape()) << " to "
                    << shapeStr(shape), failure();
  for (size_t i = 0; i < tt.getShape().size(); ++i) {
    int64_t s = tt.getShape()[i], d = shape[shape.size() - tt.getRank() + i];
    if (s != d && s != 1)
      return error(l) << "cannot broadcast " << shapeStr(tt.getShape())
                      << " to " << shapeStr(shape), failure();
  }
  while (tt.getRank() < int64_t(shape.size())) {
    SmallVector<int64_t> s(tt.getShape());
    s.insert(s.begin(), 1);
    tt = TileType::get(s, elem);
    x = mlir::tile::ExpandDimsOp::create(builder, loc(l), tt, x, uint32_t(0));
  }
  if (tt != type)
    x = mlir::tile::BroadcastOp::create(builder, loc(l), type, x);
  return x;
}

FailureOr<Value> MLIRGen::coerce(Val v, Type type, SrcLoc l, StringRef what) {
  if (v.kind == Val::None || v.kind == Val::Type)
    return error(l) << what << " must be a value, got " << describe(v),
           failure();
  if (auto tt = dyn_cast<TileType>(type)) {
    if (v.isRuntime() && feElem(v) != tt.getElementType())
      return error(l) << what << " must have " << describe(tt.getElementType())
                      << " elements, got " << describe(v), failure();
    return toTile(v, tt.getShape(), tt.getElementType(), l);
  }
  if (v.isRuntime() && feType(v) != type)
    return error(l) << what << " must be a " << describe(type) << ", got "
                    << describe(v), failure();
  return materialize(v, type, l);
}

/// The element type of a binary operation: constants adapt to the other
/// operand; two run-time operands must agree.
FailureOr<Type> MLIRGen::commonElemType(Val a, Val b, SrcLoc l, StringRef what) {
  Type ea = feElem(a), eb = feElem(b);
  if (!ea && !eb) {
    if (a.kind == Val::Bool && b.kind == Val::Bool)
      return Type(builder.getI1Type());
    if (a.kind == Val::Bool || b.kind == Val::Bool)
      return error(l) << "cannot mix a bool and a number in " << what,
             failure();
    if (a.kind == Val::Float || b.kind == Val::Float)
      return Type(builder.getF32Type());
    return defaultType(std::abs(double(a.i)) > std::abs(double(b.i)) ? a : b);
  }
  if (ea && eb) {
    if (ea == eb)
      return ea;
    return error(l) << "mismatched element types " << describe(ea) << " and "
                    << describe(eb) << " in " << what
                    << "; cast one operand, e.g. " << describe(eb) << "(x)",
           failure();
  }
  const Val &c = ea ? b : a;
  Type t = ea ? ea : eb;
  bool isInt = t.isInteger() && !t.isInteger(1);
  if (c.kind == Val::Int && (isInt || isa<FloatType>(t)))
    return t;
  if (c.kind == Val::Float && isa<FloatType>(t))
    return t;
  if (c.kind == Val::Bool && t.isInteger(1))
    return t;
  std::string hint = c.kind == Val::Float && isInt
                         ? "; cast the operand, e.g. f32(x)"
                         : "";
  return error(l) << "cannot combine " << describe(c)
                  << " with an operand of type " << describe(t) << " in "
                  << what << hint,
         failure();
}

