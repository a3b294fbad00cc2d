//===- Frontend.h - .tile source to tile IR ------------------------*- C++ -*-===//
//
// Lexer -> Parser -> AST -> MLIRGen. Errors are reported as MLIR diagnostics
// at FileLineColLoc locations of the source buffer (the caller installs a
// SourceMgrDiagnosticHandler, which prints `file:line:col: error:` + caret).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include "tile/Schedule.h"

#include <map>
#include <string>
#include <vector>

namespace tile::frontend {

struct FrontendOptions {
  /// Compile-time parameter overrides (-D NAME=VALUE). Unknown names and
  /// badly typed values are errors.
  std::map<std::string, std::string> defines;
  /// Kernel to build; empty selects the file's only kernel.
  std::string kernel;
  /// How the kernel runs; becomes its `tile.schedule` (validated there).
  ::tile::Schedule schedule;
  /// Where `import "path";` looks after the importing file's directory.
  std::vector<std::string> includeDirs;
};

/// Parses the main buffer of `sourceMgr` and prints its AST to `os`.
/// Returns false (after emitting diagnostics) on a lexical or syntax error.
bool dumpAST(mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
             llvm::raw_ostream &os);

/// Array of dictionaries {expr, text, loc} on a kernel: its `require(...)`
/// conditions over scalar arguments, which the launcher checks
/// (MLIRGenRequire.cpp writes them, the manifest carries them).
inline constexpr llvm::StringLiteral kRequiresAttr = "tile.requires";

/// Parses the main buffer and generates a module holding one `func.func`
/// kernel (attributes: `tile.kernel`, `tile.params` = the compile-time values
/// used, `tile.schedule`, `tile.requires`). Returns null after emitting diagnostics. The
/// module is verified.
mlir::OwningOpRef<mlir::ModuleOp> buildModule(mlir::MLIRContext &context,
                                              llvm::SourceMgr &sourceMgr,
                                              const FrontendOptions &options);

} // namespace tile::frontend
