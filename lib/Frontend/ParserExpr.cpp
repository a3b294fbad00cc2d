//===- ParserExpr.cpp - expressions ---------------------------------------===//
//
// Precedence, loosest first: ?: || && (== !=) (< <= > >=) | ^ & (<< >>)
// (+ -) (* / %) unary(- ! ~) postfix([...]) primary. As in C except that
// the bitwise operators bind tighter than comparisons (as in Python, Rust
// and Go), so `x & MASK == 0` is `(x & MASK) == 0`.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/Parser.h"

using namespace ::tile::frontend;

/// expr ::= ternary
bool Parser::parseExpr(ExprPtr &e) {
  if (!enter(cur().loc))
    return false;
  bool ok = parseTernary(e);
  leave();
  return ok;
}

/// ternary ::= binary ('?' expr ':' ternary)?
bool Parser::parseTernary(ExprPtr &e) {
  if (!parseBinary(e, 0))
    return false;
  if (!at(Tok::Question))
    return true;
  SrcLoc loc = cur().loc;
  consume();
  ExprPtr a, b;
  if (!parseExpr(a) || !expect(Tok::Colon, "in the conditional expression "
                                           "'c ? a : b'"))
    return false;
  if (!enter(cur().loc) || !parseTernary(b))
    return false;
  leave();
  e = std::make_unique<TernaryExpr>(loc, std::move(e), std::move(a),
                                    std::move(b));
  return true;
}

static int precedence(Tok k) {
  switch (k) {
  case Tok::OrOr: return 1;
  case Tok::AndAnd: return 2;
  case Tok::EqEq: case Tok::Ne: return 3;
  case Tok::Lt: case Tok::Le: case Tok::Gt: case Tok::Ge: return 4;
  case Tok::Pipe: return 5;
  case Tok::Caret: return 6;
  case Tok::Amp: return 7;
  case Tok::Shl: case Tok::Shr: return 8;
  case Tok::Plus: case Tok::Minus: return 9;
  case Tok::Star: case Tok::Slash: case Tok::Percent: return 10;
  default: return -1;
  }
}

/// binary ::= unary (binop unary)*   (left-associative, by precedence)
/// Each operator of a chain counts as one level of nesting, so the depth of
/// the tree built here stays within kMaxDepth.
bool Parser::parseBinary(ExprPtr &e, int minPrec) {
  if (!parseUnary(e))
    return false;
  unsigned chain = 0;
  bool ok = true;
  while (ok) {
    int prec = precedence(cur().kind);
    if (prec < 0 || prec < minPrec)
      break;
    Tok op = cur().kind;
    SrcLoc loc = cur().loc;
    consume();
    ExprPtr rhs;
    if (!enter(loc)) {
      ok = false;
      break;
    }
    ++chain;
    ok = parseBinary(rhs, prec + 1);
    if (ok)
      e = std::make_unique<BinaryExpr>(loc, op, std::move(e), std::move(rhs));
  }
  depth -= chain;
  return ok;
}

/// unary ::= ('-' | '!' | '~') unary | postfix
bool Parser::parseUnary(ExprPtr &e) {
  if (!at(Tok::Minus) && !at(Tok::Not) && !at(Tok::Tilde))
    return parsePostfix(e);
  Tok op = cur().kind;
  SrcLoc loc = cur().loc;
  consume();
  ExprPtr x;
  if (!enter(loc) || !parseUnary(x))
    return false;
  leave();
  e = std::make_unique<UnaryExpr>(loc, op, std::move(x));
  return true;
}

/// postfix ::= primary ('[' index-item (',' index-item)* ']')*
bool Parser::parsePostfix(ExprPtr &e) {
  if (!parsePrimary(e))
    return false;
  while (at(Tok::LBracket))
    if (!parseIndex(e))
      return false;
  return true;
}

/// index-item ::= ':' | 'None'
bool Parser::parseIndex(ExprPtr &e) {
  SrcLoc loc = cur().loc;
  consume(); // '['
  std::vector<bool> newAxis;
  do {
    if (accept(Tok::Colon)) {
      newAxis.push_back(false);
    } else if (at(Tok::Ident) && cur().text == "None") {
      consume();
      newAxis.push_back(true);
    } else {
      return fail(cur().loc, "expected ':' or 'None' in an index (only "
                             "x[:, None] and x[None, :] are supported)");
    }
    if (newAxis.size() > 8)
      return fail(loc, "too many index entries");
  } while (accept(Tok::Comma));
  if (!expect(Tok::RBracket, "after the index"))
    return false;
  e = std::make_unique<IndexExpr>(loc, std::move(e), std::move(newAxis));
  return true;
}

/// primary ::= INT | FLOAT | IDENT | IDENT '(' call-args ')' | '(' expr ')'
///           | '[' expr (',' expr)* ']'
bool Parser::parsePrimary(ExprPtr &e) {
  const Token &t = cur();
  SrcLoc loc = t.loc;
  switch (t.kind) {
  case Tok::Int:
    e = std::make_unique<IntExpr>(loc, t.intValue);
    consume();
    return true;
  case Tok::Float:
    e = std::make_unique<FloatExpr>(loc, t.floatValue);
    consume();
    return true;
  case Tok::Ident: {
    std::string name = t.text;
    consume();
    if (!at(Tok::LParen)) {
      if (name == "None")
        return fail(loc, "'None' is only allowed inside an index, as in "
                         "x[:, None]");
      e = std::make_unique<NameExpr>(loc, name);
      return true;
    }
    consume();
    std::vector<CallArg> args;
    if (!parseCallArgs(args))
      return false;
    e = std::make_unique<CallExpr>(loc, name, std::move(args));
    return true;
  }
  case Tok::LParen: {
    consume();
    if (!parseExpr(e))
      return false;
    return expect(Tok::RParen, "to close the parenthesis");
  }
  case Tok::LBracket:
    return parseList(e);
  default:
    if (t.kind == Tok::Eof)
      return fail(loc, "expected an expression, found end of file");
    return fail(loc, std::string("expected an expression, found ") +
                         (t.text.empty() ? tokSpelling(t.kind)
                                         : "'" + t.text + "'"));
  }
}

/// call-args ::= (call-arg (',' call-arg)* ','?)? ')'
/// call-arg  ::= (IDENT ':')? expr
bool Parser::parseCallArgs(std::vector<CallArg> &args) {
  while (!at(Tok::RParen)) {
    CallArg a;
    a.loc = cur().loc;
    if (at(Tok::Ident) && peekTok().kind == Tok::Colon) {
      a.name = cur().text;
      consume();
      consume();
    } else if (!args.empty() && !args.back().name.empty()) {
      return fail(cur().loc, "positional argument after a named argument");
    }
    if (!parseExpr(a.value))
      return false;
    args.push_back(std::move(a));
    if (args.size() > 64)
      return fail(args.back().loc, "too many arguments");
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::RParen, "after the arguments");
}

/// list ::= '[' expr (',' expr)* ','? ']'
bool Parser::parseList(ExprPtr &e) {
  SrcLoc loc = cur().loc;
  consume(); // '['
  std::vector<ExprPtr> elems;
  while (!at(Tok::RBracket)) {
    ExprPtr x;
    if (!parseExpr(x))
      return false;
    elems.push_back(std::move(x));
    if (elems.size() > 8)
      return fail(loc, "too many list elements (tiles have at most 8 dimensions)");
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RBracket, "to close the list"))
    return false;
  e = std::make_unique<ListExpr>(loc, std::move(elems));
  return true;
}
