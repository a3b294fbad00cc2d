//===- Resources.cpp - refuse kernels the target cannot run ---------------===//

#include "lib/Pipeline/Resources.h"

#include "dialects/tile/TargetInfo.h"
#include "dialects/tile/TileDialect.h"
#include "lib/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

namespace {
/// "BM = 256, BN = 256, D = 256, ..." from the kernel's tile.params.
std::string paramsOf(Operation *fn) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto params = fn->getAttrOfType<DictionaryAttr>(mlir::tile::kParamsAttr))
    for (NamedAttribute a : params) {
      os << (s.empty() ? "" : ", ") << a.getName().getValue() << " = ";
      if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
        os << (i.getType().isInteger(1) ? (i.getInt() ? "true" : "false")
                                        : std::to_string(i.getInt()));
      else if (auto t = dyn_cast<TypeAttr>(a.getValue()))
        os << t.getValue();
      else
        os << a.getValue();
    }
  return s;
}
} // namespace

namespace tile {
LogicalResult checkResources(ModuleOp module, StringRef arch) {
  const mlir::tile::TargetInfo &t = mlir::tile::targetInfo(arch);
  bool ok = true;
  module.walk([&](gpu::GPUFuncOp fn) {
    if (!fn.isKernel())
      return;
    std::string what = "kernel '" + fn.getName().str() + "' (" +
                       paramsOf(fn) + "; schedule " +
                       mlir::tile::fromAttr(mlir::tile::getSchedule(fn))
                           .str() +
                       ")";
    if (auto a = fn->getAttrOfType<IntegerAttr>(mlir::tile::kSharedMemoryAttr);
        a && a.getInt() > t.sharedPerBlock) {
      fn.emitError() << what << " needs " << a.getInt()
                     << " bytes of shared memory per program; " << t.arch
                     << " allows " << t.sharedPerBlock
                     << " (smaller blocks, fewer stages or num_warps)";
      ok = false;
    }
    if (DenseI32ArrayAttr block = fn.getKnownBlockSizeAttr();
        block && block[0] > t.maxThreadsPerBlock) {
      fn.emitError() << what << " needs " << block[0]
                     << " threads per CTA; " << t.arch << " allows "
                     << t.maxThreadsPerBlock;
      ok = false;
    }
  });
  return success(ok);
}
} // namespace tile
