//===- Lexer.h - .tile source to tokens -----------------------------*- C++ -*-===//
//
// Splits a buffer into tokens, skipping whitespace, `//` and `/* */`
// comments. The first lexical error (bad character, unterminated comment,
// malformed number) is reported through the error callback and stops lexing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Frontend/Token.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <vector>

namespace tile::frontend {

using ErrorFn = std::function<void(SrcLoc, const std::string &)>;

/// Tokenizes `source`; the result always ends with one Eof token. Returns
/// false after reporting the first error.
bool lex(llvm::StringRef source, const ErrorFn &error,
         std::vector<Token> &tokens);

} // namespace tile::frontend
