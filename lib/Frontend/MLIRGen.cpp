//===- MLIRGen.cpp - scopes, statements, loops, helper inlining -----------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;

MLIRGen::MLIRGen(MLIRContext &ctx, llvm::ArrayRef<std::string> filenames,
                 const Program &p)
    : ctx(ctx), builder(&ctx), program(p) {
  for (const std::string &f : filenames)
    files.push_back(StringAttr::get(&ctx, f));
}

Location MLIRGen::fileLoc(SrcLoc l) {
  return FileLineColLoc::get(files[l.file < files.size() ? l.file : 0], l.line,
                             l.col);
}

Location MLIRGen::loc(SrcLoc l) {
  Location at = fileLoc(l);
  if (callSites.empty())
    return at;
  // Outermost call first: each inner call site is called from the ones
  // around it; diagnostics print the chain as "called from" notes.
  Location caller = fileLoc(callSites[0]);
  for (size_t i = 1; i < callSites.size(); ++i)
    caller = CallSiteLoc::get(fileLoc(callSites[i]), caller);
  return CallSiteLoc::get(at, caller);
}

InFlightDiagnostic MLIRGen::error(SrcLoc l) { return emitError(loc(l)); }

bool ::tile::frontend::isReservedName(llvm::StringRef n) {
  return llvm::is_contained({"inf", "LOG2E", "LN2", "true", "false", "None",
                             "i1", "bool", "i8", "u8", "i16", "u16", "i32",
                             "u32", "i64", "u64", "f16", "bf16", "f32", "f64",
                             "f8e4m3", "f8e5m2", "ptr", "range"},
                            n);
}

MLIRGen::Binding *MLIRGen::lookup(llvm::StringRef name) {
  for (size_t i = scopes.size(); i-- > frameBase;) {
    auto it = scopes[i].find(name);
    if (it != scopes[i].end())
      return &it->second;
  }
  auto it = scopes.front().find(name);
  return it == scopes.front().end() ? nullptr : &it->second;
}

bool MLIRGen::declare(llvm::StringRef name, SrcLoc l, Val v, bool isVar,
                      const char *origin) {
  if (isReservedName(name))
    return error(l) << "'" << name << "' is a builtin name and cannot be "
                    << "redefined", false;
  Scope &scope = scopes.back();
  auto it = scope.find(name);
  if (it != scope.end())
    return error(l) << "redefinition of '" << name << "' (first defined at "
                    << it->second.loc.line << ":" << it->second.loc.col << ")",
           false;
  if (scopes.size() - 1 != 0 && scopes.front().count(name))
    return error(l) << "'" << name << "' shadows a compile-time parameter",
           false;
  Binding b{v, isVar, l};
  if (origin)
    b.origin = origin;
  scope[name] = b;
  return true;
}

bool MLIRGen::enterGen(SrcLoc l) {
  if (++genDepth <= kMaxGenDepth)
    return true;
  error(l) << "program nested too deeply (statements, expressions and "
           << "inlined helper calls together)";
  return false;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool MLIRGen::genBlock(const Body &block) {
  for (const StmtPtr &s : block) {
    if (!genStmt(*s))
      return false;
    if (returned)
      break;
  }
  return true;
}

bool MLIRGen::genStmt(const Stmt &s) {
  if (!enterGen(s.getLoc()))
    return false;
  bool ok = genStmtImpl(s);
  --genDepth;
  return ok;
}

bool MLIRGen::genStmtImpl(const Stmt &s) {
  if (auto *l = llvm::dyn_cast<LetStmt>(&s))
    return genLet(*l);
  if (auto *a = llvm::dyn_cast<AssignStmt>(&s))
    return genAssign(*a);
  if (auto *f = llvm::dyn_cast<ForStmt>(&s))
    return genFor(*f);
  if (auto *i = llvm::dyn_cast<IfStmt>(&s))
    return genIf(*i);
  if (auto *r = llvm::dyn_cast<ReturnStmt>(&s))
    return genReturn(*r);
  if (auto *w = llvm::dyn_cast<WhileStmt>(&s))
    return genWhile(*w);
  auto *e = llvm::cast<ExprStmt>(&s);
  return succeeded(genExpr(*e->expr));
}

bool MLIRGen::genLet(const LetStmt &s) {
  FailureOr<Val> v = genExpr(*s.init);
  if (failed(v))
    return false;
  if (v->kind == Val::None)
    return error(s.init->getLoc()) << "expression has no value", false;
  return declare(s.name, s.nameLoc, *v, s.isVar);
}

bool MLIRGen::genAssign(const AssignStmt &s) {
  Binding *b = lookup(s.name);
  if (!b)
    return error(s.getLoc()) << "unknown variable '" << s.name << "'", false;
  if (!b->isVar)
    return error(s.getLoc()) << "cannot assign to '" << s.name << "': it is "
                             << b->origin,
           false;
  FailureOr<Val> v = genExpr(*s.value);
  if (failed(v))
    return false;
  if (v->kind == Val::None)
    return error(s.value->getLoc()) << "expression has no value", false;
  if (s.op != Tok::Assign) {
    BinOp op = s.op == Tok::PlusAssign    ? BinOp::Add
               : s.op == Tok::MinusAssign ? BinOp::Sub
               : s.op == Tok::StarAssign  ? BinOp::Mul
                                          : BinOp::Div;
    v = genBinary(op, b->val, *v, s.opLoc);
    if (failed(v))
      return false;
  }
  b->val = *v;
  return true;
}

/// Names assigned anywhere in `block` (nested blocks included), in order.
void ::tile::frontend::collectAssigned(const Body &block, llvm::SetVector<llvm::StringRef> &out) {
  for (const StmtPtr &s : block) {
    if (auto *a = llvm::dyn_cast<AssignStmt>(s.get()))
      out.insert(a->name);
    else if (auto *f = llvm::dyn_cast<ForStmt>(s.get()))
      collectAssigned(f->body, out);
    else if (auto *w = llvm::dyn_cast<WhileStmt>(s.get()))
      collectAssigned(w->body, out);
    else if (auto *i = llvm::dyn_cast<IfStmt>(s.get())) {
      collectAssigned(i->thenBody, out);
      collectAssigned(i->elseBody, out);
    }
  }
}

bool MLIRGen::carriedYields(ArrayRef<std::string> carried,
                            ArrayRef<Type> types, ArrayRef<bool> uns,
                            SrcLoc l, SmallVectorImpl<Value> &yields) {
  for (auto [i, name] : llvm::enumerate(carried)) {
    Binding *b = lookup(name);
    Type want = withSignedness(types[i], uns[i]);
    if (b->val.isRuntime() && feType(b->val) != want)
      return error(l) << "loop-carried variable '" << name
                      << "' changes type in the loop body: " << describe(want)
                      << " before the loop, " << describe(feType(b->val))
                      << " after an iteration",
             false;
    FailureOr<Value> v =
        coerce(b->val, want, l, "loop-carried variable '" + name + "'");
    if (failed(v))
      return false;
    yields.push_back(*v);
  }
  return true;
}

bool MLIRGen::genFor(const ForStmt &s) {
  // Bounds: integer constants or i32/i64 scalars; the loop runs on i64 if
  // any bound is i64, else on i32.
  Val bounds[3] = {Val(), Val(), Val::ofInt(1)};
  const Expr *exprs[3] = {s.lo.get(), s.hi.get(), s.step.get()};
  Type ivType = builder.getI32Type();
  for (int i = 0; i < 3; ++i) {
    if (!exprs[i])
      continue;
    FailureOr<Val> v = genExpr(*exprs[i]);
    if (failed(v))
      return false;
    bool ok = v->kind == Val::Int;
    if (v->isRuntime()) {
      Type t = v->value.getType();
      ok = !v->uns && (t.isInteger(32) || t.isInteger(64));
      if (t.isInteger(64))
        ivType = builder.getI64Type();
    }
    if (!ok)
      return error(exprs[i]->getLoc()) << "range bounds must be i32 or i64 "
                                       << "scalars, got " << describe(*v),
             false;
    bounds[i] = *v;
  }
  if (bounds[2].kind == Val::Int && bounds[2].i == 0)
    return error(exprs[2]->getLoc()) << "range step must not be zero", false;
  // A negative (constant) step counts down: range(lo, hi, -s) runs
  // j in range(-lo, -hi, s) with the loop variable -j, so that the scf.for
  // keeps a positive step.
  bool down = bounds[2].kind == Val::Int && bounds[2].i < 0;
  for (int i = 0; down && i < 3; ++i) {
    SrcLoc l = exprs[i] ? exprs[i]->getLoc() : s.getLoc();
    FailureOr<Val> neg = genBinary(BinOp::Sub, Val::ofInt(0), bounds[i], l);
    if (failed(neg))
      return false;
    bounds[i] = *neg;
  }
  Value lmh[3];
  for (int i = 0; i < 3; ++i) {
    SrcLoc l = exprs[i] ? exprs[i]->getLoc() : s.getLoc();
    if (bounds[i].isRuntime() && bounds[i].value.getType() != ivType) {
      FailureOr<Val> wide = genCast(bounds[i], ivType, l); // i32 -> i64
      if (failed(wide))
        return false;
      bounds[i] = *wide;
    }
    FailureOr<Value> v = coerce(bounds[i], ivType, l, "range bound");
    if (failed(v))
      return false;
    lmh[i] = *v;
  }

  // Outer `var`s assigned in the body become loop-carried values.
  llvm::SetVector<llvm::StringRef> assigned;
  collectAssigned(s.body, assigned);
  SmallVector<std::string> carried;
  SmallVector<Value> inits;
  for (llvm::StringRef name : assigned) {
    Binding *b = lookup(name);
    if (!b || !b->isVar)
      continue; // reported when the assignment is generated
    FailureOr<Value> v = b->val.isRuntime() ? FailureOr<Value>(b->val.value)
                                            : toRuntime(b->val, s.getLoc());
    if (failed(v))
      return false;
    carried.push_back(name.str());
    inits.push_back(*v);
  }

  auto forOp = scf::ForOp::create(builder, loc(s.getLoc()), lmh[0], lmh[1],
                                  lmh[2], inits);
  Block *body = forOp.getBody();
  if (!body->empty())
    body->getTerminator()->erase();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(body);
  SmallVector<bool> carriedUns;
  for (auto [i, name] : llvm::enumerate(carried)) {
    carriedUns.push_back(lookup(name)->val.uns);
    lookup(name)->val = Val::of(forOp.getRegionIterArgs()[i], carriedUns[i]);
  }

  scopes.emplace_back();
  ++loopDepth;
  Val iv = Val::of(forOp.getInductionVar());
  if (down) {
    FailureOr<Val> neg = genBinary(BinOp::Sub, Val::ofInt(0), iv, s.getLoc());
    if (failed(neg))
      return false;
    iv = *neg;
  }
  bool ok = declare(s.var, s.varLoc, iv, false, "a loop variable") &&
            genBlock(s.body);
  --loopDepth;
  scopes.pop_back();
  if (!ok)
    return false;

  SmallVector<Type> types;
  for (Value v : inits)
    types.push_back(v.getType());
  SmallVector<Value> yields;
  if (!carriedYields(carried, types, carriedUns, s.getLoc(), yields))
    return false;
  scf::YieldOp::create(builder, loc(s.getLoc()), yields);
  for (auto [i, name] : llvm::enumerate(carried))
    lookup(name)->val = Val::of(forOp.getResult(i), carriedUns[i]);
  return true;
}

bool MLIRGen::genIf(const IfStmt &s) {
  FailureOr<Val> c = genExpr(*s.cond);
  if (failed(c))
    return false;
  if (c->kind != Val::Bool)
    return genRuntimeIf(s, *c);
  scopes.emplace_back();
  bool ok = genBlock(c->b ? s.thenBody : s.elseBody);
  scopes.pop_back();
  return ok;
}

bool MLIRGen::genReturn(const ReturnStmt &s) {
  if (loopDepth > 0)
    return error(s.getLoc()) << "'return' inside a loop is not supported",
           false;
  if (callStack.empty())
    return genKernelReturn(s);
  if (runtimeIfDepth > 0)
    return error(s.getLoc()) << "'return' inside a run-time 'if' is only "
                             << "supported in a kernel, not in a helper 'fn'",
           false;
  Val v;
  if (s.value) {
    FailureOr<Val> r = genExpr(*s.value);
    if (failed(r))
      return false;
    v = *r;
  }
  returnValue = v;
  returned = true;
  return true;
}

FailureOr<Val> MLIRGen::inlineFn(const FnDecl &fn, const CallExpr &call,
                                 std::vector<Val> args) {
  if (llvm::is_contained(callStack, fn.name))
    return error(call.getLoc()) << "recursive call to '" << fn.name
                                << "' (helper functions are inlined and "
                                << "cannot recurse)",
           failure();
  if (callStack.size() >= 64)
    return error(call.getLoc()) << "helper calls nested too deeply", failure();
  if (args.size() != fn.params.size())
    return error(call.getLoc()) << "'" << fn.name << "' takes "
                                << fn.params.size() << " argument"
                                << (fn.params.size() == 1 ? "" : "s")
                                << ", got " << args.size(),
           failure();
  size_t savedBase = frameBase;
  unsigned savedLoops = loopDepth, savedIfs = runtimeIfDepth;
  callStack.push_back(fn.name);
  callSites.push_back(call.getLoc());
  frameBase = scopes.size();
  loopDepth = 0;
  runtimeIfDepth = 0;
  returned = false;
  returnValue = Val();
  scopes.emplace_back();
  bool ok = true;
  for (auto [i, p] : llvm::enumerate(fn.params))
    if (!(ok = declare(p.first, p.second, args[i], false,
                       "a function parameter")))
      break;
  ok = ok && genBlock(fn.body);
  Val result = returnValue;
  scopes.pop_back();
  frameBase = savedBase;
  loopDepth = savedLoops;
  runtimeIfDepth = savedIfs;
  returned = false;
  returnValue = Val();
  callStack.pop_back();
  callSites.pop_back();
  if (!ok)
    return failure();
  return result;
}
