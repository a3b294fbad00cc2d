//===- Resources.cpp - refuse kernels the target cannot run ---------------===//

#include "lib/Pipeline/Resources.h"

#include "dialects/tile/Params.h"
#include "dialects/tile/TargetInfo.h"
#include "dialects/tile/TileDialect.h"
#include "lib/Conversion/Passes.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace {
/// "BM = 256, BN = 256, D = 256, ..." from the kernel's tile.params.
std::string paramsOf(Operation *fn) {
  return mlir::tile::describeParams(
      fn->getAttrOfType<DictionaryAttr>(mlir::tile::kParamsAttr));
}

/// The registers check of checkResources (see Resources.h). tilec -remarks
/// prints the bounds and the budget as a remark at the kernel.
///
/// When it is an error, measured with ptxas 13.0 on flash_fwd (sm_90a;
/// [data, wgmma] bounds): wgmma kernels whose budget the thread count sets
/// below 255 fail in ptxas ("Register allocation failed") when their live
/// wgmma values exceed it (16 warps at D = 256; 32 warps at BM = 128,
/// D = 128) and compile, with spills, when they do not (16 warps at
/// D = 128: [176, 112] of 128; 16 warps at BM = BN = D = 128: [248, 128] of
/// 128). Equality is not refused, though it can fail too (32 warps at
/// D = 64: [124, 64] of 64 ends in ptxas, whose error then names the
/// kernel's line and configuration). At the 255 cap ptxas serializes the
/// wgmma and spills instead (4 warps, BM = 128, D = 256: [617, 608]: 255
/// registers, 6 KB of spills), and mma.sync code (sm_80) always spills:
/// neither is refused. The data bound stays below what ptxas used in every
/// configuration of the sm_90a and sm_80 tables that compiled without
/// spills (warp-specialized consumers: up to 240 after setmaxnreg); it is
/// recorded, not enforced, since tuned configurations spill a few bytes on
/// purpose.
bool checkRegisters(gpu::GPUFuncOp fn, const mlir::tile::TargetInfo &t,
                    const std::string &what) {
  // The threads that hold the kernel's data: a producer warpgroup
  // (warp-specialized kernels) gives its registers to them (setmaxnreg).
  mlir::tile::ScheduleAttr s = mlir::tile::getSchedule(fn);
  int64_t threads =
      32 * s.getNumWarps() * std::max<int64_t>(1, s.getCtaPrograms());
  DenseI32ArrayAttr block = fn.getKnownBlockSizeAttr();
  if (block && block[0] < threads)
    threads = block[0];
  if (threads <= 0)
    return true;
  int64_t budget = std::min(t.maxRegistersPerThread,
                            t.registersPerSM / threads / 8 * 8);
  ::tile::RegisterBound need = ::tile::minRegistersPerThread(fn);
  if (fn->getParentOfType<ModuleOp>()->hasAttr(mlir::tile::kRemarksAttr))
    fn.emitRemark() << "registers per thread: at least " << need.data
                    << " for its live data, " << need.wgmma
                    << " of them wgmma values; budget " << budget;
  std::string budgetText =
      std::to_string(budget) + " per thread (at most " +
      std::to_string(t.maxRegistersPerThread) + ", and " +
      std::to_string(t.registersPerSM) + " per SM over " +
      std::to_string(threads) + " threads)";
  if (need.wgmma > budget && budget < t.maxRegistersPerThread) {
    fn.emitError() << what << " needs at least " << need.wgmma
                   << " registers per thread for its wgmma accumulators and "
                      "operands live at once; "
                   << t.arch << " allows " << budgetText
                   << " (fewer num_warps, smaller blocks or head dim)";
    return false;
  }
  return true;
}
} // namespace

namespace tile {
std::string kernelConfig(Operation *fn) {
  auto name = fn->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  std::string params = paramsOf(fn);
  return "kernel '" + (name ? name.str() : std::string("?")) + "' (" +
         (params.empty() ? "" : params + "; ") + "schedule " +
         mlir::tile::fromAttr(mlir::tile::getSchedule(fn)).str() + ")";
}

LogicalResult checkResources(ModuleOp module, StringRef arch) {
  const mlir::tile::TargetInfo &t = mlir::tile::targetInfo(arch);
  bool ok = true;
  module.walk([&](gpu::GPUFuncOp fn) {
    if (!fn.isKernel())
      return;
    std::string what = kernelConfig(fn);
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
    if (!checkRegisters(fn, t, what))
      ok = false;
  });
  return success(ok);
}
} // namespace tile
