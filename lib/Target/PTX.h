//===- PTX.h - LLVM IR, PTX and cubin emission --------------------*- C++ -*-===//
#pragma once

#include "lib/Target/StageClock.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>

namespace tile::target {

/// Translates `gpu.module @tile_kernels` of `module` (lowered to LLVM/NVVM)
/// into LLVM IR for NVPTX. Errors are emitted as MLIR diagnostics.
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::ModuleOp module,
                                                llvm::LLVMContext &context);

/// Optimises `module` with the passes of LLVM's O3 that change our kernels
/// (kOptPipeline in PTX.cpp; all of O3 with `fullO3`) for `arch` ("sm_80",
/// "sm_90a") and returns its PTX; on failure returns false with `error`
/// set. Marks its stages (llvm-opt, codegen, ptx-order) on `clock`.
bool emitPTX(llvm::Module &module, const std::string &arch, bool fullO3,
             StageClock &clock, std::string &ptx, std::string &error);

/// The ptxas to use: `hint` when set, else PATH, else /usr/local/cuda/bin.
/// Empty when none is found.
std::string findPtxas(const std::string &hint);

/// "release 13.0" style version of a ptxas, or "unknown".
std::string ptxasVersion(const std::string &ptxas);

/// For a command-line tool (tilec): on SIGINT/SIGTERM a running ptxas is
/// killed and the temporary files are removed; the compile then fails with
/// "interrupted". Not for library hosts: it installs LLVM's signal handlers.
void enableSignalCleanup();

/// Assembles `ptx` for `arch` with `ptxas`. On failure `error` holds the
/// log, the PTX file kept for inspection and a command to reproduce.
bool runPtxas(const std::string &ptxas, const std::string &ptx,
              const std::string &arch, std::string &cubin, std::string &error);

} // namespace tile::target
