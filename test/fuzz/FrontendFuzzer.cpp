//===- FrontendFuzzer.cpp - libFuzzer target for the .tile frontend -------===//
//
// Feeds arbitrary bytes to the lexer, parser and MLIRGen. Any crash, assert
// or sanitizer report is a bug: bad input must only produce diagnostics.
// Build with clang: -fsanitize=fuzzer,address (see test/fuzz/README.md).
//
//===----------------------------------------------------------------------===//
#include "dialects/tile/TileDialect.h"
#include "lib/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    ctx->loadDialect<mlir::tile::TileDialect>();
    return ctx;
  }();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.tile"),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, context, os);
  tile::frontend::FrontendOptions options;
  (void)tile::frontend::buildModule(*context, sourceMgr, options);
  std::string ast;
  llvm::raw_string_ostream astOS(ast);
  (void)tile::frontend::dumpAST(*context, sourceMgr, astOS);
  return 0;
}
