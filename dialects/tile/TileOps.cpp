//===- TileOps.cpp - verifiers and folders of the tile ops ----------------===//
#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

static TileType tileOf(Value v) { return cast<TileType>(v.getType()); }

/// Checks that `b` (named `what` in the message) has the shape of the
/// reference `a`: "<what> shape [<b>] does not match [<a>]".
static LogicalResult sameShape(Operation *op, TileType a, TileType b,
                               StringRef what) {
  if (a.getShape() != b.getShape())
    return op->emitOpError() << what << " shape [" << b.getShape()
                             << "] does not match [" << a.getShape() << "]";
  return success();
}

/// Checks that `b` (named `what`) has the layout of the reference `a`.
static LogicalResult sameLayout(Operation *op, TileType a, TileType b,
                                StringRef what) {
  if (a.getEncoding() != b.getEncoding())
    return op->emitOpError() << what << " layout does not match";
  return success();
}

LogicalResult IotaOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError("result must be a 1-D tile");
  return success();
}

LogicalResult FullOp::verify() {
  auto typed = cast<TypedAttr>(getValue());
  if (typed.getType() != getType().getElementType())
    return emitOpError() << "value type " << typed.getType()
                         << " does not match element type "
                         << getType().getElementType();
  return success();
}

OpFoldResult FullOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ExpandDimsOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError() << "axis " << axis << " out of range for rank "
                         << src.getRank();
  SmallVector<int64_t> want(src.getShape());
  want.insert(want.begin() + axis, 1);
  if (res.getShape() != ArrayRef<int64_t>(want))
    return emitOpError() << "result shape must be [" << ArrayRef<int64_t>(want)
                         << "]";
  if (res.getElementType() != src.getElementType())
    return emitOpError("element types must match");
  return success();
}

LogicalResult BroadcastOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  if (src.getRank() != res.getRank())
    return emitOpError() << "cannot broadcast rank " << src.getRank()
                         << " to rank " << res.getRank();
  for (auto [s, r] : llvm::zip(src.getShape(), res.getShape()))
    if (s != r && s != 1)
      return emitOpError() << "cannot broadcast [" << src.getShape() << "] to ["
                           << res.getShape() << "]";
  if (res.getElementType() != src.getElementType())
    return emitOpError("element types must match");
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  return {};
}

LogicalResult TransOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  if (src.getRank() != 2)
    return emitOpError("operand must be a 2-D tile");
  if (res.getRank() != 2 || res.getDimSize(0) != src.getDimSize(1) ||
      res.getDimSize(1) != src.getDimSize(0))
    return emitOpError() << "result shape must be [" << src.getDimSize(1)
                         << ", " << src.getDimSize(0) << "]";
  if (res.getElementType() != src.getElementType())
    return emitOpError("element types must match");
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  if (failed(sameShape(*this, src, res, "result")))
    return failure();
  if (res.getElementType() != src.getElementType())
    return emitOpError("element types must match");
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // convert(convert(x)) -> convert(x) is done by a pattern; x -> x here.
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>())
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
  return {};
}

LogicalResult AddPtrOp::verify() {
  Type p = getPtr().getType(), o = getOffset().getType();
  auto pt = dyn_cast<TileType>(p);
  auto ot = dyn_cast<TileType>(o);
  if (bool(pt) != bool(ot))
    return emitOpError("pointer and offset must both be scalars or both tiles");
  if (pt) {
    if (failed(sameShape(*this, pt, ot, "offset")) ||
        failed(sameLayout(*this, pt, ot, "offset")))
      return failure();
  }
  return success();
}

static Type pointee(TileType ptrTile) {
  return cast<PtrType>(ptrTile.getElementType()).getPointeeType();
}

LogicalResult LoadOp::verify() {
  TileType ptr = tileOf(getPtr()), res = getType();
  if (failed(sameShape(*this, ptr, res, "result")) ||
      failed(sameLayout(*this, ptr, res, "result")))
    return failure();
  if (pointee(ptr) != res.getElementType())
    return emitOpError() << "result element type " << res.getElementType()
                         << " does not match pointee type " << pointee(ptr);
  if (getMask() && (failed(sameShape(*this, ptr, tileOf(getMask()), "mask")) ||
                    failed(sameLayout(*this, ptr, tileOf(getMask()), "mask"))))
    return failure();
  if (getOther()) {
    if (!getMask())
      return emitOpError("`other` needs a `mask`");
    if (getOther().getType() != res)
      return emitOpError("`other` must have the result type");
  }
  return success();
}

/// The box of a bulk tensor copy (tma_copy, tma_store): `inner` elements
/// along a row, `outer` rows of `rowStride` elements of the kernel argument
/// `base` (the launcher maps it; see the manifest's tensorMaps).
static LogicalResult
verifyTmaBox(Operation *op, Value base, int64_t inner, int64_t outer,
             uint64_t rowStride, std::optional<ArrayRef<int64_t>> strideArgs,
             std::optional<uint64_t> rowElems) {
  if (inner % 64 != 0 || outer < 1 || outer > 256)
    return op->emitOpError("box must be a multiple of 64 elements along a row "
                           "and at most 256 rows");
  // A run-time stride (stride_args) covers the box as the launcher checks.
  bool atLaunch = strideArgs && !strideArgs->empty();
  if (rowElems && (int64_t(*rowElems) >= inner || *rowElems % 8 != 0 ||
                   *rowElems < 64))
    return op->emitOpError("row_elems must be fewer than the box's columns, "
                           "at least 64 and a multiple of 16 bytes");
  int64_t row = rowElems ? int64_t(*rowElems) : inner;
  // A run-time stride's constant factor may be anything: the launcher
  // checks the product (16-byte multiple, covering the box).
  if ((!atLaunch && (int64_t(rowStride) < row || rowStride % 8 != 0)) ||
      rowStride < 1)
    return op->emitOpError("row_stride must cover the box and be a multiple "
                           "of 16 bytes");
  auto fn = op->getParentOfType<FunctionOpInterface>();
  if (atLaunch)
    for (int64_t a : *strideArgs)
      if (!fn || a < 0 || a >= int64_t(fn.getNumArguments()) ||
          !fn.getArgument(a).getType().isSignlessInteger())
        return op->emitOpError("stride_args must name integer arguments of "
                               "the kernel");
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg || !arg.getOwner()->isEntryBlock() ||
      !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return op->emitOpError("base must be a pointer argument of the kernel");
  return success();
}

LogicalResult TmaCopyOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  Type elt = getBase().getType().getPointeeType();
  if (shape.size() != 2 || getInnerDim() > 1)
    return emitOpError("needs a 2-D `shape` and `inner_dim` 0 or 1");
  if (getStages() < 1 || getStages() > 4)
    return emitOpError("`stages` must be 1 to 4, not ") << getStages();
  if (!elt.isF16() && !elt.isBF16() && !isFp8(elt))
    return emitOpError("copies f16, bf16 or fp8 tensors, not ") << elt;
  return verifyTmaBox(*this, getBase(), shape[getInnerDim()],
                      shape[1 - getInnerDim()], getRowStride(),
                      getStrideArgs(), getRowElems());
}

LogicalResult TmaStoreOp::verify() {
  auto t = cast<TileType>(getValue().getType());
  Type elt = getBase().getType().getPointeeType();
  if (t.getRank() != 2 || getInnerDim() != 1)
    return emitOpError("stores a 2-D tile along its rows (`inner_dim` 1)");
  if (t.getElementType() != elt || (!elt.isF16() && !elt.isBF16()))
    return emitOpError("stores f16 or bf16 tiles into tensors of the same "
                       "element type, not ")
           << t.getElementType() << " into " << elt;
  return verifyTmaBox(*this, getBase(), t.getDimSize(1), t.getDimSize(0),
                      getRowStride(), getStrideArgs(), getRowElems());
}

LogicalResult TmaWaitOp::verify() {
  if (getType().getRank() != 2 || getInnerDim() > 1)
    return emitOpError("result must be a 2-D tile and `inner_dim` 0 or 1");
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  TileType ptr = tileOf(getPtr());
  if (ptr.getRank() != 2 || getInnerDim() > 1)
    return emitOpError("pointers must be a 2-D tile and `inner_dim` 0 or 1");
  if (getStages() < 2 || int64_t(getSlot()) < 0)
    return emitOpError("needs stages >= 2 and slot >= 0");
  if (getMask() && (failed(sameShape(*this, ptr, tileOf(getMask()), "mask")) ||
                    failed(sameLayout(*this, ptr, tileOf(getMask()), "mask"))))
    return failure();
  return success();
}

LogicalResult AsyncViewOp::verify() {
  if (getType().getRank() != 2 || getInnerDim() > 1)
    return emitOpError("result must be a 2-D tile and `inner_dim` 0 or 1");
  return success();
}

LogicalResult StoreOp::verify() {
  TileType ptr = tileOf(getPtr()), val = tileOf(getValue());
  if (failed(sameShape(*this, ptr, val, "value")) ||
      failed(sameLayout(*this, ptr, val, "value")))
    return failure();
  if (pointee(ptr) != val.getElementType())
    return emitOpError() << "value element type " << val.getElementType()
                         << " does not match pointee type " << pointee(ptr);
  if (getMask() && (failed(sameShape(*this, ptr, tileOf(getMask()), "mask")) ||
                    failed(sameLayout(*this, ptr, tileOf(getMask()), "mask"))))
    return failure();
  return success();
}

LogicalResult AtomicAddOp::verify() {
  TileType ptr = tileOf(getPtr()), val = tileOf(getValue());
  if (failed(sameShape(*this, ptr, val, "value")) ||
      failed(sameLayout(*this, ptr, val, "value")))
    return failure();
  if (pointee(ptr) != val.getElementType())
    return emitOpError() << "value element type " << val.getElementType()
                         << " does not match pointee type " << pointee(ptr);
  if (getType() != val)
    return emitOpError("result must have the value's type");
  if (getMask() && (failed(sameShape(*this, ptr, tileOf(getMask()), "mask")) ||
                    failed(sameLayout(*this, ptr, tileOf(getMask()), "mask"))))
    return failure();
  return success();
}

LogicalResult DotOp::verify() {
  TileType a = tileOf(getA()), b = tileOf(getB()), c = tileOf(getAcc());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  if (a.getDimSize(1) != b.getDimSize(0))
    return emitOpError() << "inner dimensions do not match: [" << a.getShape()
                         << "] x [" << b.getShape() << "]";
  if (c.getDimSize(0) != a.getDimSize(0) || c.getDimSize(1) != b.getDimSize(1))
    return emitOpError() << "accumulator shape [" << c.getShape()
                         << "] does not match the product shape ["
                         << a.getDimSize(0) << ", " << b.getDimSize(1) << "]";
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "operand element types differ: "
                         << a.getElementType() << " vs " << b.getElementType();
  if (!c.getElementType().isF32() && !c.getElementType().isF64())
    return emitOpError("accumulator must be f32 (or f64 for f64 operands)");
  if (c.getElementType().isF64() != a.getElementType().isF64())
    return emitOpError("f64 operands need an f64 accumulator and vice versa");
  if (getType() != c)
    return emitOpError("result must have the accumulator's type");
  if (getAllowTf32() && !a.getElementType().isF32())
    return emitOpError("allow_tf32 only applies to f32 operands");
  if (auto k = getKUsed(); k && (*k <= 0 || int64_t(*k) > a.getDimSize(1)))
    return emitOpError() << "k_used " << *k << " is not in [1, "
                         << a.getDimSize(1) << "]";
  if (auto n = getNUsed(); n && (*n <= 0 || int64_t(*n) > b.getDimSize(1)))
    return emitOpError() << "n_used " << *n << " is not in [1, "
                         << b.getDimSize(1) << "]";
  if (getAsync() && !getB().getDefiningOp<TmaWaitOp>())
    return emitOpError("async needs b read in place from a TMA slot "
                       "(a tile.tma_wait result)");
  return success();
}

LogicalResult DotWaitOp::verify() {
  int64_t pending = getPendingAttr().getInt();
  if (pending < 0)
    return emitOpError("pending must be non-negative, got ") << pending;
  return success();
}

LogicalResult ReduceOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= src.getRank())
    return emitOpError() << "axis " << axis << " out of range for rank "
                         << src.getRank();
  if (src.getRank() == 1)
    return emitOpError("reducing a 1-D tile to a scalar is not supported; "
                       "reduce a 2-D tile along one axis");
  SmallVector<int64_t> want(src.getShape());
  want.erase(want.begin() + axis);
  if (res.getShape() != ArrayRef<int64_t>(want))
    return emitOpError() << "result shape must be [" << ArrayRef<int64_t>(want)
                         << "]";
  if (res.getElementType() != src.getElementType())
    return emitOpError("element types must match");
  return success();
}

LogicalResult CmpOp::verify() {
  TileType l = tileOf(getLhs()), r = getType();
  if (failed(sameShape(*this, l, r, "result")) ||
      failed(sameLayout(*this, l, r, "result")))
    return failure();
  if (getPredicate() >= CmpPredicate::ult &&
      !isa<IntegerType>(l.getElementType()))
    return emitOpError() << "unsigned predicate '"
                         << stringifyCmpPredicate(getPredicate())
                         << "' needs integer operands";
  return success();
}

LogicalResult WhereOp::verify() {
  TileType c = tileOf(getCond()), r = getType();
  if (failed(sameShape(*this, r, c, "condition")) ||
      failed(sameLayout(*this, r, c, "condition")))
    return failure();
  return success();
}

static bool isCastable(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64() ||
         isa<Float8E4M3FNType, Float8E5M2Type>(t) || t.isInteger(1) ||
         t.isInteger(8) || t.isInteger(16) ||
         t.isInteger(32) || t.isInteger(64);
}

LogicalResult CastOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  if (failed(sameShape(*this, src, res, "result")) ||
      failed(sameLayout(*this, src, res, "result")))
    return failure();
  if (!isCastable(src.getElementType()) || !isCastable(res.getElementType()))
    return emitOpError() << "cannot cast " << src.getElementType() << " to "
                         << res.getElementType();
  auto isWideInt = [](Type t) { return t.isInteger() && !t.isInteger(1); };
  if (getIsUnsigned() && !isWideInt(src.getElementType()) &&
      !isWideInt(res.getElementType()))
    return emitOpError("'is_unsigned' needs an integer source or result");
  return success();
}

LogicalResult BitcastOp::verify() {
  TileType src = tileOf(getSrc()), res = getType();
  if (failed(sameShape(*this, src, res, "result")) ||
      failed(sameLayout(*this, src, res, "result")))
    return failure();
  if (src.getElementTypeBitWidth() != res.getElementTypeBitWidth())
    return emitOpError() << "cannot bitcast " << src.getElementType() << " to "
                         << res.getElementType() << ": bit widths differ";
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  return {};
}

#define GET_OP_CLASSES
#include "dialects/tile/TileOps.cpp.inc"
