//===- MLIRGenControl.cpp - run-time if/else, while, early return ---------===//
//
// Control flow on run-time scalars, in structured form:
//  - `if c { } else { }` with a run-time i1 `c` is an scf.if; every outer
//    `var` assigned in a branch becomes a result of the scf.if (the other
//    branch yields the value it had before), and must keep one type (its
//    signedness included: a u32 `var` stays u32 after the `if`).
//  - `while c { }` is an scf.while whose "before" region evaluates `c` on
//    the loop-carried `var`s (those assigned in the body).
//  - `return;` in a kernel: in the kernel body, or directly in a branch of
//    an `if` there. The rest of the kernel becomes the other branch, so a
//    program with no work skips it without any unstructured exit.
// Compile-time conditions keep folding (MLIRGen.cpp).
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::TileType;

/// The i1 value of a run-time scalar condition; `what` names the statement.
FailureOr<Value> MLIRGen::scalarCondition(Val c, SrcLoc l, StringRef what) {
  if (c.isRuntime() && c.value.getType().isInteger(1))
    return c.value;
  auto d = error(l);
  d << "'" << what << "' needs a bool scalar condition, got " << describe(c);
  if (c.isRuntime() && isa<TileType>(c.value.getType()))
    d << "; for a tile use where(c, a, b)";
  return failure();
}

//===----------------------------------------------------------------------===//
// if / else
//===----------------------------------------------------------------------===//

namespace {
/// An outer `var` assigned in a run-time `if`: its value before the `if`
/// and at the end of each branch.
struct Merged {
  std::string name;
  Val before, then, other;
};
} // namespace

/// Generates `block` at the end of `into` (before its terminator) in a scope
/// of its own.
static bool genInBlock(OpBuilder &builder, Block *into,
                       function_ref<bool()> body) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(into->getTerminator());
  return body();
}

bool MLIRGen::genRuntimeIf(const IfStmt &s, Val c) {
  FailureOr<Value> cond = scalarCondition(c, s.cond->getLoc(), "if");
  if (failed(cond))
    return false;
  llvm::SetVector<llvm::StringRef> assigned;
  collectAssigned(s.thenBody, assigned);
  collectAssigned(s.elseBody, assigned);
  SmallVector<Merged> merged;
  for (llvm::StringRef name : assigned)
    if (Binding *b = lookup(name); b && b->isVar)
      merged.push_back({name.str(), b->val, Val(), Val()});

  Location l = loc(s.getLoc());
  auto ifOp = scf::IfOp::create(builder, l, TypeRange{}, *cond,
                                /*withElseRegion=*/true);
  ++runtimeIfDepth;
  auto branch = [&](const Body &body, Block *block, bool isThen) {
    return genInBlock(builder, block, [&] {
      scopes.emplace_back();
      bool ok = genBlock(body);
      scopes.pop_back();
      for (Merged &m : merged) {
        Binding *b = lookup(m.name);
        (isThen ? m.then : m.other) = b->val;
        b->val = m.before;
      }
      return ok;
    });
  };
  bool ok = branch(s.thenBody, ifOp.thenBlock(), true) &&
            branch(s.elseBody, ifOp.elseBlock(), false);
  --runtimeIfDepth;
  if (!ok)
    return false;

  // One type per merged variable: the run-time types must agree; constants
  // adapt to it. A variable left the same constant by both branches stays
  // a compile-time value. `types` are frontend types (u32 stays u32); the
  // scf.if's results are their signless IR forms.
  SmallVector<Type> types;
  SmallVector<Merged *> results;
  for (Merged &m : merged) {
    const Val *vals[3] = {&m.before, &m.then, &m.other};
    const char *where[3] = {"before the 'if'", "after its 'then' branch",
                            "after its 'else' branch"};
    int first = -1;
    for (int i = 0; i < 3; ++i) {
      if (!vals[i]->isRuntime())
        continue;
      if (first < 0) {
        first = i;
      } else if (feType(*vals[i]) != feType(*vals[first])) {
        return error(s.getLoc())
                   << "variable '" << m.name << "' is "
                   << describe(feType(*vals[first])) << " "
                   << where[first] << " but "
                   << describe(feType(*vals[i])) << " " << where[i]
                   << "; a variable assigned in a run-time 'if' must keep "
                   << "its type",
               false;
      }
    }
    if (first < 0 && m.then.kind == m.other.kind && m.then.i == m.other.i &&
        m.then.b == m.other.b &&
        (m.then.f == m.other.f || m.then.kind != Val::Float)) {
      lookup(m.name)->val = m.then; // the same constant either way
      continue;
    }
    Type t;
    if (first >= 0) {
      t = feType(*vals[first]);
    } else {
      FailureOr<Type> common = commonElemType(m.then, m.other, s.getLoc(),
                                              "variable '" + m.name + "'");
      if (failed(common))
        return false;
      t = *common;
    }
    types.push_back(t);
    results.push_back(&m);
  }
  auto yield = [&](Block *block, bool isThen) -> bool {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(block->getTerminator());
    SmallVector<Value> vals;
    for (auto [m, t] : llvm::zip(results, types)) {
      FailureOr<Value> v = coerce(isThen ? m->then : m->other, t, s.getLoc(),
                                  "variable '" + m->name + "'");
      if (failed(v))
        return false;
      vals.push_back(*v);
    }
    block->getTerminator()->erase();
    builder.setInsertionPointToEnd(block);
    scf::YieldOp::create(builder, l, vals);
    return true;
  };
  if (!yield(ifOp.thenBlock(), true) || !yield(ifOp.elseBlock(), false))
    return false;
  if (results.empty())
    return true;
  // scf.if's results are fixed at creation: move the branches into one
  // with the merged types.
  SmallVector<Type> irTypes;
  for (Type t : types)
    irTypes.push_back(signlessOf(t));
  auto withResults = scf::IfOp::create(builder, l, irTypes, *cond,
                                       /*withElseRegion=*/true);
  withResults.getThenRegion().takeBody(ifOp.getThenRegion());
  withResults.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp.erase();
  for (auto [i, m] : llvm::enumerate(results))
    lookup(m->name)->val = typed(withResults.getResult(i), types[i]);
  return true;
}

//===----------------------------------------------------------------------===//
// while
//===----------------------------------------------------------------------===//

bool MLIRGen::genWhile(const WhileStmt &s) {
  // Outer `var`s assigned in the body are carried, with fixed types.
  llvm::SetVector<llvm::StringRef> assigned;
  collectAssigned(s.body, assigned);
  SmallVector<std::string> carried;
  SmallVector<Value> inits;
  SmallVector<Type> types; // IR types of the carried values
  SmallVector<bool> uns;   // and their signedness (Val::uns)
  SmallVector<Location> locs;
  for (llvm::StringRef name : assigned) {
    Binding *b = lookup(name);
    if (!b || !b->isVar)
      continue; // reported when the assignment is generated
    FailureOr<Value> v = toRuntime(b->val, s.getLoc());
    if (failed(v))
      return false;
    carried.push_back(name.str());
    inits.push_back(*v);
    types.push_back(v->getType());
    uns.push_back(b->val.isRuntime() && b->val.uns);
    locs.push_back(loc(s.getLoc()));
  }
  Location l = loc(s.getLoc());
  auto whileOp = scf::WhileOp::create(builder, l, types, inits);
  Block *before = builder.createBlock(&whileOp.getBefore(), {}, types, locs);
  Block *after = builder.createBlock(&whileOp.getAfter(), {}, types, locs);
  builder.setInsertionPointAfter(whileOp);
  auto bindArgs = [&](Block *block) {
    for (auto [i, name] : llvm::enumerate(carried))
      lookup(name)->val = Val::of(block->getArgument(i), uns[i]);
  };

  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(before);
    bindArgs(before);
    FailureOr<Val> c = genExpr(*s.cond);
    if (failed(c))
      return false;
    if (c->kind == Val::Bool)
      return error(s.cond->getLoc())
                 << "'while' needs a run-time condition, got " << describe(*c)
                 << (c->b ? " (the loop would never end)" : ""),
             false;
    FailureOr<Value> cond = scalarCondition(*c, s.cond->getLoc(), "while");
    if (failed(cond))
      return false;
    scf::ConditionOp::create(builder, l, *cond, before->getArguments());
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(after);
    bindArgs(after);
    scopes.emplace_back();
    ++loopDepth;
    bool ok = genBlock(s.body);
    --loopDepth;
    scopes.pop_back();
    if (!ok)
      return false;
    SmallVector<Value> yields;
    if (!carriedYields(carried, types, uns, s.getLoc(), yields))
      return false;
    scf::YieldOp::create(builder, l, yields);
  }
  for (auto [i, name] : llvm::enumerate(carried))
    lookup(name)->val = Val::of(whileOp.getResult(i), uns[i]);
  return true;
}

//===----------------------------------------------------------------------===//
// Early return from a kernel
//===----------------------------------------------------------------------===//

static bool hasDirectReturn(const Body &body) {
  return llvm::any_of(body, [](const StmtPtr &s) { return isa<ReturnStmt>(*s); });
}

bool MLIRGen::genKernelReturn(const ReturnStmt &s) {
  if (!kernelReturns.contains(&s))
    return error(s.getLoc()) << "'return' in a kernel must be in the kernel "
                             << "body or directly in a branch of an 'if' "
                             << "there",
           false;
  if (s.value)
    return error(s.value->getLoc()) << "a kernel returns no value; write "
                                    << "'return;'",
           false;
  returned = true;
  return true;
}

/// Statements `from`.. of the kernel body. An `if` there with a `return`
/// directly in a branch takes the rest of the body with it.
bool MLIRGen::genKernelBody(const Body &body, size_t from) {
  if (from == 0) {
    kernelReturns.clear();
    for (const StmtPtr &s : body) {
      if (isa<ReturnStmt>(*s))
        kernelReturns.insert(s.get());
      if (auto *i = dyn_cast<IfStmt>(s.get()))
        for (const Body *b : {&i->thenBody, &i->elseBody})
          for (const StmtPtr &r : *b)
            if (isa<ReturnStmt>(*r))
              kernelReturns.insert(r.get());
    }
  }
  for (size_t i = from; i < body.size(); ++i) {
    auto *ifs = dyn_cast<IfStmt>(body[i].get());
    if (ifs && (hasDirectReturn(ifs->thenBody) || hasDirectReturn(ifs->elseBody)))
      return genReturningIf(*ifs, body, i + 1);
    if (!genStmt(*body[i]))
      return false;
    if (returned)
      return true;
  }
  return true;
}

/// `if c { ...; return; } else { ... }` followed by `rest`: the branch that
/// does not return continues with the rest of the kernel body.
bool MLIRGen::genReturningIf(const IfStmt &s, const Body &body, size_t rest) {
  if (!enterGen(s.getLoc()))
    return false;
  bool ok = genReturningIfImpl(s, body, rest);
  --genDepth;
  return ok;
}

bool MLIRGen::genReturningIfImpl(const IfStmt &s, const Body &body,
                                 size_t rest) {
  FailureOr<Val> c = genExpr(*s.cond);
  if (failed(c))
    return false;
  // One branch, then the rest of the body unless the branch returned (in a
  // scope of its own inside an scf.if, so that the branch's names are gone).
  auto branch = [&](const Body &b, bool nested) {
    scopes.emplace_back();
    bool ok = genBlock(b);
    scopes.pop_back();
    if (!ok)
      return false;
    if (returned)
      return true;
    if (nested)
      scopes.emplace_back();
    ok = genKernelBody(body, rest);
    if (nested)
      scopes.pop_back();
    return ok;
  };
  if (c->kind == Val::Bool)
    return branch(c->b ? s.thenBody : s.elseBody, false);
  FailureOr<Value> cond = scalarCondition(*c, s.cond->getLoc(), "if");
  if (failed(cond))
    return false;
  // Nothing follows the scf.if, so no variable needs to be merged; each
  // branch starts from the values before it.
  auto ifOp = scf::IfOp::create(builder, loc(s.getLoc()), TypeRange{}, *cond,
                                /*withElseRegion=*/true);
  std::deque<Scope> saved = scopes;
  ++runtimeIfDepth;
  bool ok = genInBlock(builder, ifOp.thenBlock(),
                       [&] { return branch(s.thenBody, true); });
  scopes = saved;
  returned = false;
  ok = ok && genInBlock(builder, ifOp.elseBlock(),
                        [&] { return branch(s.elseBody, true); });
  scopes = saved;
  --runtimeIfDepth;
  returned = true; // the rest of the body was generated inside
  return ok;
}
