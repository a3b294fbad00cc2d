//===- Token.h - tokens of the .tile language -----------------------*- C++ -*-===//
//
// A token is a kind, its spelling and where it starts (1-based line and
// column, in bytes). Numbers keep their parsed value.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace tile::frontend {

/// A position in a source buffer: `file` indexes the files of one
/// compilation (0 is the main file, imports follow in the order read).
struct SrcLoc {
  unsigned line = 1;
  unsigned col = 1;
  unsigned file = 0;
};

enum class Tok {
  Eof,
  Ident,
  Int,
  Float,
  String, ///< "..." (only after 'import'); text is the contents
  // Keywords.
  KwKernel, KwFn, KwLet, KwVar, KwFor, KwIn, KwIf, KwElse, KwReturn, KwWhile,
  KwImport,
  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Semi, Colon, Question, Dot,
  // Operators.
  Plus, Minus, Star, Slash, Percent,
  Lt, Le, Gt, Ge, EqEq, Ne, AndAnd, OrOr, Not,
  Amp, Pipe, Caret, Tilde, Shl, Shr,
  Assign, PlusAssign, MinusAssign, StarAssign, SlashAssign,
};

/// The spelling of a token kind for "expected ..." messages.
const char *tokSpelling(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  std::string text;
  SrcLoc loc;
  int64_t intValue = 0;
  double floatValue = 0;
};

} // namespace tile::frontend
