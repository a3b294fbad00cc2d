//===- Resources.h - refuse kernels the target cannot run ---------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinOps.h"

namespace mlir::gpu {
class GPUFuncOp;
}

namespace tile {
/// After lowering to the GPU dialect: each kernel's shared memory per
/// program and threads per CTA against the target's limits (TargetInfo.h).
/// A kernel over a limit gets an error at its location naming its
/// compile-time values, schedule, the need and the budget: the compile
/// stops before LLVM and ptxas spend time on it.
/// Also registers: a kernel whose live wgmma values (minRegistersPerThread)
/// exceed a budget its thread count sets below 255 (65536 over its
/// consumer threads) is an error; with the module's tile.remarks (tilec
/// -remarks) a remark gives the bounds and the budget.
mlir::LogicalResult checkResources(mlir::ModuleOp module,
                                   llvm::StringRef arch);

/// "kernel 'NAME' (BM = 64, ...; schedule num_warps=4,...)": what an error
/// about a kernel (func.func or gpu.func) says it is about.
std::string kernelConfig(mlir::Operation *fn);

/// Lower bounds of the 32-bit registers per thread that `fn` (a kernel
/// lowered to the GPU dialect) holds at once inside its loops
/// (Registers.cpp says what counts): `data`, its live float data and
/// inline-PTX results; `wgmma`, of those the wgmma accumulators and register
/// operands (and the loop values that carry them).
struct RegisterBound {
  int64_t data = 0, wgmma = 0;
};
RegisterBound minRegistersPerThread(mlir::gpu::GPUFuncOp fn);
} // namespace tile
