//===- Compiler.h - compile .tile source to PTX -------------------*- C++ -*-===//
//
// The one entry point of the compiler: source text in, the output of any
// pipeline stage out (docs/design.md, "Pipeline"). Used by tilec and the JIT.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Manifest.h"
#include "tile/Schedule.h"

#include <map>
#include <string>
#include <vector>

namespace tile {

/// Pipeline stages in order of depth; `-emit=` stops after one of them.
enum class EmitStage {
  AST,    ///< the parsed program
  Tile,   ///< tile IR straight from MLIRGen (verified)
  TileOpt,///< -emit=optimize: after tile transforms (canonicalise, causal split, scale fold, TMA rings)
  Layout, ///< after layout assignment (every tile has a #tile.layout)
  GPU,    ///< gpu.module with per-thread vector code, NVVM ops, shuffles
  NVVM,   ///< LLVM + NVVM dialects
  LLVM,   ///< LLVM IR
  PTX,    ///< PTX assembly
  Cubin,  ///< cubin from ptxas (needs ptxas)
};

/// Parses "ast", "tile", … "cubin"; false for an unknown name.
bool parseEmitStage(const std::string &name, EmitStage &out);
/// The names of all stages, in order, comma separated.
const char *emitStageNames();

struct CompileOptions {
  std::string arch = "sm_80";                  ///< sm_80 or sm_90a
  std::map<std::string, std::string> defines;  ///< -D NAME=VALUE
  Schedule schedule;                           ///< how the kernel runs
  std::string kernel;                          ///< empty: the file's only kernel
  std::string ptxasPath;                       ///< empty: search PATH and /usr/local/cuda
  std::vector<std::string> includeDirs; ///< -I: where imports are found after the importing file's directory
  bool timeStages = false;                     ///< fill CompileResult::stageTimes
  bool remarks = false; ///< say why dot operand loads stay off TMA rings
  bool llvmO3 = false;  ///< LLVM's whole O3 pipeline, not the passes that change our kernels
};

/// Wall time of one stage of a compile (--time-stages).
struct StageTime {
  std::string stage;
  double ms = 0;
};

struct CompileResult {
  bool ok = false;
  std::string diagnostics;  ///< every error and warning, formatted with carets
  std::string text;         ///< the requested stage as text (empty for Cubin)
  std::string ptx;          ///< set when the pipeline reached PTX
  std::string cubin;        ///< set for EmitStage::Cubin
  Manifest manifest;        ///< set when the pipeline reached PTX
  std::vector<StageTime> stageTimes;  ///< with CompileOptions::timeStages
};

/// Compiles `source` (named `filename` in diagnostics) up to `stopAt`.
CompileResult compile(const std::string &source, const std::string &filename,
                      const CompileOptions &options, EmitStage stopAt);

/// "tilec X.Y.Z (LLVM A.B.C)".
std::string versionString();

} // namespace tile
