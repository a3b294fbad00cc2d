//===- MLIRGenRequire.cpp - require(cond): a kernel's preconditions -------===//
//
// `require(c);` states what a kernel needs of its inputs. A compile-time
// `c` is checked here: false is a located error naming the kernel's
// compile-time values. A run-time `c` must be computed by integer
// arithmetic from the kernel's scalar arguments and constants (and float
// comparisons of f32 arguments and constants); it is
// recorded on the kernel (tile.requires) as a prefix expression, which the
// manifest carries and the launcher evaluates before every launch,
// refusing one that breaks it. The kernel's code does not change: the ops
// that computed `c` have no use and fold away; a conjunct `x % C == 0` on an
// integer argument tells the compiler x's divisibility (kDivisibilityAttr),
// `x > C` (C >= 0) on a float argument that x is positive (kPositiveAttr).
//
// Expression tokens (space-separated, prefix): `aN` argument N, `#V` a
// constant, `%F` a float constant (hexadecimal), `OP:W` an operation whose
// result (comparisons: operands) has W bits (float comparisons: fOP:32). Values are 64-bit, sign-extended from their width; each result
// wraps to its width as the kernel's own arithmetic would.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"
#include "lib/Frontend/RequireFacts.h"

#include "dialects/tile/Params.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <map>

using namespace mlir;
using namespace ::tile::frontend;

namespace {
/// One subexpression: its tokens, its source-like text and the precedence
/// of the text's outermost operator (higher binds tighter).
struct Enc {
  std::string expr, text;
  int prec = 12;
};

/// Binary operators: token, symbol, precedence (0: call syntax `sym(a, b)`).
struct BinInfo {
  const char *token, *symbol;
  int prec;
};

std::optional<BinInfo> binaryInfo(Operation *op, bool isBool) {
  return llvm::TypeSwitch<Operation *, std::optional<BinInfo>>(op)
      .Case([](arith::AddIOp) { return BinInfo{"add", "+", 9}; })
      .Case([](arith::SubIOp) { return BinInfo{"sub", "-", 9}; })
      .Case([](arith::MulIOp) { return BinInfo{"mul", "*", 10}; })
      .Case([](arith::DivSIOp) { return BinInfo{"divs", "/", 10}; })
      .Case([](arith::DivUIOp) { return BinInfo{"divu", "/", 10}; })
      .Case([](arith::RemSIOp) { return BinInfo{"rems", "%", 10}; })
      .Case([](arith::RemUIOp) { return BinInfo{"remu", "%", 10}; })
      .Case([&](arith::AndIOp) {
        return isBool ? BinInfo{"and", "&&", 2} : BinInfo{"and", "&", 6};
      })
      .Case([&](arith::OrIOp) {
        return isBool ? BinInfo{"or", "||", 1} : BinInfo{"or", "|", 4};
      })
      .Case([](arith::XOrIOp) { return BinInfo{"xor", "^", 5}; })
      .Case([](arith::ShLIOp) { return BinInfo{"shl", "<<", 8}; })
      .Case([](arith::ShRSIOp) { return BinInfo{"shrs", ">>", 8}; })
      .Case([](arith::ShRUIOp) { return BinInfo{"shru", ">>", 8}; })
      .Case([](arith::MaxSIOp) { return BinInfo{"maxs", "max", 0}; })
      .Case([](arith::MaxUIOp) { return BinInfo{"maxu", "max", 0}; })
      .Case([](arith::MinSIOp) { return BinInfo{"mins", "min", 0}; })
      .Case([](arith::MinUIOp) { return BinInfo{"minu", "min", 0}; })
      .Default([](Operation *) { return std::nullopt; });
}

const char *const kCmp[][2] = {
    {"eq", "=="}, {"ne", "!="}, {"slt", "<"}, {"sle", "<="}, {"sgt", ">"},
    {"sge", ">="}, {"ult", "<"}, {"ule", "<="}, {"ugt", ">"}, {"uge", ">="}};

std::string paren(const Enc &e, int prec) {
  return e.prec < prec ? "(" + e.text + ")" : e.text;
}

unsigned widthOf(Value v) { return v.getType().getIntOrFloatBitWidth(); }

/// Encodes the def chain of a scalar integer value; on failure `bad` is the
/// op (or null: a non-argument block value) that cannot be encoded.
class Encoder {
public:
  explicit Encoder(func::FuncOp fn) : fn(fn) {}
  Operation *bad = nullptr;
  const char *why = "";

  FailureOr<Enc> encode(Value v) {
    if (++nodes > kMaxNodes) {
      why = "it is too large to check at launch (over 256 operations)";
      return failure();
    }
    if (v.getType().isF32())
      return encodeFloat(v);
    if (!v.getType().isSignlessInteger()) {
      why = "it is not computed by integer arithmetic";
      bad = v.getDefiningOp();
      return failure();
    }
    unsigned w = widthOf(v);
    if (auto arg = dyn_cast<BlockArgument>(v))
      return encodeArg(arg);
    Operation *op = v.getDefiningOp();
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto i = dyn_cast<IntegerAttr>(c.getValue());
      if (!i)
        return fail(op, "it uses a non-integer constant");
      int64_t x = i.getValue().getSExtValue();
      if (w == 1)
        return Enc{"#" + std::to_string(x), x ? "true" : "false"};
      return Enc{"#" + std::to_string(x), std::to_string(x)};
    }
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      auto pred = cmp.getPredicate();
      if (pred == arith::CmpFPredicate::AlwaysFalse ||
          pred == arith::CmpFPredicate::AlwaysTrue)
        return fail(op, "it is a constant float comparison");
      std::string name = arith::stringifyCmpFPredicate(pred).str();
      static const std::map<std::string, const char *> kSymbol = {
          {"eq", "=="}, {"ne", "!="}, {"lt", "<"},
          {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
      auto sym = kSymbol.find(name.substr(1));
      return binary(op, ("f" + name).c_str(),
                    sym == kSymbol.end() ? name.c_str() : sym->second,
                    sym == kSymbol.end() ? 0 : 3, 32);
    }
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      auto [token, symbol] =
          std::pair(kCmp[int(cmp.getPredicate())][0], kCmp[int(cmp.getPredicate())][1]);
      return binary(op, token, symbol, 3, widthOf(cmp.getLhs()));
    }
    if (auto s = dyn_cast<arith::SelectOp>(op)) {
      FailureOr<Enc> c = encode(s.getCondition());
      FailureOr<Enc> a = failed(c) ? c : encode(s.getTrueValue());
      FailureOr<Enc> b = failed(a) ? a : encode(s.getFalseValue());
      if (failed(b))
        return failure();
      return Enc{"sel " + c->expr + " " + a->expr + " " + b->expr,
                 paren(*c, 1) + " ? " + paren(*a, 1) + " : " + paren(*b, 1), 0};
    }
    if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(op)) {
      FailureOr<Enc> x = encode(op->getOperand(0));
      if (failed(x))
        return failure();
      std::string cast = "i" + std::to_string(w) + "(" + x->text + ")";
      if (isa<arith::ExtSIOp>(op)) // already sign-extended
        return Enc{x->expr, cast};
      const char *token = isa<arith::ExtUIOp>(op) ? "zext:" : "trunc:";
      unsigned bits = isa<arith::ExtUIOp>(op) ? widthOf(op->getOperand(0)) : w;
      return Enc{std::string(token) + std::to_string(bits) + " " + x->expr, cast};
    }
    if (auto info = binaryInfo(op, w == 1)) {
      // x ^ all-ones: '!' on bools, '~' on integers.
      if (isa<arith::XOrIOp>(op))
        if (auto c = op->getOperand(1).getDefiningOp<arith::ConstantOp>())
          if (auto i = dyn_cast<IntegerAttr>(c.getValue());
              i && i.getValue().isAllOnes()) {
            FailureOr<Enc> x = encode(op->getOperand(0));
            if (failed(x))
              return failure();
            return Enc{"xor:" + std::to_string(w) + " " + x->expr + " #-1",
                       std::string(w == 1 ? "!" : "~") + paren(*x, 11), 11};
          }
      return binary(op, info->token, info->symbol, info->prec, w);
    }
    return fail(op, "it is computed by an operation the launcher cannot "
                    "evaluate (only integer arithmetic, comparisons and "
                    "selects of scalar arguments and constants)");
  }

private:
  static constexpr unsigned kMaxNodes = 256;

  /// A kernel argument: `aN`, named as in the source.
  FailureOr<Enc> encodeArg(BlockArgument arg) {
    if (arg.getOwner() != &fn.getBody().front()) {
      why = "it depends on a loop variable";
      return failure();
    }
    unsigned i = arg.getArgNumber();
    auto name = fn.getArgAttrOfType<StringAttr>(i, "tile.name");
    return Enc{"a" + std::to_string(i),
               name ? name.str() : "arg" + std::to_string(i)};
  }

  /// An f32 kernel argument or constant (no float arithmetic: the launcher
  /// would have to round as the GPU does).
  FailureOr<Enc> encodeFloat(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return encodeArg(arg);
    Operation *op = v.getDefiningOp();
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
        double x = f.getValueAsDouble();
        char hex[48], text[48];
        std::snprintf(hex, sizeof hex, "%a", x);
        std::snprintf(text, sizeof text, "%g", x);
        std::string t = text;
        if (t.find_first_of(".eEn") == std::string::npos)
          t += ".0"; // 0 -> 0.0: a float, as written
        return Enc{std::string("%") + hex, t};
      }
    return fail(op, "it computes a float (only f32 arguments and constants "
                    "can be compared)");
  }
  func::FuncOp fn;
  unsigned nodes = 0;

  FailureOr<Enc> fail(Operation *op, const char *reason) {
    bad = op;
    why = reason;
    return failure();
  }

  FailureOr<Enc> binary(Operation *op, const char *token, const char *symbol,
                        int prec, unsigned w) {
    FailureOr<Enc> a = encode(op->getOperand(0));
    FailureOr<Enc> b = failed(a) ? a : encode(op->getOperand(1));
    if (failed(b))
      return failure();
    std::string expr =
        std::string(token) + ":" + std::to_string(w) + " " + a->expr + " " + b->expr;
    // An unsigned operation on a signed argument (`u32(n) > 3`: the cast
    // leaves no op behind) says so in the text.
    llvm::StringRef t(token);
    if (t.starts_with("u") || t.ends_with("u")) {
      for (auto [e, v] : {std::pair(&*a, op->getOperand(0)),
                          std::pair(&*b, op->getOperand(1))})
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && !fn.getArgAttr(arg.getArgNumber(), "tile.type"))
          e->text = "u" + std::to_string(widthOf(v)) + "(" + e->text + ")";
    }
    if (prec == 0)
      return Enc{expr, std::string(symbol) + "(" + a->text + ", " + b->text + ")"};
    return Enc{expr, paren(*a, prec) + " " + symbol + " " + paren(*b, prec + 1),
               prec};
  }
};

} // namespace

FailureOr<Val> MLIRGen::genRequire(const CallExpr &e, Slots s) {
  FailureOr<Val> c = arg(s, 0);
  if (failed(c))
    return failure();
  SrcLoc at = s[0]->loc;
  Operation *parent = builder.getInsertionBlock()->getParentOp();
  auto fn = isa<func::FuncOp>(parent) ? cast<func::FuncOp>(parent)
                                      : parent->getParentOfType<func::FuncOp>();
  if (c->kind == Val::Bool) {
    if (c->b)
      return Val();
    auto d = error(e.getLoc());
    d << "requirement does not hold";
    std::string params =
        fn ? mlir::tile::describeParams(
                 fn->getAttrOfType<DictionaryAttr>(mlir::tile::kParamsAttr))
           : std::string();
    if (!params.empty())
      d << " for the compile-time values " << params;
    return failure();
  }
  if (!c->isRuntime() || !c->value.getType().isInteger(1))
    return error(at) << "require needs a bool condition, got " << describe(*c),
           failure();
  if (parent != fn.getOperation())
    return error(e.getLoc())
               << "require with a run-time condition must be in the kernel "
                  "body, outside loops and run-time ifs: the launcher checks "
                  "it once, before the launch",
           failure();
  Encoder enc(fn);
  FailureOr<Enc> r = enc.encode(c->value);
  if (failed(r)) {
    auto d = error(at);
    d << "require: the launcher cannot check this condition: " << enc.why;
    if (enc.bad)
      d.attachNote(enc.bad->getLoc()) << "here";
    return failure();
  }
  StringRef file = files[at.file < files.size() ? at.file : 0].getValue();
  std::string where = llvm::sys::path::filename(file).str() +
                      ":" + std::to_string(at.line) + ":" + std::to_string(at.col);
  SmallVector<Attribute> all;
  if (auto old = fn->getAttrOfType<ArrayAttr>(::tile::frontend::kRequiresAttr))
    all.append(old.begin(), old.end());
  all.push_back(builder.getDictionaryAttr(
      {builder.getNamedAttr("expr", builder.getStringAttr(r->expr)),
       builder.getNamedAttr("text", builder.getStringAttr(r->text)),
       builder.getNamedAttr("loc", builder.getStringAttr(where))}));
  fn->setAttr(::tile::frontend::kRequiresAttr, builder.getArrayAttr(all));
  recordRequireFacts(fn, c->value);
  return Val();
}
