//===- AST.h - abstract syntax tree of the .tile language ----------*- C++ -*-===//
//
// Plain data produced by the Parser and consumed by MLIRGen and the AST
// dumper. Every node carries the source location of its first token.
// Expressions and statements use LLVM-style RTTI (a kind field + classof).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Frontend/Token.h"

#include "llvm/Support/Casting.h"

#include <memory>
#include <string>
#include <vector>

namespace tile::frontend {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum Kind { Int, Float, Name, Unary, Binary, Ternary, Call, Index, List };
  Expr(Kind kind, SrcLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  SrcLoc getLoc() const { return loc; }

private:
  Kind kind;
  SrcLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

template <Expr::Kind K> struct ExprBase : Expr {
  explicit ExprBase(SrcLoc loc) : Expr(K, loc) {}
  static bool classof(const Expr *e) { return e->getKind() == K; }
};

struct IntExpr : ExprBase<Expr::Int> {
  IntExpr(SrcLoc loc, int64_t v) : ExprBase(loc), value(v) {}
  int64_t value;
};

struct FloatExpr : ExprBase<Expr::Float> {
  FloatExpr(SrcLoc loc, double v) : ExprBase(loc), value(v) {}
  double value;
};

struct NameExpr : ExprBase<Expr::Name> {
  NameExpr(SrcLoc loc, std::string n) : ExprBase(loc), name(std::move(n)) {}
  std::string name;
};

/// `-x`, `!x`, `~x`. `op` is Tok::Minus, Tok::Not or Tok::Tilde.
struct UnaryExpr : ExprBase<Expr::Unary> {
  UnaryExpr(SrcLoc loc, Tok op, ExprPtr x)
      : ExprBase(loc), op(op), operand(std::move(x)) {}
  Tok op;
  ExprPtr operand;
};

/// `a OP b`; the location is the operator's.
struct BinaryExpr : ExprBase<Expr::Binary> {
  BinaryExpr(SrcLoc loc, Tok op, ExprPtr l, ExprPtr r)
      : ExprBase(loc), op(op), lhs(std::move(l)), rhs(std::move(r)) {}
  Tok op;
  ExprPtr lhs, rhs;
};

/// `c ? a : b`; the location is the '?'.
struct TernaryExpr : ExprBase<Expr::Ternary> {
  TernaryExpr(SrcLoc loc, ExprPtr c, ExprPtr a, ExprPtr b)
      : ExprBase(loc), cond(std::move(c)), lhs(std::move(a)), rhs(std::move(b)) {}
  ExprPtr cond, lhs, rhs;
};

/// One call argument, positional (empty name) or named (`mask: m`).
struct CallArg {
  std::string name;
  SrcLoc loc;
  ExprPtr value;
};

/// `callee(args)`; the callee is a builtin, a helper `fn` or a type name.
struct CallExpr : ExprBase<Expr::Call> {
  CallExpr(SrcLoc loc, std::string callee, std::vector<CallArg> args)
      : ExprBase(loc), callee(std::move(callee)), args(std::move(args)) {}
  std::string callee;
  std::vector<CallArg> args;
};

/// `x[:, None]`: each entry is a full slice (`:`) or a new axis (`None`).
struct IndexExpr : ExprBase<Expr::Index> {
  IndexExpr(SrcLoc loc, ExprPtr base, std::vector<bool> newAxis)
      : ExprBase(loc), base(std::move(base)), newAxis(std::move(newAxis)) {}
  ExprPtr base;
  std::vector<bool> newAxis; ///< true for `None`, false for `:`
};

/// `[a, b]`: only meaningful as a shape argument.
struct ListExpr : ExprBase<Expr::List> {
  ListExpr(SrcLoc loc, std::vector<ExprPtr> elems)
      : ExprBase(loc), elems(std::move(elems)) {}
  std::vector<ExprPtr> elems;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum Kind { Let, Assign, ExprS, For, If, Return, While };
  Stmt(Kind kind, SrcLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  SrcLoc getLoc() const { return loc; }

private:
  Kind kind;
  SrcLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

template <Stmt::Kind K> struct StmtBase : Stmt {
  explicit StmtBase(SrcLoc loc) : Stmt(K, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == K; }
};

/// `let x = e;` or `var x = e;`
struct LetStmt : StmtBase<Stmt::Let> {
  LetStmt(SrcLoc loc, std::string n, SrcLoc nameLoc, bool m, ExprPtr e)
      : StmtBase(loc), name(std::move(n)), nameLoc(nameLoc), isVar(m),
        init(std::move(e)) {}
  std::string name;
  SrcLoc nameLoc;
  bool isVar;
  ExprPtr init;
};

/// `x = e;`, `x += e;` ... `op` is Tok::Assign or a compound assignment.
struct AssignStmt : StmtBase<Stmt::Assign> {
  AssignStmt(SrcLoc loc, std::string n, Tok op, SrcLoc opLoc, ExprPtr e)
      : StmtBase(loc), name(std::move(n)), op(op), opLoc(opLoc),
        value(std::move(e)) {}
  std::string name;
  Tok op;
  SrcLoc opLoc;
  ExprPtr value;
};

struct ExprStmt : StmtBase<Stmt::ExprS> {
  ExprStmt(SrcLoc loc, ExprPtr e) : StmtBase(loc), expr(std::move(e)) {}
  ExprPtr expr;
};

/// `for i in range(lo, hi, step) { body }` (step may be null).
struct ForStmt : StmtBase<Stmt::For> {
  ForStmt(SrcLoc loc) : StmtBase(loc) {}
  std::string var;
  SrcLoc varLoc;
  ExprPtr lo, hi, step;
  Body body;
};

/// `if c { then } else { other }`; `else if` nests an IfStmt in `other`.
struct IfStmt : StmtBase<Stmt::If> {
  IfStmt(SrcLoc loc) : StmtBase(loc) {}
  ExprPtr cond;
  Body thenBody, elseBody;
};

/// `while c { body }`: `c` is re-evaluated before each iteration.
struct WhileStmt : StmtBase<Stmt::While> {
  WhileStmt(SrcLoc loc) : StmtBase(loc) {}
  ExprPtr cond;
  Body body;
};

struct ReturnStmt : StmtBase<Stmt::Return> {
  ReturnStmt(SrcLoc loc, ExprPtr e) : StmtBase(loc), value(std::move(e)) {}
  ExprPtr value; ///< may be null
};

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

/// `i32`, `bf16`, `T`, `ptr<bf16>`, `ptr<T>`.
struct TypeRef {
  SrcLoc loc;
  std::string name;
  std::unique_ptr<TypeRef> pointee; ///< set for `ptr<...>`
};

/// A compile-time parameter `NAME = default`.
struct ConstParam {
  std::string name;
  SrcLoc loc;
  ExprPtr value;
};

/// A run-time kernel argument `name: type`.
struct KernelArg {
  std::string name;
  SrcLoc loc;
  TypeRef type;
};

/// `kernel NAME(args) { body }`, or an instance of another kernel,
/// `kernel NAME = BASE<P = value, ...>;`: BASE's arguments and body with
/// new defaults for some of its compile-time parameters (`params` then
/// holds those overrides, `args` and `body` stay empty).
struct KernelDecl {
  std::string name;
  SrcLoc loc;
  std::string base; ///< set for an instance
  SrcLoc baseLoc;
  std::vector<ConstParam> params;
  std::vector<KernelArg> args;
  Body body;
};

/// `fn name(a, b) { ... return e; }`, inlined at each call.
struct FnDecl {
  std::string name;
  SrcLoc loc;
  std::vector<std::pair<std::string, SrcLoc>> params;
  Body body;
};

/// `import "path";`: the kernels and helpers of another file join this
/// program (each file is read once, whatever imports it again).
struct Import {
  std::string path;
  SrcLoc loc;
};

struct Program {
  std::vector<Import> imports;
  std::vector<std::unique_ptr<KernelDecl>> kernels;
  std::vector<std::unique_ptr<FnDecl>> fns;
};

} // namespace tile::frontend
