//===- MLIRGenTileBuiltins.cpp - load/store/atomic_add, dot, reduce_* -----===//
//
// The builtins with shape rules of their own. Every rule the tile verifiers
// enforce is checked here first so that user errors become diagnostics at
// the call, never verifier failures.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;
namespace tl = mlir::tile;

/// load(ptr, mask, other) / store(ptr, value, mask) / atomic_add(ptr, value,
/// mask): pointer, mask and value are broadcast to one shape.
FailureOr<Val> MLIRGen::genMemory(const CallExpr &e, Slots s) {
  StringRef n = e.callee;
  bool isLoad = n == "load";
  FailureOr<Val> p = arg(s, 0);
  if (failed(p))
    return failure();
  if (p->isRuntime() && isa<PtrType>(p->value.getType()))
    return genScalarMemory(e, s, *p);
  auto pt = p->isRuntime() ? dyn_cast<TileType>(p->value.getType()) : TileType();
  if (!pt || !isa<PtrType>(pt.getElementType())) {
    auto d = error(s[0]->loc);
    d << "'" << n << "' needs a tile of pointers, got " << describe(*p);
    if (p->isRuntime() && isa<PtrType>(p->value.getType()))
      d << " (add an offset tile, e.g. p + iota(N))";
    return failure();
  }
  // The pointee's frontend type (u32 for ptr<u32>); the IR's is signless.
  Type pointee = withSignedness(
      cast<PtrType>(pt.getElementType()).getPointeeType(), p->uns);
  unsigned maskSlot = isLoad ? 1 : 2, valueSlot = isLoad ? 2 : 1;
  SmallVector<int64_t> shape(pt.getShape());

  Val mask;
  if (s[maskSlot]) {
    FailureOr<Val> m = arg(s, maskSlot);
    if (failed(m))
      return failure();
    if (!m->isRuntime() ||
        !getElementTypeOrSelf(m->value.getType()).isInteger(1))
      return error(s[maskSlot]->loc) << "mask must be a bool tile, got "
                                     << describe(*m), failure();
    auto bs = broadcastShapes(shape, shapeOf(*m), s[maskSlot]->loc,
                              "'" + n.str() + "' (pointers vs mask)");
    if (failed(bs))
      return failure();
    shape = *bs;
    mask = *m;
  }
  Val value;
  if (s[valueSlot]) {
    if (isLoad && !s[maskSlot])
      return error(s[valueSlot]->loc) << "'other' needs a 'mask'", failure();
    FailureOr<Val> v = arg(s, valueSlot);
    if (failed(v))
      return failure();
    const char *what = isLoad ? "'other'" : "the stored value";
    if (v->kind == Val::Type)
      return error(s[valueSlot]->loc) << what << " must be a value, got "
                                      << describe(*v), failure();
    if (v->isRuntime() && feElem(*v) != pointee)
      return error(s[valueSlot]->loc)
                 << what << " has element type " << describe(feElem(*v))
                 << " but the pointee type is " << describe(pointee)
                 << "; cast it, e.g. " << describe(pointee) << "(x)",
             failure();
    auto bs = broadcastShapes(shape, shapeOf(*v), s[valueSlot]->loc,
                              "'" + n.str() + "' (pointers vs value)");
    if (failed(bs))
      return failure();
    shape = *bs;
    value = *v;
  }
  if (n == "atomic_add" && mlir::tile::isFp8(pointee))
    return error(s[0]->loc) << noFp8Arithmetic(pointee, "'atomic_add'"),
           failure();
  if (n == "atomic_add" && (pointee.isInteger(1)))
    return error(s[0]->loc) << "atomic_add needs numeric pointees, got "
                            << describe(pt), failure();

  FailureOr<Value> ptrs = toTile(*p, shape, feElem(*p), e.getLoc());
  if (failed(ptrs))
    return failure();
  Value maskV, valueV;
  if (mask.isRuntime()) {
    FailureOr<Value> m = toTile(mask, shape, builder.getI1Type(), s[maskSlot]->loc);
    if (failed(m))
      return failure();
    maskV = *m;
  }
  if (value.kind != Val::None) {
    FailureOr<Value> v = toTile(value, shape, pointee, s[valueSlot]->loc);
    if (failed(v))
      return failure();
    valueV = *v;
  }
  Location l = loc(e.getLoc());
  auto rt = TileType::get(shape, signlessOf(pointee));
  if (isLoad)
    return typed(tl::LoadOp::create(builder, l, rt, *ptrs, maskV, valueV),
                 pointee);
  if (n == "store") {
    tl::StoreOp::create(builder, l, *ptrs, valueV, maskV);
    return Val();
  }
  return typed(tl::AtomicAddOp::create(builder, l, rt, *ptrs, valueV, maskV),
               pointee);
}

/// dot(a, b, acc, allow_tf32): [M, K] x [K, N] + [M, N] in f32.
FailureOr<Val> MLIRGen::genDot(const CallExpr &e, Slots s) {
  Val ab[2];
  for (unsigned i = 0; i < 2; ++i) {
    FailureOr<Val> v = arg(s, i);
    if (failed(v))
      return failure();
    if (shapeOf(*v).size() != 2)
      return error(s[i]->loc) << "dot operands must be 2-D tiles, got "
                              << describe(*v), failure();
    Type el = getElementTypeOrSelf(v->value.getType());
    if (!isa<FloatType>(el))
      return error(s[i]->loc) << "dot needs float tiles (f16, bf16, f32), "
                              << "got " << describe(*v)
                              << "; cast it, e.g. f16(x)", failure();
    ab[i] = *v;
  }
  auto ta = cast<TileType>(ab[0].value.getType());
  auto tb = cast<TileType>(ab[1].value.getType());
  if (ta.getElementType() != tb.getElementType())
    return error(e.getLoc()) << "dot operand element types differ: "
                             << describe(ta.getElementType()) << " vs "
                             << describe(tb.getElementType()), failure();
  if (ta.getDimSize(1) != tb.getDimSize(0))
    return error(e.getLoc()) << "dot inner dimensions do not match: "
                             << describe(ta) << " x " << describe(tb),
           failure();
  Type accElem = ta.getElementType().isF64() ? Type(builder.getF64Type())
                                             : Type(builder.getF32Type());
  auto accType = TileType::get({ta.getDimSize(0), tb.getDimSize(1)}, accElem);
  Value acc;
  if (s[2]) {
    FailureOr<Val> c = arg(s, 2);
    if (failed(c))
      return failure();
    if (c->isRuntime() && c->value.getType() != accType)
      return error(s[2]->loc) << "dot accumulator must be " << describe(accType)
                              << ", got " << describe(*c), failure();
    FailureOr<Value> cv = coerce(*c, accType, s[2]->loc, "the dot accumulator");
    if (failed(cv))
      return failure();
    acc = *cv;
  } else {
    FailureOr<Value> z = toTile(Val::ofInt(0), accType.getShape(), accElem,
                                e.getLoc());
    if (failed(z))
      return failure();
    acc = *z;
  }
  bool tf32 = false;
  if (s[3]) {
    FailureOr<Val> t = arg(s, 3);
    if (failed(t))
      return failure();
    if (t->kind != Val::Bool)
      return error(s[3]->loc) << "allow_tf32 must be a compile-time bool",
             failure();
    tf32 = t->b;
    if (tf32 && !ta.getElementType().isF32())
      return error(s[3]->loc) << "allow_tf32 only applies to f32 operands",
             failure();
  }
  return Val::of(tl::DotOp::create(builder, loc(e.getLoc()), accType,
                                   ab[0].value, ab[1].value, acc, tf32,
                                   /*async=*/false, /*k_used=*/IntegerAttr(),
                                   /*n_used=*/IntegerAttr()));
}

/// reduce_max / reduce_sum / reduce_min(x, axis): drops dimension `axis`.
FailureOr<Val> MLIRGen::genReduce(const CallExpr &e, Slots s) {
  FailureOr<Val> x = arg(s, 0);
  if (failed(x))
    return failure();
  auto t = x->isRuntime() ? dyn_cast<TileType>(x->value.getType()) : TileType();
  Type el = t ? t.getElementType() : Type();
  if (t && mlir::tile::isFp8(el))
    return error(s[0]->loc) << noFp8Arithmetic(el, "'" + e.callee + "'"),
           failure();
  if (!t || el.isInteger(1) || isa<PtrType>(el))
    return error(s[0]->loc) << "'" << e.callee << "' needs a numeric tile, got "
                            << describe(*x), failure();
  if (x->uns && e.callee != "reduce_sum")
    return error(s[0]->loc) << "'" << e.callee << "' of unsigned tiles is not "
                            << "supported (got " << describe(*x) << ")",
           failure();
  int64_t rank = t.getRank();
  if (!s[1] && rank == 1)
    return genReduceToScalar(e, *x);
  if (!s[1])
    return error(e.getLoc()) << "'" << e.callee << "' needs argument 'axis'",
           failure();
  FailureOr<int64_t> axis = constIntArg(e, s, 1, "the reduction axis");
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis >= rank)
    return error(s[1]->loc) << "reduction axis " << *axis << " is out of "
                            << "range for a tile of rank " << rank, failure();
  if (rank == 1)
    return genReduceToScalar(e, *x);
  int64_t ax = *axis < 0 ? *axis + rank : *axis;
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + ax);
  tl::ReduceKind kind = e.callee == "reduce_max"   ? tl::ReduceKind::Max
                        : e.callee == "reduce_sum" ? tl::ReduceKind::Sum
                                                   : tl::ReduceKind::Min;
  return Val::of(tl::ReduceOp::create(builder, loc(e.getLoc()),
                                      TileType::get(shape, el), kind, x->value,
                                      uint32_t(ax)),
                 x->uns);
}
