//===- TileScalarOps.cpp - verifiers of the scalar tile ops ---------------===//
#include "dialects/tile/TileDialect.h"

using namespace mlir;
using namespace mlir::tile;

static Type pointeeOf(Value ptr) {
  return cast<PtrType>(ptr.getType()).getPointeeType();
}

LogicalResult ScalarLoadOp::verify() {
  if (getType() != pointeeOf(getPtr()))
    return emitOpError() << "result type " << getType()
                         << " does not match pointee type " << pointeeOf(getPtr());
  if (getOther()) {
    if (!getMask())
      return emitOpError("`other` needs a `mask`");
    if (getOther().getType() != getType())
      return emitOpError("`other` must have the result type");
  }
  return success();
}

LogicalResult ScalarStoreOp::verify() {
  if (getValue().getType() != pointeeOf(getPtr()))
    return emitOpError() << "value type " << getValue().getType()
                         << " does not match pointee type " << pointeeOf(getPtr());
  return success();
}

LogicalResult ToScalarOp::verify() {
  auto src = cast<TileType>(getSrc().getType());
  if (src.getNumElements() != 1)
    return emitOpError() << "needs a one-element tile, got "
                         << src.getNumElements() << " elements";
  if (src.getElementType() != getType())
    return emitOpError() << "result type " << getType()
                         << " does not match element type " << src.getElementType();
  return success();
}
