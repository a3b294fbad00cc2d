//===- MLIRGenKernel.cpp - kernel selection, parameters, arguments --------===//
#include "lib/Frontend/MLIRGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;

//===----------------------------------------------------------------------===//
// Kernel selection, compile-time parameters, arguments
//===----------------------------------------------------------------------===//

const KernelDecl *MLIRGen::selectKernel(const FrontendOptions &options) {
  llvm::StringMap<const KernelDecl *> byName;
  std::string names;
  // Without --kernel, the main file's kernels are the candidates: a file
  // that imports a library of kernels and instantiates one builds that one.
  SmallVector<const KernelDecl *> own;
  for (const auto &k : program.kernels) {
    if (!byName.insert({k->name, k.get()}).second)
      return error(k->loc) << "redefinition of kernel '" << k->name << "'",
             nullptr;
    names += (names.empty() ? "" : ", ") + k->name;
    if (k->loc.file == 0)
      own.push_back(k.get());
  }
  if (program.kernels.empty())
    return error(SrcLoc{1, 1}) << "no kernel in this file (write 'kernel "
                               << "name(...) { ... }')",
           nullptr;
  if (!options.kernel.empty()) {
    auto it = byName.find(options.kernel);
    if (it == byName.end())
      return error(program.kernels.front()->loc)
                 << "no kernel named '" << options.kernel
                 << "' (this file has: " << names << ")",
             nullptr;
    return it->second;
  }
  if (own.empty())
    return error(SrcLoc{1, 1}) << "no kernel in this file, only in the files "
                               << "it imports (" << names
                               << "); choose one with --kernel NAME or write "
                               << "'kernel NAME = BASE<...>;'",
           nullptr;
  if (own.size() > 1) {
    std::string mine;
    for (const KernelDecl *k : own)
      mine += (mine.empty() ? "" : ", ") + k->name;
    return error(own[1]->loc) << "this file has several kernels (" << mine
                              << "); choose one with --kernel NAME",
           nullptr;
  }
  return own.front();
}

const KernelDecl *
MLIRGen::resolveInstance(const KernelDecl &k,
                         llvm::StringMap<const ConstParam *> &overrides) {
  const KernelDecl *cur = &k;
  SmallVector<const KernelDecl *> chain;
  while (!cur->base.empty()) {
    if (llvm::is_contained(chain, cur) || chain.size() > 64) {
      std::string path;
      for (const KernelDecl *c : chain)
        path += c->name + " -> ";
      return error(k.loc) << "kernel '" << k.name << "' instantiates itself ("
                          << path << cur->name << ")",
             nullptr;
    }
    chain.push_back(cur);
    for (const ConstParam &p : cur->params)
      overrides.try_emplace(p.name, &p); // the nearest instance wins
    auto base = llvm::find_if(program.kernels, [&](const auto &d) {
      return d->name == cur->base;
    });
    if (base == program.kernels.end())
      return error(cur->baseLoc) << "kernel '" << cur->name
                                 << "' instantiates unknown kernel '"
                                 << cur->base << "'",
             nullptr;
    cur = base->get();
  }
  for (const auto &o : overrides)
    if (llvm::none_of(cur->params, [&](const ConstParam &p) {
          return p.name == o.getKey();
        }))
      return error(o.getValue()->loc)
                 << "kernel '" << cur->name << "' has no compile-time "
                 << "parameter '" << o.getKey() << "'",
             nullptr;
  return cur;
}

mlir::FailureOr<mlir::Type> MLIRGen::resolveType(const TypeRef &t,
                                                 bool allowPtr) {
  if (t.pointee) {
    if (!allowPtr)
      return error(t.loc) << "pointers to pointers are not supported", failure();
    FailureOr<Type> inner = resolveType(*t.pointee, false);
    if (failed(inner))
      return failure();
    return Type(PtrType::get(&ctx, *inner));
  }
  if (Binding *b = lookup(t.name)) {
    if (b->val.kind == Val::Type)
      return b->val.type;
    return error(t.loc) << "'" << t.name << "' is not a type", failure();
  }
  FailureOr<Type> ty = typeByName(t.name);
  if (failed(ty))
    return error(t.loc) << "unknown type '" << t.name
                        << "' (expected i1, bool, i8, u8, i16, u16, i32, u32, "
                        << "i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2 or ptr<T>)",
           failure();
  return ty;
}

/// Parses a -D value according to the kind of the parameter's default.
mlir::FailureOr<Val> MLIRGen::parseDefine(const ConstParam &p, Val def,
                                          const std::string &text) {
  llvm::StringRef s = llvm::StringRef(text).trim();
  auto bad = [&](const char *want) {
    return error(p.loc) << "-D " << p.name << "=" << text
                        << ": compile-time parameter '" << p.name << "' "
                        << want,
           failure();
  };
  switch (def.kind) {
  case Val::Int: {
    int64_t v;
    if (s.getAsInteger(10, v))
      return bad("is an integer; expected an integer value");
    return Val::ofInt(v);
  }
  case Val::Bool:
    if (s == "true" || s == "1")
      return Val::ofBool(true);
    if (s == "false" || s == "0")
      return Val::ofBool(false);
    return bad("is a bool; expected true or false");
  case Val::Float: {
    double v;
    if (s.getAsDouble(v))
      return bad("is a float; expected a number");
    return Val::ofFloat(v);
  }
  case Val::Type: {
    FailureOr<Type> t = typeByName(s);
    if (failed(t))
      return bad("is a type; expected i1, i8, u8, i16, u16, i32, u32, i64, "
                 "u64, f16, bf16, f32, f64, f8e4m3 or f8e5m2");
    return Val::ofType(*t);
  }
  case Val::Fn: {
    auto f = fns.find(s);
    if (f == fns.end())
      return bad("is a function; expected the name of a helper function");
    return Val::ofFn(f->second);
  }
  default:
    return bad("has no value");
  }
}

static Attribute paramAttr(Builder &b, const Val &v) {
  switch (v.kind) {
  case Val::Int: return b.getI64IntegerAttr(v.i);
  case Val::Bool: return b.getBoolAttr(v.b);
  case Val::Float: return b.getF64FloatAttr(v.f);
  case Val::Type: return TypeAttr::get(v.type);
  case Val::Fn: return b.getStringAttr(v.fn->name);
  default: return b.getUnitAttr();
  }
}

bool MLIRGen::bindParams(const KernelDecl &k, const KernelDecl &root,
                         const llvm::StringMap<const ConstParam *> &overrides,
                         const FrontendOptions &options,
                         NamedAttrList &params) {
  for (const auto &define : options.defines) {
    const std::string &name = define.first, &value = define.second;
    if (llvm::none_of(root.params,
                      [&](const ConstParam &p) { return p.name == name; })) {
      std::string known;
      for (const ConstParam &p : root.params)
        known += (known.empty() ? "" : ", ") + p.name;
      return error(k.loc) << "-D " << name << "=" << value
                          << ": kernel '" << k.name
                          << "' has no compile-time parameter '" << name
                          << "' (it has: " << (known.empty() ? "none" : known)
                          << ")",
             false;
    }
  }
  for (const ConstParam &p : root.params) {
    auto o = overrides.find(p.name);
    const Expr &value = o == overrides.end() ? *p.value : *o->second->value;
    // A parameter's value may name a helper function.
    FailureOr<Val> v;
    auto *name = dyn_cast<NameExpr>(&value);
    if (name && !lookup(name->name) && fns.count(name->name))
      v = Val::ofFn(fns.lookup(name->name));
    else
      v = genExpr(value);
    if (failed(v))
      return false;
    if (!v->isConst() && v->kind != Val::Type && v->kind != Val::Fn)
      return error(value.getLoc())
                 << "the value of compile-time parameter '" << p.name
                 << "' must be an integer, float, bool or type constant, or "
                 << "a helper function's name",
             false;
    if (o != overrides.end()) {
      FailureOr<Val> def = Val();
      auto *dn = dyn_cast<NameExpr>(p.value.get());
      if (dn && !lookup(dn->name) && fns.count(dn->name))
        def = Val::ofFn(fns.lookup(dn->name));
      else
        def = genExpr(*p.value);
      if (failed(def))
        return false;
      bool sameKind = def->kind == v->kind ||
                      (def->kind == Val::Float && v->kind == Val::Int);
      if (!sameKind)
        return error(value.getLoc())
                   << "compile-time parameter '" << p.name << "' of kernel '"
                   << root.name << "' is " << describe(*def) << "; got "
                   << describe(*v),
               false;
      if (def->kind == Val::Float && v->kind == Val::Int)
        v = Val::ofFloat(double(v->i));
    }
    auto it = options.defines.find(p.name);
    if (it != options.defines.end()) {
      v = parseDefine(p, *v, it->second);
      if (failed(v))
        return false;
    }
    if (!declare(p.name, p.loc, *v, false, "a compile-time parameter"))
      return false;
    params.append(p.name, paramAttr(builder, *v));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> MLIRGen::build(const FrontendOptions &options) {
  ctx.loadDialect<mlir::tile::TileDialect, arith::ArithDialect,
                  scf::SCFDialect, func::FuncDialect, math::MathDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc(SrcLoc{1, 1}));
  builder.setInsertionPointToEnd(module->getBody());

  for (const auto &f : program.fns) {
    if (!fns.insert({f->name, f.get()}).second)
      return error(f->loc) << "redefinition of function '" << f->name << "'",
             nullptr;
    if (isReservedName(f->name) || isBuiltinFunction(f->name))
      return error(f->loc) << "'" << f->name << "' is a builtin; choose "
                           << "another function name", nullptr;
  }
  const KernelDecl *k = selectKernel(options);
  if (!k)
    return nullptr;
  llvm::StringMap<const ConstParam *> overrides;
  const KernelDecl *root = resolveInstance(*k, overrides);
  if (!root)
    return nullptr;

  scopes.clear();
  scopes.emplace_back();
  frameBase = 1;
  NamedAttrList params;
  if (!bindParams(*k, *root, overrides, options, params))
    return nullptr;
  std::string badSchedule = options.schedule.validate();
  if (!badSchedule.empty())
    return error(k->loc) << "kernel '" << k->name
                         << "': invalid schedule: " << badSchedule,
           nullptr;

  scopes.emplace_back();
  SmallVector<Type> argTypes;
  for (const KernelArg &a : root->args) {
    FailureOr<Type> t = resolveType(a.type, true);
    if (failed(t))
      return nullptr;
    if (isa<TileType>(*t))
      return error(a.type.loc) << "kernel arguments must be scalars or "
                               << "pointers", nullptr;
    argTypes.push_back(*t); // a frontend type: made signless below
  }
  SmallVector<Type> irArgTypes;
  for (Type t : argTypes)
    irArgTypes.push_back(signlessOf(t));
  auto fnType = builder.getFunctionType(irArgTypes, {});
  auto func = func::FuncOp::create(builder, loc(k->loc), k->name, fnType);
  func->setAttr(mlir::tile::kKernelAttr, builder.getUnitAttr());
  func->setAttr(mlir::tile::kParamsAttr, params.getDictionary(&ctx));
  func->setAttr(mlir::tile::kScheduleAttr,
                mlir::tile::toAttr(&ctx, options.schedule));
  Block *entry = func.addEntryBlock();
  for (auto [i, a] : llvm::enumerate(root->args)) {
    entry->getArgument(i).setLoc(loc(a.loc));
    // The parameter's source name travels to the manifest.
    func.setArgAttr(i, "tile.name", builder.getStringAttr(a.name));
    // The IR is signless: an unsigned argument's source type travels to
    // the manifest ("u32", "ptr<u8>").
    if (isUnsignedType(argTypes[i]))
      func.setArgAttr(i, "tile.type",
                      builder.getStringAttr(describe(argTypes[i])));
    if (!declare(a.name, a.loc, typed(entry->getArgument(i), argTypes[i]),
                 false, "a kernel argument"))
      return nullptr;
  }
  builder.setInsertionPointToStart(entry);
  if (!genKernelBody(root->body, 0))
    return nullptr;
  func::ReturnOp::create(builder, loc(k->loc));

  if (failed(verify(*module)))
    return nullptr;
  return module;
}

