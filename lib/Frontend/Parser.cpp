//===- Parser.cpp - declarations and statements ---------------------------===//
#include "lib/Frontend/Parser.h"

using namespace ::tile::frontend;

SrcLoc Parser::prevEnd() const {
  if (idx == 0)
    return cur().loc;
  const Token &p = toks[idx - 1];
  return SrcLoc{p.loc.line, p.loc.col + unsigned(p.text.size())};
}

bool Parser::expect(Tok k, const char *context) {
  if (accept(k))
    return true;
  SrcLoc loc = k == Tok::Semi ? prevEnd() : cur().loc;
  return fail(loc, std::string("expected ") + tokSpelling(k) + " " + context);
}

bool Parser::expectIdent(std::string &name, SrcLoc &loc, const char *what) {
  if (!at(Tok::Ident))
    return fail(cur().loc, std::string("expected ") + what);
  name = cur().text;
  loc = cur().loc;
  consume();
  return true;
}

bool Parser::enter(SrcLoc loc) {
  if (++depth > kMaxDepth)
    return fail(loc, "nesting too deep (the limit is " +
                         std::to_string(kMaxDepth) + ")");
  return true;
}

/// program ::= (import | kernel | fn)* EOF
bool Parser::parseProgram(Program &program) {
  while (!at(Tok::Eof)) {
    if (at(Tok::KwImport)) {
      if (!parseImport(program))
        return false;
    } else if (at(Tok::KwKernel)) {
      if (!parseKernel(program))
        return false;
    } else if (at(Tok::KwFn)) {
      if (!parseFn(program))
        return false;
    } else {
      return fail(cur().loc,
                  "expected 'import', 'kernel' or 'fn' at top level");
    }
  }
  return true;
}

/// import ::= 'import' STRING ';'
bool Parser::parseImport(Program &program) {
  Import im;
  im.loc = cur().loc;
  consume(); // 'import'
  if (!at(Tok::String))
    return fail(cur().loc, "expected a file name in quotes after 'import' "
                           "(import \"attention/flex_fwd.tile\";)");
  im.path = cur().text;
  if (im.path.empty())
    return fail(cur().loc, "empty file name after 'import'");
  consume();
  if (!expect(Tok::Semi, "after the imported file name"))
    return false;
  program.imports.push_back(std::move(im));
  return true;
}

/// kernel ::= 'kernel' IDENT ('<' const-params '>')? '(' kernel-args ')' block
///          | 'kernel' IDENT '=' IDENT ('<' const-params '>')? ';'
bool Parser::parseKernel(Program &program) {
  auto k = std::make_unique<KernelDecl>();
  consume(); // 'kernel'
  if (!expectIdent(k->name, k->loc, "kernel name after 'kernel'"))
    return false;
  if (accept(Tok::Assign)) {
    if (!expectIdent(k->base, k->baseLoc,
                     "the name of the kernel this one instantiates"))
      return false;
    if (accept(Tok::Lt) && !parseConstParams(*k))
      return false;
    if (!expect(Tok::Semi, "after the kernel instance"))
      return false;
    program.kernels.push_back(std::move(k));
    return true;
  }
  if (accept(Tok::Lt) && !parseConstParams(*k))
    return false;
  if (!expect(Tok::LParen, "to begin the kernel arguments") ||
      !parseKernelArgs(*k) || !parseBlock(k->body))
    return false;
  program.kernels.push_back(std::move(k));
  return true;
}

/// const-params ::= (IDENT '=' unary (',' IDENT '=' unary)* ','?)? '>'
/// (a default is a unary expression so that '>' closes the list)
bool Parser::parseConstParams(KernelDecl &k) {
  while (!at(Tok::Gt)) {
    ConstParam p;
    if (!expectIdent(p.name, p.loc, "compile-time parameter name") ||
        !expect(Tok::Assign, "after the compile-time parameter name "
                             "(parameters need a default: NAME = value)") ||
        !parseUnary(p.value))
      return false;
    k.params.push_back(std::move(p));
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::Gt, "after the compile-time parameters");
}

/// kernel-args ::= (IDENT ':' type (',' IDENT ':' type)* ','?)? ')'
bool Parser::parseKernelArgs(KernelDecl &k) {
  while (!at(Tok::RParen)) {
    KernelArg a;
    if (!expectIdent(a.name, a.loc, "argument name") ||
        !expect(Tok::Colon, "after the argument name (arguments are 'name: type')") ||
        !parseType(a.type))
      return false;
    k.args.push_back(std::move(a));
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::RParen, "after the kernel arguments");
}

/// type ::= IDENT | 'ptr' '<' type '>'
bool Parser::parseType(TypeRef &type) {
  if (!expectIdent(type.name, type.loc, "a type"))
    return false;
  if (type.name != "ptr")
    return true;
  if (!enter(type.loc))
    return false;
  type.pointee = std::make_unique<TypeRef>();
  bool ok = expect(Tok::Lt, "after 'ptr' (write ptr<T>)") &&
            parseType(*type.pointee) &&
            expect(Tok::Gt, "to close 'ptr<'");
  leave();
  return ok;
}

/// fn ::= 'fn' IDENT '(' (IDENT (',' IDENT)* ','?)? ')' block
bool Parser::parseFn(Program &program) {
  auto f = std::make_unique<FnDecl>();
  consume(); // 'fn'
  if (!expectIdent(f->name, f->loc, "function name after 'fn'") ||
      !expect(Tok::LParen, "after the function name"))
    return false;
  while (!at(Tok::RParen)) {
    std::string name;
    SrcLoc loc;
    if (!expectIdent(name, loc, "parameter name"))
      return false;
    if (at(Tok::Colon))
      return fail(cur().loc, "function parameters are untyped; drop ': type'");
    f->params.emplace_back(name, loc);
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RParen, "after the function parameters") ||
      !parseBlock(f->body))
    return false;
  program.fns.push_back(std::move(f));
  return true;
}

/// block ::= '{' stmt* '}'
bool Parser::parseBlock(Body &block) {
  SrcLoc open = cur().loc;
  if (!expect(Tok::LBrace, "to begin a block") || !enter(open))
    return false;
  while (!at(Tok::RBrace)) {
    if (at(Tok::Eof))
      return fail(cur().loc, "expected '}' to end the block opened at line " +
                                 std::to_string(open.line));
    StmtPtr s;
    if (!parseStmt(s))
      return false;
    block.push_back(std::move(s));
  }
  consume();
  leave();
  return true;
}

/// stmt ::= let | for | if | while | return | assign | expr-stmt
bool Parser::parseStmt(StmtPtr &stmt) {
  switch (cur().kind) {
  case Tok::KwLet:
  case Tok::KwVar:
    return parseLet(stmt);
  case Tok::KwFor:
    return parseFor(stmt);
  case Tok::KwIf:
    return parseIf(stmt);
  case Tok::KwWhile:
    return parseWhile(stmt);
  case Tok::KwReturn:
    return parseReturn(stmt);
  case Tok::KwKernel:
  case Tok::KwFn:
    return fail(cur().loc, std::string(tokSpelling(cur().kind)) +
                               " is only allowed at top level (missing '}'?)");
  default:
    return parseAssignOrExpr(stmt);
  }
}

/// let ::= ('let' | 'var') IDENT '=' expr ';'
bool Parser::parseLet(StmtPtr &stmt) {
  SrcLoc loc = cur().loc;
  bool isVar = at(Tok::KwVar);
  consume();
  std::string name;
  SrcLoc nameLoc;
  ExprPtr init;
  if (!expectIdent(name, nameLoc, isVar ? "variable name after 'var'"
                                        : "variable name after 'let'"))
    return false;
  if (at(Tok::Colon))
    return fail(cur().loc, "type annotations are not supported; the type "
                           "comes from the initializer");
  if (!expect(Tok::Assign, "after the variable name (every variable needs an "
                           "initial value)") ||
      !parseExpr(init) || !expect(Tok::Semi, "after the declaration"))
    return false;
  stmt = std::make_unique<LetStmt>(loc, name, nameLoc, isVar, std::move(init));
  return true;
}

/// for ::= 'for' IDENT 'in' 'range' '(' expr ',' expr (',' expr)? ')' block
bool Parser::parseFor(StmtPtr &stmt) {
  auto f = std::make_unique<ForStmt>(cur().loc);
  consume();
  if (!expectIdent(f->var, f->varLoc, "loop variable after 'for'") ||
      !expect(Tok::KwIn, "after the loop variable"))
    return false;
  if (!at(Tok::Ident) || cur().text != "range")
    return fail(cur().loc, "expected 'range(lo, hi[, step])' after 'in'");
  consume();
  if (!expect(Tok::LParen, "after 'range'") || !parseExpr(f->lo) ||
      !expect(Tok::Comma, "after the loop lower bound (write range(lo, hi))") ||
      !parseExpr(f->hi))
    return false;
  if (accept(Tok::Comma) && !parseExpr(f->step))
    return false;
  if (!expect(Tok::RParen, "after the range bounds") || !parseBlock(f->body))
    return false;
  stmt = std::move(f);
  return true;
}

/// if ::= 'if' expr block ('else' (if | block))?
bool Parser::parseIf(StmtPtr &stmt) {
  auto s = std::make_unique<IfStmt>(cur().loc);
  consume();
  if (!parseExpr(s->cond) || !parseBlock(s->thenBody))
    return false;
  if (accept(Tok::KwElse)) {
    if (at(Tok::KwIf)) {
      StmtPtr nested;
      if (!enter(cur().loc) || !parseIf(nested))
        return false;
      leave();
      s->elseBody.push_back(std::move(nested));
    } else if (!parseBlock(s->elseBody)) {
      return false;
    }
  }
  stmt = std::move(s);
  return true;
}

/// while ::= 'while' expr block
bool Parser::parseWhile(StmtPtr &stmt) {
  auto w = std::make_unique<WhileStmt>(cur().loc);
  consume();
  if (!parseExpr(w->cond) || !parseBlock(w->body))
    return false;
  stmt = std::move(w);
  return true;
}

/// return ::= 'return' expr? ';'
bool Parser::parseReturn(StmtPtr &stmt) {
  SrcLoc loc = cur().loc;
  consume();
  ExprPtr value;
  if (!at(Tok::Semi) && !parseExpr(value))
    return false;
  if (!expect(Tok::Semi, "after the return statement"))
    return false;
  stmt = std::make_unique<ReturnStmt>(loc, std::move(value));
  return true;
}

static bool isAssignOp(Tok k) {
  return k == Tok::Assign || k == Tok::PlusAssign || k == Tok::MinusAssign ||
         k == Tok::StarAssign || k == Tok::SlashAssign;
}

/// assign ::= IDENT ('=' | '+=' | '-=' | '*=' | '/=') expr ';'
/// expr-stmt ::= expr ';'
bool Parser::parseAssignOrExpr(StmtPtr &stmt) {
  SrcLoc loc = cur().loc;
  if (at(Tok::Ident) && isAssignOp(peekTok().kind)) {
    std::string name = cur().text;
    consume();
    Tok op = cur().kind;
    SrcLoc opLoc = cur().loc;
    consume();
    ExprPtr value;
    if (!parseExpr(value) || !expect(Tok::Semi, "after the assignment"))
      return false;
    stmt = std::make_unique<AssignStmt>(loc, name, op, opLoc, std::move(value));
    return true;
  }
  ExprPtr e;
  if (!parseExpr(e))
    return false;
  if (at(Tok::Assign) || isAssignOp(cur().kind))
    return fail(cur().loc, "only a variable name can be assigned to");
  if (!expect(Tok::Semi, "after the expression"))
    return false;
  stmt = std::make_unique<ExprStmt>(loc, std::move(e));
  return true;
}
