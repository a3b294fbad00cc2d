//===- Lexer.cpp - .tile source to tokens ---------------------------------===//
#include "lib/Frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace ::tile::frontend;

const char *tile::frontend::tokSpelling(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Ident: return "identifier";
  case Tok::Int: return "integer";
  case Tok::Float: return "number";
  case Tok::KwKernel: return "'kernel'";
  case Tok::KwFn: return "'fn'";
  case Tok::KwLet: return "'let'";
  case Tok::KwVar: return "'var'";
  case Tok::KwFor: return "'for'";
  case Tok::KwIn: return "'in'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElse: return "'else'";
  case Tok::KwReturn: return "'return'";
  case Tok::KwWhile: return "'while'";
  case Tok::KwImport: return "'import'";
  case Tok::String: return "string";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Comma: return "','";
  case Tok::Semi: return "';'";
  case Tok::Colon: return "':'";
  case Tok::Question: return "'?'";
  case Tok::Dot: return "'.'";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::Percent: return "'%'";
  case Tok::Lt: return "'<'";
  case Tok::Le: return "'<='";
  case Tok::Gt: return "'>'";
  case Tok::Ge: return "'>='";
  case Tok::EqEq: return "'=='";
  case Tok::Ne: return "'!='";
  case Tok::AndAnd: return "'&&'";
  case Tok::OrOr: return "'||'";
  case Tok::Not: return "'!'";
  case Tok::Amp: return "'&'";
  case Tok::Pipe: return "'|'";
  case Tok::Caret: return "'^'";
  case Tok::Tilde: return "'~'";
  case Tok::Shl: return "'<<'";
  case Tok::Shr: return "'>>'";
  case Tok::Assign: return "'='";
  case Tok::PlusAssign: return "'+='";
  case Tok::MinusAssign: return "'-='";
  case Tok::StarAssign: return "'*='";
  case Tok::SlashAssign: return "'/='";
  }
  return "token";
}

namespace {
class Lexer {
public:
  Lexer(llvm::StringRef src, const ErrorFn &error) : src(src), error(error) {}

  bool run(std::vector<Token> &out) {
    while (true) {
      if (!skipSpaceAndComments())
        return false;
      Token t;
      t.loc = here();
      if (pos >= src.size()) {
        out.push_back(t);
        return true;
      }
      if (!lexToken(t))
        return false;
      out.push_back(std::move(t));
    }
  }

private:
  llvm::StringRef src;
  const ErrorFn &error;
  size_t pos = 0;
  unsigned line = 1, col = 1;

  SrcLoc here() const { return SrcLoc{line, col}; }
  char peek(size_t ahead = 0) const {
    return pos + ahead < src.size() ? src[pos + ahead] : '\0';
  }
  void advance() {
    if (pos >= src.size())
      return;
    if (src[pos] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    ++pos;
  }
  bool fail(SrcLoc loc, const std::string &msg) {
    error(loc, msg);
    return false;
  }

  /// whitespace | '//' ... '\n' | '/*' ... '*/'
  bool skipSpaceAndComments() {
    while (pos < src.size()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (pos < src.size() && peek() != '\n')
          advance();
      } else if (c == '/' && peek(1) == '*') {
        SrcLoc start = here();
        advance();
        advance();
        while (pos < src.size() && !(peek() == '*' && peek(1) == '/'))
          advance();
        if (pos >= src.size())
          return fail(start, "unterminated '/*' comment");
        advance();
        advance();
      } else {
        break;
      }
    }
    return true;
  }

  static bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool lexToken(Token &t) {
    char c = peek();
    if (isIdentStart(c))
      return lexIdent(t);
    if (isDigit(c) || (c == '.' && isDigit(peek(1))))
      return lexNumber(t);
    if (c == '"')
      return lexString(t);
    return lexPunct(t);
  }

  bool lexIdent(Token &t) {
    size_t start = pos;
    while (isIdentStart(peek()) || isDigit(peek()))
      advance();
    t.text = src.slice(start, pos).str();
    t.kind = llvm::StringSwitch<Tok>(t.text)
                 .Case("kernel", Tok::KwKernel)
                 .Case("fn", Tok::KwFn)
                 .Case("let", Tok::KwLet)
                 .Case("var", Tok::KwVar)
                 .Case("for", Tok::KwFor)
                 .Case("in", Tok::KwIn)
                 .Case("if", Tok::KwIf)
                 .Case("else", Tok::KwElse)
                 .Case("return", Tok::KwReturn)
                 .Case("while", Tok::KwWhile)
                 .Case("import", Tok::KwImport)
                 .Default(Tok::Ident);
    return true;
  }

  /// '"' (any character but '"', '\\' and a line break)* '"': a path, so
  /// no escapes.
  bool lexString(Token &t) {
    advance();
    size_t start = pos;
    while (pos < src.size() && peek() != '"' && peek() != '\n') {
      if (peek() == '\\')
        return fail(here(), "escapes are not supported in strings");
      advance();
    }
    if (peek() != '"')
      return fail(t.loc, "unterminated string");
    t.kind = Tok::String;
    t.text = src.slice(start, pos).str();
    advance();
    return true;
  }

  /// '0x' hexdigits: an integer up to INT64_MAX (bit patterns such as
  /// 0xD2511F53 for unsigned operands).
  bool lexHex(Token &t) {
    size_t start = pos;
    advance();
    advance();
    auto isHex = [](char c) {
      return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    };
    while (isHex(peek()))
      advance();
    if (pos - start == 2 || isIdentStart(peek()) || peek() == '.')
      return fail(t.loc, "malformed number '" +
                             src.slice(start, pos + 1).str() + "'");
    t.text = src.slice(start, pos).str();
    t.kind = Tok::Int;
    errno = 0;
    unsigned long long v = std::strtoull(t.text.c_str() + 2, nullptr, 16);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
      return fail(t.loc, "integer literal '" + t.text + "' is too large");
    t.intValue = int64_t(v);
    return true;
  }

  /// digits ('.' digits?)? ([eE] [+-]? digits)?  |  '.' digits ...
  bool lexNumber(Token &t) {
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X'))
      return lexHex(t);
    size_t start = pos;
    bool isFloat = false;
    while (isDigit(peek()))
      advance();
    if (peek() == '.' && !isIdentStart(peek(1))) {
      isFloat = true;
      advance();
      while (isDigit(peek()))
        advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      isFloat = true;
      advance();
      if (peek() == '+' || peek() == '-')
        advance();
      if (!isDigit(peek()))
        return fail(t.loc, "malformed number: expected digits after the exponent");
      while (isDigit(peek()))
        advance();
    }
    if (isIdentStart(peek()) || isDigit(peek()) || peek() == '.')
      return fail(t.loc, "malformed number '" +
                             src.slice(start, pos + 1).str() + "'");
    t.text = src.slice(start, pos).str();
    errno = 0;
    if (isFloat) {
      t.kind = Tok::Float;
      t.floatValue = std::strtod(t.text.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(t.floatValue))
        return fail(t.loc, "number '" + t.text + "' is out of range");
    } else {
      t.kind = Tok::Int;
      unsigned long long v = std::strtoull(t.text.c_str(), nullptr, 10);
      if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
        return fail(t.loc, "integer literal '" + t.text + "' is too large");
      t.intValue = int64_t(v);
    }
    return true;
  }

  bool lexPunct(Token &t) {
    char c = peek(), n = peek(1);
    auto one = [&](Tok k) {
      t.kind = k;
      t.text = std::string(1, c);
      advance();
      return true;
    };
    auto two = [&](Tok k) {
      t.kind = k;
      t.text = std::string{c, n};
      advance();
      advance();
      return true;
    };
    switch (c) {
    case '(': return one(Tok::LParen);
    case ')': return one(Tok::RParen);
    case '[': return one(Tok::LBracket);
    case ']': return one(Tok::RBracket);
    case '{': return one(Tok::LBrace);
    case '}': return one(Tok::RBrace);
    case ',': return one(Tok::Comma);
    case ';': return one(Tok::Semi);
    case ':': return one(Tok::Colon);
    case '?': return one(Tok::Question);
    case '.': return one(Tok::Dot);
    case '%': return one(Tok::Percent);
    case '+': return n == '=' ? two(Tok::PlusAssign) : one(Tok::Plus);
    case '-': return n == '=' ? two(Tok::MinusAssign) : one(Tok::Minus);
    case '*': return n == '=' ? two(Tok::StarAssign) : one(Tok::Star);
    case '/': return n == '=' ? two(Tok::SlashAssign) : one(Tok::Slash);
    case '<': return n == '=' ? two(Tok::Le) : n == '<' ? two(Tok::Shl) : one(Tok::Lt);
    case '>': return n == '=' ? two(Tok::Ge) : n == '>' ? two(Tok::Shr) : one(Tok::Gt);
    case '^': return one(Tok::Caret);
    case '~': return one(Tok::Tilde);
    case '=': return n == '=' ? two(Tok::EqEq) : one(Tok::Assign);
    case '!': return n == '=' ? two(Tok::Ne) : one(Tok::Not);
    case '&': return n == '&' ? two(Tok::AndAnd) : one(Tok::Amp);
    case '|': return n == '|' ? two(Tok::OrOr) : one(Tok::Pipe);
    default:
      break;
    }
    std::string shown;
    llvm::raw_string_ostream os(shown);
    unsigned char uc = static_cast<unsigned char>(c);
    if (uc >= 0x20 && uc < 0x7f)
      os << "'" << c << "'";
    else
      os << "0x" << llvm::format_hex_no_prefix(uc, 2);
    return fail(t.loc, "unexpected character " + os.str());
  }
};
} // namespace

bool ::tile::frontend::lex(llvm::StringRef source, const ErrorFn &error,
                         std::vector<Token> &tokens) {
  tokens.clear();
  return Lexer(source, error).run(tokens);
}
