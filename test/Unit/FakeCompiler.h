//===- FakeCompiler.h - a counting stand-in for tile::compile -*- C++ -*-===//
//
// For the JIT cache tests (no LLVM): the PTX mentions the arch and the
// source, so equal inputs give equal files and any test can tell them apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/JIT.h"

namespace tiletest {

using tile::CompileFn;
using tile::CompileOptions;
using tile::CompileResult;
using tile::EmitStage;
using tile::hashHex;

/// A compiler that emits PTX mentioning its inputs, and counts its calls.
struct FakeCompiler {
  int calls = 0;
  bool fail = false;
  CompileOptions lastOptions;
  EmitStage lastStage = EmitStage::AST;

  CompileFn fn() {
    return [this](const std::string &source, const std::string &filename,
                  const CompileOptions &options, EmitStage stage) {
      ++calls;
      lastOptions = options;
      lastStage = stage;
      CompileResult r;
      if (fail) {
        r.diagnostics = filename + ":1:1: error: fake failure\n";
        return r;
      }
      r.ok = true;
      r.ptx = "// PTX for " + options.arch + "\n.visible .entry k()\n" + source;
      if (stage == EmitStage::Cubin)
        r.cubin = "FAKECUBIN k";
      r.manifest.kernelName = "k";
      r.manifest.params = {{"x", "ptr<f32>"}};
      r.manifest.constants = options.defines;
      r.manifest.blockSize = 128;
      r.manifest.arch = options.arch;
      r.manifest.sourceHash = hashHex(source);
      return r;
    };
  }
};

/// JIT options for tests: a cache in `dir`, sm_80, no debug output.
inline tile::JITOptions jitOptions(const std::string &dir) {
  tile::JITOptions o;
  o.cacheDir = dir;
  o.arch = "sm_80";
  o.debug = [](const std::string &) {};
  return o;
}

} // namespace tiletest
