//===- MLIRGenTypes.cpp - signedness of frontend types --------------------===//
//
// The frontend's types carry signedness (an unsigned IntegerType for u8,
// u16, u32, u64); the IR's are signless. These helpers convert between the
// two; see Val in MLIRGen.h.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;

Type(::tile::frontend::signlessOf)(Type t) {
  if (auto i = dyn_cast<IntegerType>(t); i && !i.isSignless())
    return IntegerType::get(t.getContext(), i.getWidth());
  if (auto p = dyn_cast<PtrType>(t))
    return PtrType::get(t.getContext(), signlessOf(p.getPointeeType()));
  if (auto tt = dyn_cast<TileType>(t))
    return tt.withElementType(signlessOf(tt.getElementType()));
  return t;
}

bool ::tile::frontend::isUnsignedType(Type t) {
  if (auto p = dyn_cast<PtrType>(t))
    return isUnsignedType(p.getPointeeType());
  auto i = dyn_cast<IntegerType>(t);
  return i && i.isUnsigned();
}

Type(::tile::frontend::withSignedness)(Type t, bool uns) {
  if (!uns)
    return t;
  if (auto i = dyn_cast<IntegerType>(t); i && i.getWidth() > 1)
    return IntegerType::get(t.getContext(), i.getWidth(), IntegerType::Unsigned);
  if (auto p = dyn_cast<PtrType>(t))
    return PtrType::get(t.getContext(), withSignedness(p.getPointeeType(), uns));
  if (auto tt = dyn_cast<TileType>(t))
    return tt.withElementType(withSignedness(tt.getElementType(), uns));
  return t;
}

Type MLIRGen::feType(const Val &v) {
  return v.isRuntime() ? withSignedness(v.value.getType(), v.uns) : Type();
}

Type MLIRGen::feElem(const Val &v) {
  return v.isRuntime() ? getElementTypeOrSelf(feType(v)) : Type();
}

Val MLIRGen::typed(Value v, Type fe) {
  return Val::of(v, isUnsignedType(getElementTypeOrSelf(fe)));
}
