//===- Params.cpp - a kernel's compile-time values as text ----------------===//
#include "dialects/tile/Params.h"

#include "llvm/Support/raw_ostream.h"

std::string mlir::tile::describeParams(DictionaryAttr params) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (!params)
    return s;
  for (NamedAttribute a : params) {
    os << (s.empty() ? "" : ", ") << a.getName().getValue() << " = ";
    if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
      os << (i.getType().isInteger(1) ? (i.getInt() ? "true" : "false")
                                      : std::to_string(i.getInt()));
    else if (auto t = dyn_cast<TypeAttr>(a.getValue()))
      os << t.getValue();
    else if (auto str = dyn_cast<StringAttr>(a.getValue()))
      os << str.getValue(); // a helper function's name
    else
      os << a.getValue();
  }
  return s;
}
