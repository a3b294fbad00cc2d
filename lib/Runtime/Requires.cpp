//===- Requires.cpp - evaluate a kernel's require(...) before its launch --===//
//
// A requirement is an integer expression over the kernel's scalar
// arguments, written by tilec (lib/Frontend/MLIRGenRequire.cpp) as
// space-separated prefix tokens:
//
//   aN      argument N (i32, u32, i64, u64; or f32 under a float comparison)
//   #V      a constant (decimal, sign-extended from its width)
//   %F      a float constant (C99 hexadecimal, e.g. %0x1p-3: exact)
//   OP:W    an operation on W-bit values: add sub mul divs divu rems remu
//           and or xor shl shrs shru maxs maxu mins minu (two operands),
//           eq ne slt sle sgt sge ult ule ugt uge (two; W is the operands'
//           width, the result is a bool), zext:W (one: from W bits),
//           trunc:W (one: to W bits)
//   sel     c ? a : b (three operands)
//   fOP:32  a float comparison (two f32 operands, arguments or constants;
//           OP as MLIR's cmpf: oeq one olt ole ogt oge ord, and ueq une
//           ult ule ugt uge uno, true also where an operand is NaN)
//
// Values are held in 64 bits, sign-extended from their width, and every
// result wraps to its width as the kernel's own arithmetic does (a bool is
// 0 or -1). What the kernel's code would leave undefined (a division by
// zero, a shift by the width or more) makes the value undefined; `and` and
// `or` of bools, and `sel`, ignore an undefined operand they do not need
// (`heads_kv > 0 && heads % heads_kv == 0` is false, not undefined, for
// heads_kv = 0). A requirement that is false or undefined refuses the
// launch. Cost: one walk of at most a few hundred tokens per launch.
//
//===----------------------------------------------------------------------===//
#include "Requires.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

namespace tile {
namespace {

struct OpInfo {
  const char *name;
  int arity;
};
constexpr OpInfo kOps[] = {
    {"add", 2},  {"sub", 2},  {"mul", 2},  {"divs", 2}, {"divu", 2},
    {"rems", 2}, {"remu", 2}, {"and", 2},  {"or", 2},   {"xor", 2},
    {"shl", 2},  {"shrs", 2}, {"shru", 2}, {"maxs", 2}, {"maxu", 2},
    {"mins", 2}, {"minu", 2}, {"eq", 2},   {"ne", 2},   {"slt", 2},
    {"sle", 2},  {"sgt", 2},  {"sge", 2},  {"ult", 2},  {"ule", 2},
    {"ugt", 2},  {"uge", 2},  {"zext", 1}, {"trunc", 1}, {"sel", 3},
    {"foeq", 2}, {"fone", 2}, {"folt", 2}, {"fole", 2}, {"fogt", 2},
    {"foge", 2}, {"ford", 2}, {"fueq", 2}, {"fune", 2}, {"fult", 2},
    {"fule", 2}, {"fugt", 2}, {"fuge", 2}, {"funo", 2}};

struct Node {
  enum Kind { Arg, Const, FloatConst, Op } kind = Const;
  std::string op;
  unsigned width = 64;
  std::int64_t value = 0; ///< Const: the value; Arg: the argument index
  double f = 0;           ///< FloatConst: the value
  std::vector<int> kids;
};

/// Parses the whole of `expr` into `nodes` (the root is nodes[0]).
class Parser {
public:
  Parser(const std::string &expr, std::size_t numParams)
      : expr(expr), numParams(numParams) {}
  std::vector<Node> nodes;
  std::string error;

  bool parse() {
    if (node(0) < 0)
      return false;
    if (pos < expr.size())
      return fail("trailing tokens after the expression");
    return true;
  }

private:
  const std::string &expr;
  std::size_t numParams;
  std::size_t pos = 0;

  bool fail(const std::string &m) {
    if (error.empty())
      error = m;
    return false;
  }

  std::string token() {
    while (pos < expr.size() && expr[pos] == ' ')
      ++pos;
    std::size_t start = pos;
    while (pos < expr.size() && expr[pos] != ' ')
      ++pos;
    return expr.substr(start, pos - start);
  }

  static bool integer(const std::string &s, std::int64_t &out) {
    if (s.empty() || s.size() > 20)
      return false;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || end != s.c_str() + s.size())
      return false;
    out = v;
    return true;
  }

  static bool real(const std::string &s, double &out) {
    if (s.empty() || s.size() > 40)
      return false;
    char *end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  }

  int node(unsigned depth) {
    if (depth > 256 || nodes.size() > 4096)
      return fail("the expression is nested too deeply"), -1;
    std::string t = token();
    if (t.empty())
      return fail("the expression ends early"), -1;
    int index = int(nodes.size());
    nodes.emplace_back();
    Node n;
    if (t[0] == 'a' && t.size() > 1 && t[1] >= '0' && t[1] <= '9') {
      n.kind = Node::Arg;
      if (!integer(t.substr(1), n.value) || n.value < 0 ||
          std::size_t(n.value) >= numParams)
        return fail("'" + t + "' is not a parameter index"), -1;
    } else if (t[0] == '#') {
      if (!integer(t.substr(1), n.value))
        return fail("'" + t + "' is not an integer constant"), -1;
    } else if (t[0] == '%') {
      n.kind = Node::FloatConst;
      if (!real(t.substr(1), n.f))
        return fail("'" + t + "' is not a float constant"), -1;
    } else {
      n.kind = Node::Op;
      std::size_t colon = t.find(':');
      n.op = t.substr(0, colon);
      int arity = 0;
      for (const OpInfo &o : kOps)
        if (n.op == o.name)
          arity = o.arity;
      std::int64_t w = 64;
      if (arity == 0 || (n.op == "sel") != (colon == std::string::npos) ||
          (colon != std::string::npos &&
           (!integer(t.substr(colon + 1), w) || w < 1 || w > 64)))
        return fail("unknown operation '" + t + "'"), -1;
      n.width = unsigned(w);
      for (int i = 0; i < arity; ++i) {
        int kid = node(depth + 1);
        if (kid < 0)
          return -1;
        n.kids.push_back(kid);
      }
    }
    nodes[std::size_t(index)] = std::move(n);
    return index;
  }
};

/// A value (an integer, or a float: `isFloat`, in `f`), or undefined.
struct Result {
  std::int64_t v = 0;
  bool undefined = false;
  const char *why = nullptr;
  bool isFloat = false;
  double f = 0;
};

/// A float comparison of `x` and `y` (`pred` as MLIR's cmpf, without the
/// leading 'f').
bool compareFloats(const std::string &pred, double x, double y) {
  bool unordered = std::isnan(x) || std::isnan(y);
  if (pred == "ord") return !unordered;
  if (pred == "uno") return unordered;
  if (unordered)
    return pred[0] == 'u';
  std::string p = pred.substr(1);
  if (p == "eq") return x == y;
  if (p == "ne") return x != y;
  if (p == "lt") return x < y;
  if (p == "le") return x <= y;
  if (p == "gt") return x > y;
  return x >= y; // ge
}

std::int64_t wrap(std::uint64_t v, unsigned w) {
  if (w >= 64)
    return std::int64_t(v);
  unsigned s = 64 - w;
  return std::int64_t(v << s) >> s;
}
std::uint64_t unsignedOf(std::int64_t v, unsigned w) {
  return w >= 64 ? std::uint64_t(v) : std::uint64_t(v) & ((1ull << w) - 1);
}

class Evaluator {
public:
  Evaluator(const std::vector<Node> &nodes, const std::vector<KernelArg> &args)
      : nodes(nodes), args(args) {}

  Result eval(int i) {
    const Node &n = nodes[std::size_t(i)];
    if (n.kind == Node::Const)
      return {n.value};
    if (n.kind == Node::FloatConst)
      return {0, false, nullptr, true, n.f};
    if (n.kind == Node::Arg) {
      const KernelArg &a = args[std::size_t(n.value)];
      switch (a.kind) {
      case KernelArg::Kind::I32: return {a.value.i32};
      case KernelArg::Kind::U32: return {std::int32_t(a.value.u32)};
      case KernelArg::Kind::I64: return {a.value.i64};
      case KernelArg::Kind::U64: return {std::int64_t(a.value.u64)};
      case KernelArg::Kind::F32: return {0, false, nullptr, true, a.value.f32};
      default: return {0, true, "a pointer argument"};
      }
    }
    unsigned w = n.width;
    if (n.op == "sel") {
      Result c = eval(n.kids[0]);
      return c.undefined ? c : eval(n.kids[c.v ? 1 : 2]);
    }
    Result a = eval(n.kids[0]);
    if (n.op == "zext")
      return a.undefined ? a : Result{std::int64_t(unsignedOf(a.v, w))};
    if (n.op == "trunc")
      return a.undefined ? a : Result{wrap(std::uint64_t(a.v), w)};
    Result b = eval(n.kids[1]);
    if (n.op[0] == 'f') {
      if (a.undefined || b.undefined)
        return a.undefined ? a : b;
      if (!a.isFloat || !b.isFloat)
        return {0, true, "a float comparison of an integer"};
      return {compareFloats(n.op.substr(1), a.f, b.f) ? -1 : 0};
    }
    if (a.isFloat || b.isFloat)
      return {0, true, "integer arithmetic on a float"};
    // Bools: false && x is false and true || x is true, x undefined or not.
    if (w == 1 && (n.op == "and" || n.op == "or")) {
      std::int64_t absorbing = n.op == "and" ? 0 : -1;
      if ((!a.undefined && a.v == absorbing) || (!b.undefined && b.v == absorbing))
        return {absorbing};
    }
    if (a.undefined)
      return a;
    if (b.undefined)
      return b;
    return apply(n.op, w, a.v, b.v);
  }

private:
  const std::vector<Node> &nodes;
  const std::vector<KernelArg> &args;

  static Result apply(const std::string &op, unsigned w, std::int64_t x,
                      std::int64_t y) {
    std::uint64_t ux = unsignedOf(x, w), uy = unsignedOf(y, w);
    auto out = [&](std::uint64_t v) { return Result{wrap(v, w)}; };
    auto cmp = [](bool c) { return Result{c ? -1 : 0}; };
    if (op == "add") return out(std::uint64_t(x) + std::uint64_t(y));
    if (op == "sub") return out(std::uint64_t(x) - std::uint64_t(y));
    if (op == "mul") return out(std::uint64_t(x) * std::uint64_t(y));
    if (op == "divs" || op == "rems") {
      if (y == 0)
        return {0, true, "division by zero"};
      if (y == -1) // x / -1 overflows for the width's minimum: wraps to it
        return op == "divs" ? out(0 - std::uint64_t(x)) : Result{0};
      return op == "divs" ? out(std::uint64_t(x / y)) : out(std::uint64_t(x % y));
    }
    if (op == "divu" || op == "remu") {
      if (uy == 0)
        return {0, true, "division by zero"};
      return out(op == "divu" ? ux / uy : ux % uy);
    }
    if (op == "and") return out(std::uint64_t(x & y));
    if (op == "or") return out(std::uint64_t(x | y));
    if (op == "xor") return out(std::uint64_t(x ^ y));
    if (op == "shl" || op == "shrs" || op == "shru") {
      if (uy >= w)
        return {0, true, "a shift by the width or more"};
      if (op == "shl") return out(ux << uy);
      if (op == "shru") return out(ux >> uy);
      return {x >> uy}; // x is sign-extended already
    }
    if (op == "maxs") return {std::max(x, y)};
    if (op == "mins") return {std::min(x, y)};
    if (op == "maxu") return out(std::max(ux, uy));
    if (op == "minu") return out(std::min(ux, uy));
    if (op == "eq") return cmp(x == y);
    if (op == "ne") return cmp(x != y);
    if (op == "slt") return cmp(x < y);
    if (op == "sle") return cmp(x <= y);
    if (op == "sgt") return cmp(x > y);
    if (op == "sge") return cmp(x >= y);
    if (op == "ult") return cmp(ux < uy);
    if (op == "ule") return cmp(ux <= uy);
    if (op == "ugt") return cmp(ux > uy);
    return cmp(ux >= uy); // uge
  }
};

std::string argValue(const KernelArg &a) {
  switch (a.kind) {
  case KernelArg::Kind::I32: return std::to_string(a.value.i32);
  case KernelArg::Kind::U32: return std::to_string(a.value.u32);
  case KernelArg::Kind::I64: return std::to_string(a.value.i64);
  case KernelArg::Kind::U64: return std::to_string(a.value.u64);
  case KernelArg::Kind::F32: {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(a.value.f32));
    return buf;
  }
  default: return "?";
  }
}

} // namespace

bool validRequirement(const std::string &expr,
                      const std::vector<KernelParam> &params,
                      std::string &error) {
  Parser p(expr, params.size());
  if (!p.parse()) {
    error = p.error;
    return false;
  }
  for (const Node &n : p.nodes) {
    if (n.kind != Node::Arg)
      continue;
    const KernelParam &q = params[std::size_t(n.value)];
    if (q.type != "i32" && q.type != "u32" && q.type != "i64" && q.type != "u64" &&
        q.type != "f32") {
      error = "reads '" + q.name + "' of type " + q.type + ", not a scalar";
      return false;
    }
  }
  return true;
}

namespace detail {
Status checkRequirements(const Manifest &manifest,
                         const std::vector<KernelArg> &args) {
  for (const Requirement &r : manifest.requirements) {
    Parser p(r.expr, args.size());
    if (!p.parse())
      return Status::error("requirement '" + r.text + "' (" + r.loc +
                           ") of the manifest is malformed: " + p.error);
    Result v = Evaluator(p.nodes, args).eval(0);
    if (!v.undefined && v.v != 0)
      continue;
    std::set<std::int64_t> read;
    for (const Node &n : p.nodes)
      if (n.kind == Node::Arg)
        read.insert(n.value);
    std::string values;
    for (std::int64_t i : read)
      values += (values.empty() ? "" : ", ") + manifest.params[std::size_t(i)].name +
                " = " + argValue(args[std::size_t(i)]);
    return Status::error(
        "the kernel requires " + r.text + " (" + r.loc + "), which " +
        (values.empty() ? std::string("never holds")
                        : values + (v.undefined ? std::string(" leave undefined (") +
                                                      v.why + ")"
                                                : std::string(" do not meet"))));
  }
  return Status();
}
} // namespace detail
} // namespace tile
