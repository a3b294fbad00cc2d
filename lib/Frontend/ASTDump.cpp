//===- ASTDump.cpp - print the AST ----------------------------------------===//
#include "lib/Frontend/ASTDump.h"

using namespace ::tile::frontend;

namespace {
class Dumper {
public:
  explicit Dumper(llvm::raw_ostream &os) : os(os) {}

  void program(const Program &p) {
    for (const Import &im : p.imports) {
      line(im.loc) << "Import \"" << im.path << "\"";
      at(im.loc);
    }
    for (const auto &f : p.fns)
      fn(*f);
    for (const auto &k : p.kernels)
      kernel(*k);
  }

private:
  llvm::raw_ostream &os;
  unsigned indent = 0;

  struct Nest {
    Dumper &d;
    explicit Nest(Dumper &d) : d(d) { d.indent += 2; }
    ~Nest() { d.indent -= 2; }
  };

  llvm::raw_ostream &line(SrcLoc loc) {
    os.indent(indent);
    return os;
  }
  void at(SrcLoc loc) { os << " @" << loc.line << ":" << loc.col << "\n"; }

  static std::string typeStr(const TypeRef &t) {
    if (t.pointee)
      return t.name + "<" + typeStr(*t.pointee) + ">";
    return t.name;
  }

  void kernel(const KernelDecl &k) {
    line(k.loc) << "Kernel " << k.name;
    if (!k.base.empty())
      os << " = " << k.base;
    at(k.loc);
    Nest n(*this);
    for (const auto &p : k.params) {
      line(p.loc) << "Param " << p.name;
      at(p.loc);
      Nest n2(*this);
      expr(*p.value);
    }
    for (const auto &a : k.args) {
      line(a.loc) << "Arg " << a.name << ": " << typeStr(a.type);
      at(a.loc);
    }
    block(k.body);
  }

  void fn(const FnDecl &f) {
    line(f.loc) << "Fn " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i)
      os << (i ? ", " : "") << f.params[i].first;
    os << ")";
    at(f.loc);
    Nest n(*this);
    block(f.body);
  }

  void block(const Body &b) {
    for (const auto &s : b)
      stmt(*s);
  }

  void stmt(const Stmt &s) {
    if (auto *l = llvm::dyn_cast<LetStmt>(&s)) {
      line(s.getLoc()) << (l->isVar ? "Var " : "Let ") << l->name;
      at(s.getLoc());
      Nest n(*this);
      expr(*l->init);
    } else if (auto *a = llvm::dyn_cast<AssignStmt>(&s)) {
      line(s.getLoc()) << "Assign " << a->name << " " << tokSpelling(a->op);
      at(s.getLoc());
      Nest n(*this);
      expr(*a->value);
    } else if (auto *e = llvm::dyn_cast<ExprStmt>(&s)) {
      line(s.getLoc()) << "ExprStmt";
      at(s.getLoc());
      Nest n(*this);
      expr(*e->expr);
    } else if (auto *f = llvm::dyn_cast<ForStmt>(&s)) {
      line(s.getLoc()) << "For " << f->var;
      at(s.getLoc());
      Nest n(*this);
      expr(*f->lo);
      expr(*f->hi);
      if (f->step)
        expr(*f->step);
      line(s.getLoc()) << "Body\n";
      Nest n2(*this);
      block(f->body);
    } else if (auto *i = llvm::dyn_cast<IfStmt>(&s)) {
      line(s.getLoc()) << "If";
      at(s.getLoc());
      Nest n(*this);
      expr(*i->cond);
      line(s.getLoc()) << "Then\n";
      {
        Nest n2(*this);
        block(i->thenBody);
      }
      if (!i->elseBody.empty()) {
        line(s.getLoc()) << "Else\n";
        Nest n2(*this);
        block(i->elseBody);
      }
    } else if (auto *w = llvm::dyn_cast<WhileStmt>(&s)) {
      line(s.getLoc()) << "While";
      at(s.getLoc());
      Nest n(*this);
      expr(*w->cond);
      line(s.getLoc()) << "Body\n";
      Nest n2(*this);
      block(w->body);
    } else if (auto *r = llvm::dyn_cast<ReturnStmt>(&s)) {
      line(s.getLoc()) << "Return";
      at(s.getLoc());
      Nest n(*this);
      if (r->value)
        expr(*r->value);
    }
  }

  void expr(const Expr &e) {
    SrcLoc loc = e.getLoc();
    if (auto *i = llvm::dyn_cast<IntExpr>(&e)) {
      line(loc) << "Int " << i->value;
      at(loc);
    } else if (auto *f = llvm::dyn_cast<FloatExpr>(&e)) {
      line(loc) << "Float " << f->value;
      at(loc);
    } else if (auto *n = llvm::dyn_cast<NameExpr>(&e)) {
      line(loc) << "Name " << n->name;
      at(loc);
    } else if (auto *u = llvm::dyn_cast<UnaryExpr>(&e)) {
      line(loc) << "Unary " << tokSpelling(u->op);
      at(loc);
      Nest nn(*this);
      expr(*u->operand);
    } else if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) {
      line(loc) << "Binary " << tokSpelling(b->op);
      at(loc);
      Nest nn(*this);
      expr(*b->lhs);
      expr(*b->rhs);
    } else if (auto *t = llvm::dyn_cast<TernaryExpr>(&e)) {
      line(loc) << "Ternary";
      at(loc);
      Nest nn(*this);
      expr(*t->cond);
      expr(*t->lhs);
      expr(*t->rhs);
    } else if (auto *c = llvm::dyn_cast<CallExpr>(&e)) {
      line(loc) << "Call " << c->callee;
      at(loc);
      Nest nn(*this);
      for (const auto &a : c->args) {
        if (!a.name.empty()) {
          line(a.loc) << "Named " << a.name;
          at(a.loc);
          Nest n3(*this);
          expr(*a.value);
        } else {
          expr(*a.value);
        }
      }
    } else if (auto *x = llvm::dyn_cast<IndexExpr>(&e)) {
      line(loc) << "Index [";
      for (size_t i = 0; i < x->newAxis.size(); ++i)
        os << (i ? ", " : "") << (x->newAxis[i] ? "None" : ":");
      os << "]";
      at(loc);
      Nest nn(*this);
      expr(*x->base);
    } else if (auto *l = llvm::dyn_cast<ListExpr>(&e)) {
      line(loc) << "List";
      at(loc);
      Nest nn(*this);
      for (const auto &x : l->elems)
        expr(*x);
    }
  }
};
} // namespace

void tile::frontend::dumpProgram(const Program &program, llvm::raw_ostream &os) {
  Dumper(os).program(program);
}
