//===- ASTDump.h - print the AST ------------------------------------*- C++ -*-===//
#pragma once

#include "lib/Frontend/AST.h"

#include "llvm/Support/raw_ostream.h"

namespace tile::frontend {

/// Prints `program` as an indented tree, one node per line with its
/// `@line:col` location (the output of `tilec -emit=ast`).
void dumpProgram(const Program &program, llvm::raw_ostream &os);

} // namespace tile::frontend
