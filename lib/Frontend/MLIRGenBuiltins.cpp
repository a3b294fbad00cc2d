//===- MLIRGenBuiltins.cpp - builtin calls, casts and helper calls --------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringSwitch.h"

#include <array>
#include <functional>
#include <cmath>

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;
namespace tl = mlir::tile;

namespace {
/// A builtin's parameters, in positional order; the first `required` must
/// be given. Any parameter may also be passed by name (`mask: m`).
struct BuiltinSig {
  const char *name;
  unsigned required;
  std::array<const char *, 8> params;
};
} // namespace

static const BuiltinSig kBuiltins[] = {
    {"program_id", 1, {"axis"}},        {"num_programs", 1, {"axis"}},
    {"iota", 1, {"n"}},                 {"full", 2, {"shape", "value", "dtype"}},
    {"zeros", 1, {"shape", "dtype"}},   {"load", 1, {"ptr", "mask", "other"}},
    {"store", 2, {"ptr", "value", "mask"}},
    {"atomic_add", 2, {"ptr", "value", "mask"}},
    {"dot", 2, {"a", "b", "acc", "allow_tf32"}},
    {"reduce_max", 1, {"x", "axis"}},   {"reduce_sum", 1, {"x", "axis"}},
    {"reduce_min", 1, {"x", "axis"}},   {"trans", 1, {"x"}},
    {"where", 3, {"cond", "a", "b"}},   {"exp", 1, {"x"}},
    {"exp2", 1, {"x"}},                 {"log", 1, {"x"}},
    {"log2", 1, {"x"}},                 {"sqrt", 1, {"x"}},
    {"rsqrt", 1, {"x"}},                {"tanh", 1, {"x"}},
    {"abs", 1, {"x"}},                  {"max", 2, {"a", "b"}},
    {"min", 2, {"a", "b"}},             {"fma", 3, {"a", "b", "c"}},
    {"bitcast", 2, {"x", "dtype"}},     {"umulhi", 2, {"a", "b"}},
    {"philox", 2, {"seed", "c0", "c1", "c2", "c3", "word", "rounds"}},
    {"randint", 2, {"seed", "offset", "rounds"}},
    {"rand", 2, {"seed", "offset", "rounds"}},
    {"require", 1, {"cond"}},
};

static const BuiltinSig *findBuiltin(StringRef name) {
  for (const BuiltinSig &b : kBuiltins)
    if (name == b.name)
      return &b;
  return nullptr;
}

bool ::tile::frontend::isBuiltinFunction(StringRef name) {
  return findBuiltin(name) != nullptr;
}

FailureOr<Type> MLIRGen::typeByName(StringRef name) {
  Type t = llvm::StringSwitch<Type>(name)
               .Cases({"i1", "bool"}, builder.getI1Type())
               .Case("i8", builder.getI8Type())
               .Case("u8", builder.getIntegerType(8, false))
               .Case("i16", builder.getI16Type())
               .Case("u16", builder.getIntegerType(16, false))
               .Case("i32", builder.getI32Type())
               .Case("u32", builder.getIntegerType(32, false))
               .Case("i64", builder.getI64Type())
               .Case("u64", builder.getIntegerType(64, false))
               .Case("f16", builder.getF16Type())
               .Case("bf16", builder.getBF16Type())
               .Case("f32", builder.getF32Type())
               .Case("f64", builder.getF64Type())
               .Case("f8e4m3", builder.getType<Float8E4M3FNType>())
               .Case("f8e5m2", builder.getType<Float8E5M2Type>())
               .Default(Type());
  if (!t)
    return failure();
  return t;
}

/// Matches the call's arguments to the builtin's parameter slots.
static LogicalResult bindSlots(const BuiltinSig &sig, const CallExpr &e,
                               SmallVectorImpl<const CallArg *> &slots,
                               function_ref<InFlightDiagnostic(SrcLoc)> err) {
  unsigned n = 0;
  while (n < sig.params.size() && sig.params[n])
    ++n;
  slots.assign(n, nullptr);
  unsigned next = 0;
  for (const CallArg &a : e.args) {
    unsigned i = next;
    if (a.name.empty()) {
      if (next >= n)
        return err(a.loc) << "'" << sig.name << "' takes at most " << n
                          << " argument" << (n == 1 ? "" : "s") << ", got "
                          << e.args.size();
      ++next;
    } else {
      i = n;
      for (unsigned j = 0; j < n; ++j)
        if (a.name == sig.params[j])
          i = j;
      if (i == n) {
        auto d = err(a.loc);
        d << "'" << sig.name << "' has no argument named '" << a.name
          << "' (its arguments are: ";
        for (unsigned j = 0; j < n; ++j)
          d << (j ? ", " : "") << sig.params[j];
        return d << ")";
      }
    }
    if (slots[i])
      return err(a.loc) << "argument '" << sig.params[i] << "' of '"
                        << sig.name << "' is given twice";
    slots[i] = &a;
  }
  for (unsigned j = 0; j < sig.required; ++j)
    if (!slots[j])
      return err(e.getLoc()) << "'" << sig.name << "' needs argument '"
                             << sig.params[j] << "'";
  return success();
}

FailureOr<Val> MLIRGen::arg(Slots s, unsigned i) {
  FailureOr<Val> v = genExpr(*s[i]->value);
  if (succeeded(v) && v->kind == Val::None)
    return error(s[i]->loc) << "argument has no value", failure();
  return v;
}

FailureOr<int64_t> MLIRGen::constIntArg(const CallExpr &e, Slots s, unsigned i,
                                        StringRef what) {
  FailureOr<Val> v = arg(s, i);
  if (failed(v))
    return failure();
  if (v->kind != Val::Int)
    return error(s[i]->loc) << what << " must be a compile-time integer, got "
                            << describe(*v), failure();
  return v->i;
}

FailureOr<SmallVector<int64_t>> MLIRGen::genShape(const Expr &e) {
  SmallVector<const Expr *> dims;
  if (auto *l = llvm::dyn_cast<ListExpr>(&e))
    for (const ExprPtr &x : l->elems)
      dims.push_back(x.get());
  else
    dims.push_back(&e);
  if (dims.empty())
    return error(e.getLoc()) << "a shape needs at least one dimension",
           failure();
  SmallVector<int64_t> shape;
  int64_t numel = 1;
  for (const Expr *d : dims) {
    FailureOr<Val> v = genExpr(*d);
    if (failed(v))
      return failure();
    if (v->kind != Val::Int)
      return error(d->getLoc()) << "shape must be a compile-time constant, "
                                << "got " << describe(*v), failure();
    if (v->i <= 0)
      return error(d->getLoc()) << "tile dimensions must be positive, got "
                                << v->i, failure();
    if (v->i > (1 << 24) || (numel *= v->i) > (1 << 24))
      return error(d->getLoc()) << "tile too large (at most 16777216 "
                                << "elements)", failure();
    shape.push_back(v->i);
  }
  return shape;
}

/// A helper named as a value: a function's name, or a compile-time
/// parameter or helper parameter that holds one. Null otherwise.
const FnDecl *MLIRGen::fnValue(const Expr &e) {
  auto *n = dyn_cast<NameExpr>(&e);
  if (!n)
    return nullptr;
  if (Binding *b = lookup(n->name))
    return b->val.kind == Val::Fn ? b->val.fn : nullptr;
  return fns.lookup(n->name);
}

FailureOr<Val> MLIRGen::genCall(const CallExpr &e) {
  // A helper, called by its name or through a parameter holding it
  // (`SCORE_MOD(s, ...)` with SCORE_MOD = softcap).
  const FnDecl *callee = nullptr;
  if (Binding *b = lookup(e.callee); b && b->val.kind == Val::Fn)
    callee = b->val.fn;
  else if (!lookup(e.callee))
    callee = fns.lookup(e.callee);
  if (callee) {
    std::vector<Val> args;
    for (const CallArg &a : e.args) {
      if (!a.name.empty())
        return error(a.loc) << "helper function '" << e.callee
                            << "' takes positional arguments only", failure();
      // Helpers may take helpers: `apply(softcap, s)`.
      if (const FnDecl *f = fnValue(*a.value)) {
        args.push_back(Val::ofFn(f));
        continue;
      }
      FailureOr<Val> v = genExpr(*a.value);
      if (failed(v))
        return failure();
      args.push_back(*v);
    }
    return inlineFn(*callee, e, std::move(args));
  }
  if (findBuiltin(e.callee))
    return genBuiltin(e);
  // A type name (built in or a compile-time type parameter) casts.
  Type to;
  if (Binding *b = lookup(e.callee)) {
    if (b->val.kind != Val::Type)
      return error(e.getLoc()) << "'" << e.callee << "' is a variable, not a "
                               << "function", failure();
    to = b->val.type;
  } else if (succeeded(typeByName(e.callee))) {
    to = *typeByName(e.callee);
  } else {
    return error(e.getLoc()) << "unknown function '" << e.callee << "'",
           failure();
  }
  if (e.args.size() != 1 || !e.args[0].name.empty())
    return error(e.getLoc()) << "the cast " << e.callee << "(x) takes one "
                             << "positional argument", failure();
  FailureOr<Val> x = genExpr(*e.args[0].value);
  if (failed(x))
    return failure();
  return genCast(*x, to, e.getLoc());
}

FailureOr<Val> MLIRGen::genBuiltin(const CallExpr &e) {
  const BuiltinSig *sig = findBuiltin(e.callee);
  SmallVector<const CallArg *> slots;
  if (!sig || failed(bindSlots(*sig, e, slots, [&](SrcLoc l) { return error(l); })))
    return failure();
  StringRef n = e.callee;
  Location l = loc(e.getLoc());
  if (n == "program_id" || n == "num_programs") {
    FailureOr<int64_t> axis = constIntArg(e, slots, 0, "the grid axis");
    if (failed(axis))
      return failure();
    if (*axis < 0 || *axis > 2)
      return error(slots[0]->loc) << "the grid axis must be 0, 1 or 2, got "
                                  << *axis, failure();
    Type i32 = builder.getI32Type();
    if (n == "program_id")
      return Val::of(tl::ProgramIdOp::create(builder, l, i32, uint32_t(*axis)));
    return Val::of(tl::NumProgramsOp::create(builder, l, i32, uint32_t(*axis)));
  }
  if (n == "iota") {
    FailureOr<SmallVector<int64_t>> shape = genShape(*slots[0]->value);
    if (failed(shape))
      return failure();
    if (shape->size() != 1)
      return error(slots[0]->loc) << "iota makes a 1-D tile; give one size",
             failure();
    return Val::of(tl::IotaOp::create(
        builder, l, TileType::get(*shape, builder.getI32Type())));
  }
  if (n == "full" || n == "zeros")
    return genFull(e, slots);
  if (n == "bitcast" || n == "umulhi")
    return genBitsBuiltin(e, slots);
  if (n == "philox" || n == "randint" || n == "rand")
    return genRandom(e, slots);
  if (n == "load" || n == "store" || n == "atomic_add")
    return genMemory(e, slots);
  if (n == "require")
    return genRequire(e, slots);
  if (n == "dot")
    return genDot(e, slots);
  if (n.starts_with("reduce_"))
    return genReduce(e, slots);
  if (n == "where" || n == "max" || n == "min" || n == "fma") {
    SmallVector<Val, 3> v;
    for (unsigned i = 0; i < slots.size(); ++i) {
      FailureOr<Val> x = arg(slots, i);
      if (failed(x))
        return failure();
      v.push_back(*x);
    }
    if (n == "where")
      return genSelect(v[0], v[1], v[2], e.getLoc());
    if (n == "fma")
      return genFma(v[0], v[1], v[2], e.getLoc());
    return genBinary(n == "max" ? BinOp::Max : BinOp::Min, v[0], v[1],
                     e.getLoc());
  }
  if (n == "trans") {
    FailureOr<Val> x = arg(slots, 0);
    if (failed(x))
      return failure();
    if (shapeOf(*x).size() != 2)
      return error(e.getLoc()) << "trans needs a 2-D tile, got "
                               << describe(*x), failure();
    auto t = cast<TileType>(x->value.getType());
    auto rt = TileType::get({t.getDimSize(1), t.getDimSize(0)},
                            t.getElementType());
    return Val::of(tl::TransOp::create(builder, l, rt, x->value), x->uns);
  }
  return genMath(e, slots);
}

FailureOr<Val> MLIRGen::genFull(const CallExpr &e, Slots s) {
  bool isZeros = e.callee == "zeros";
  FailureOr<SmallVector<int64_t>> shape = genShape(*s[0]->value);
  if (failed(shape))
    return failure();
  Val value = Val::ofInt(0);
  if (!isZeros) {
    FailureOr<Val> v = arg(s, 1);
    if (failed(v))
      return failure();
    value = *v;
  }
  unsigned dtypeSlot = isZeros ? 1 : 2;
  Type dtype = isZeros ? Type(builder.getF32Type()) : defaultType(value);
  if (s[dtypeSlot]) {
    FailureOr<Val> t = arg(s, dtypeSlot);
    if (failed(t))
      return failure();
    if (t->kind != Val::Type || isa<PtrType>(t->type))
      return error(s[dtypeSlot]->loc) << "dtype must be a scalar type such as "
                                      << "f32, got " << describe(*t), failure();
    dtype = t->type;
  }
  if (value.kind == Val::Type || !dtype)
    return error(s[1]->loc) << "the fill value must be a value, got "
                            << describe(value), failure();
  if (!shapeOf(value).empty())
    return error(s[1]->loc) << "the fill value must be a scalar, got "
                            << describe(value), failure();
  if (value.isRuntime() && feType(value) != dtype)
    return error(s[1]->loc) << "the fill value is " << describe(value)
                            << " but the dtype is " << describe(dtype)
                            << "; cast it first", failure();
  FailureOr<Value> v = toTile(value, *shape, dtype, e.getLoc());
  if (failed(v))
    return failure();
  return typed(*v, dtype);
}

/// exp, exp2, log, log2, sqrt, rsqrt, tanh, abs: folded on constants,
/// tile ops on tiles, one-element tile ops on run-time scalars
/// (MLIRGenScalar.cpp).
FailureOr<Val> MLIRGen::genMath(const CallExpr &e, Slots s) {
  StringRef n = e.callee;
  FailureOr<Val> x = arg(s, 0);
  if (failed(x))
    return failure();
  if (x->kind == Val::Int && n == "abs")
    return x->i == INT64_MIN ? Val::ofInt(x->i) : Val::ofInt(std::abs(x->i));
  if (x->kind == Val::Int || x->kind == Val::Float) {
    double v = x->kind == Val::Int ? double(x->i) : x->f;
    double r = llvm::StringSwitch<double>(n)
                   .Case("exp", std::exp(v)).Case("exp2", std::exp2(v))
                   .Case("log", std::log(v)).Case("log2", std::log2(v))
                   .Case("sqrt", std::sqrt(v)).Case("rsqrt", 1.0 / std::sqrt(v))
                   .Case("tanh", std::tanh(v)).Default(std::fabs(v));
    return Val::ofFloat(r);
  }
  if (x->isRuntime() && !isa<TileType>(x->value.getType()))
    return genScalarMath(n, *x, s[0]->loc);
  auto t = x->isRuntime() ? dyn_cast<TileType>(x->value.getType()) : TileType();
  if (!t)
    return error(s[0]->loc) << "'" << n << "' needs a number or a tile, got "
                            << describe(*x), failure();
  Type elem = t.getElementType();
  if (mlir::tile::isFp8(elem))
    return error(s[0]->loc) << noFp8Arithmetic(elem, "'" + n.str() + "'"),
           failure();
  bool ok = n == "abs" ? !elem.isInteger(1) && !isa<PtrType>(elem)
                       : isa<FloatType>(elem);
  if (ok && n == "abs" && x->uns)
    return *x; // |x| of an unsigned x
  if (!ok)
    return error(s[0]->loc) << "'" << n << "' needs a "
                            << (n == "abs" ? "numeric" : "float") << " tile, got "
                            << describe(*x), failure();
  Location l = loc(e.getLoc());
  Value v = x->value;
  Value r = llvm::StringSwitch<std::function<Value()>>(n)
      .Case("exp", [&] { return tl::ExpOp::create(builder, l, t, v); })
      .Case("exp2", [&] { return tl::Exp2Op::create(builder, l, t, v); })
      .Case("log", [&] { return tl::LogOp::create(builder, l, t, v); })
      .Case("log2", [&] { return tl::Log2Op::create(builder, l, t, v); })
      .Case("sqrt", [&] { return tl::SqrtOp::create(builder, l, t, v); })
      .Case("rsqrt", [&] { return tl::RsqrtOp::create(builder, l, t, v); })
      .Case("tanh", [&] { return tl::TanhOp::create(builder, l, t, v); })
      .Default([&] { return tl::AbsOp::create(builder, l, t, v); })();
  return Val::of(r);
}
