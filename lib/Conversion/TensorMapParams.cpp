//===- TensorMapParams.cpp - tensor maps as by-value grid constants -------===//
//
// See tile-tensor-map-params in Passes.td. The gpu.func of a kernel with
// TMA copies ends in one !llvm.ptr parameter per tensor map (TmaSlots.cpp);
// convert-gpu-to-nvvm keeps `tile.tensor_maps` but not byval, so the
// parameter attributes are set here, on the llvm.func.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILETENSORMAPPARAMS
#include "lib/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
constexpr int64_t kMapBytes = 128; // sizeof(CUtensorMap)
constexpr int64_t kMapAlign = 64;  // alignof(CUtensorMap)

struct TensorMapParamsPass
    : public mlir::tile::impl::TileTensorMapParamsBase<TensorMapParamsPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp fn) {
      auto maps = fn->getAttrOfType<ArrayAttr>(kTensorMapsAttr);
      if (!maps)
        return;
      unsigned n = fn.getNumArguments();
      if (maps.size() > n) {
        fn.emitError("tile.tensor_maps counts more parameters than the kernel has");
        return signalPassFailure();
      }
      OpBuilder b(fn);
      auto bytes = LLVM::LLVMArrayType::get(b.getI8Type(), kMapBytes);
      for (unsigned i = n - maps.size(); i < n; ++i) {
        if (!isa<LLVM::LLVMPointerType>(fn.getArgument(i).getType())) {
          fn.emitError("tensor map parameter ") << i << " is not a pointer";
          return signalPassFailure();
        }
        fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(), TypeAttr::get(bytes));
        fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(kMapAlign));
        fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
      }
    });
  }
};
} // namespace
