//===- Parser.h - recursive-descent parser for .tile ----------------*- C++ -*-===//
//
// Tokens to AST. Each method documents the grammar rule it parses. The first
// syntax error is reported through the error callback and parsing stops.
// Nesting (blocks, parentheses, unary chains) is limited to kMaxDepth so that
// hostile input cannot overflow the stack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Frontend/AST.h"
#include "lib/Frontend/Lexer.h"

namespace tile::frontend {

class Parser {
public:
  static constexpr unsigned kMaxDepth = 256;

  Parser(std::vector<Token> tokens, ErrorFn error)
      : toks(std::move(tokens)), error(std::move(error)) {
    if (toks.empty() || toks.back().kind != Tok::Eof)
      toks.push_back(Token{});
  }

  /// program ::= (import | kernel | fn)* EOF
  bool parseProgram(Program &program);

private:
  std::vector<Token> toks;
  ErrorFn error;
  size_t idx = 0;
  unsigned depth = 0;

  // Token access; never reads past the final Eof token.
  const Token &cur() const { return toks[idx]; }
  const Token &peekTok(size_t ahead = 1) const {
    return toks[std::min(idx + ahead, toks.size() - 1)];
  }
  bool at(Tok k) const { return cur().kind == k; }
  void consume() {
    if (idx + 1 < toks.size())
      ++idx;
  }
  bool accept(Tok k) {
    if (!at(k))
      return false;
    consume();
    return true;
  }
  /// Location just after the previous token (where a missing ';' belongs).
  SrcLoc prevEnd() const;
  bool fail(SrcLoc loc, const std::string &msg) {
    error(loc, msg);
    return false;
  }
  /// Consumes `k` or reports "expected <k> <context>".
  bool expect(Tok k, const char *context);
  bool expectIdent(std::string &name, SrcLoc &loc, const char *what);
  bool enter(SrcLoc loc);
  void leave() { --depth; }

  // Declarations (Parser.cpp).
  bool parseImport(Program &program);
  bool parseKernel(Program &program);
  bool parseConstParams(KernelDecl &k);
  bool parseKernelArgs(KernelDecl &k);
  bool parseType(TypeRef &type);
  bool parseFn(Program &program);

  // Statements (Parser.cpp).
  bool parseBlock(Body &block);
  bool parseStmt(StmtPtr &stmt);
  bool parseLet(StmtPtr &stmt);
  bool parseFor(StmtPtr &stmt);
  bool parseIf(StmtPtr &stmt);
  bool parseWhile(StmtPtr &stmt);
  bool parseReturn(StmtPtr &stmt);
  bool parseAssignOrExpr(StmtPtr &stmt);

  // Expressions (ParserExpr.cpp).
  bool parseExpr(ExprPtr &e);
  bool parseTernary(ExprPtr &e);
  bool parseBinary(ExprPtr &e, int minPrec);
  bool parseUnary(ExprPtr &e);
  bool parsePostfix(ExprPtr &e);
  bool parsePrimary(ExprPtr &e);
  bool parseCallArgs(std::vector<CallArg> &args);
  bool parseIndex(ExprPtr &e);
  bool parseList(ExprPtr &e);
};

} // namespace tile::frontend
