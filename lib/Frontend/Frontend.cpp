//===- Frontend.cpp - the public entry points of the frontend -------------===//
#include "lib/Frontend/Frontend.h"

#include "lib/Frontend/ASTDump.h"
#include "lib/Frontend/Lexer.h"
#include "lib/Frontend/MLIRGen.h"
#include "lib/Frontend/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace ::tile::frontend;

/// Lexes and parses the main buffer of `sourceMgr` into `program`.
static bool parseMainBuffer(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                            Program &program, std::string &filename) {
  if (sourceMgr.getNumBuffers() == 0) {
    emitError(UnknownLoc::get(&context)) << "no input";
    return false;
  }
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  filename = buffer->getBufferIdentifier().str();
  StringAttr file = StringAttr::get(&context, filename);
  ErrorFn error = [&](SrcLoc l, const std::string &msg) {
    emitError(FileLineColLoc::get(file, l.line, l.col)) << msg;
  };
  std::vector<Token> tokens;
  if (!lex(buffer->getBuffer(), error, tokens))
    return false;
  return Parser(std::move(tokens), error).parseProgram(program);
}

namespace tile::frontend {

bool dumpAST(MLIRContext &context, llvm::SourceMgr &sourceMgr,
             llvm::raw_ostream &os) {
  Program program;
  std::string filename;
  if (!parseMainBuffer(context, sourceMgr, program, filename))
    return false;
  dumpProgram(program, os);
  return true;
}

OwningOpRef<ModuleOp> buildModule(MLIRContext &context,
                                  llvm::SourceMgr &sourceMgr,
                                  const FrontendOptions &options) {
  Program program;
  std::string filename;
  if (!parseMainBuffer(context, sourceMgr, program, filename))
    return nullptr;
  return MLIRGen(context, filename, program).build(options);
}

} // namespace tile::frontend
