//===- InterleaveExp.cpp - softmax chains interleaved in the PTX ----------===//
//
// The NVPTX backend emits an element-wise chain over a tile one op at a
// time: all 64 `fma` of a thread's scores, then all 64 `ex2`, then the row
// sums, then the 16-bit packs. ptxas keeps much of that order, so a warp
// issues its `MUFU.EX2`s back to back and waits on the special-function
// unit while the row sums and packs queue behind them (H100 profile,
// measured with ncu). Here, in each straight-line run of the PTX:
//
//   1. each `fma.rn.f32` / `ex2.approx` sinks to just before its first
//      reader (so `fma_i; ex2_i` sit next to the sum that takes them), then
//   2. each `add.rn.f32` / `cvt.rn.{bf16x2,f16x2}.f32` rises to just after
//      the last definition of its sources,
//
// which gives ptxas `fma, ex2, add, ..., cvt` per element. Nothing moves
// across a label, branch, barrier, memory access, asm block with braces or
// anything it reads or writes (other instructions count as reading and
// writing every register they name). Values do not change; only the order.
//
// Applied where the exponentials are what limits: fewer than
// kMaxMacsPerExp multiply-adds per thread for each `ex2` in the kernel
// (flash_fwd at D = 64: 128, where it measured +4-10 %; at D = 128: 256,
// where it did not help, so it stays off).
//
//===----------------------------------------------------------------------===//
#include "lib/Target/InterleaveExp.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

using namespace tile;
using llvm::StringRef;

namespace {
constexpr int64_t kMaxMacsPerExp = 192;

enum class Kind { Barrier, Other, Sink, Rise };

struct Unit {
  llvm::SmallVector<StringRef, 3> lines; // one line, or an inline asm block
  std::string text;                      // the instruction (see below)
  Kind kind = Kind::Other;
  StringRef def;                         // Sink / Rise: the one result
  llvm::SmallVector<StringRef, 4> regs;  // Sink / Rise: sources; else all
};

/// The instruction of a unit: its lines without comments, trimmed.
std::string instruction(const Unit &u) {
  std::string s;
  for (StringRef l : u.lines) {
    StringRef t = l.trim();
    if (!t.empty() && !t.starts_with("//"))
      s += (s.empty() ? "" : " ") + t.str();
  }
  return s;
}

/// Register names (%r12, %rd3, %p1, ...) of `text`, in order.
llvm::SmallVector<StringRef, 4> registers(StringRef text) {
  llvm::SmallVector<StringRef, 4> out;
  for (size_t i = text.find('%'); i != StringRef::npos; i = text.find('%', i + 1)) {
    size_t e = i + 1;
    while (e < text.size() && llvm::isAlpha(text[e]))
      ++e;
    size_t d = e;
    while (d < text.size() && llvm::isDigit(text[d]))
      ++d;
    if (e > i + 1 && d > e)
      out.push_back(text.slice(i, d));
  }
  return out;
}

/// Sets u.text, u.kind, u.def and u.regs (which point into u.text: `u`
/// must not move afterwards).
void classify(Unit &u) {
  u.text = instruction(u);
  StringRef text = u.text;
  static const char *barriers[] = {"bar", "wgmma", "ld.", "st.", "atom", "red.",
                                   "fence", "elect", "shfl", "cp.", "bra", "ret",
                                   "call", "setmaxnreg", "tensormap", "{", "}"};
  if (text.empty() || text.ends_with(":") || text.starts_with("@") ||
      text.starts_with("."))
    return void(u.kind = Kind::Barrier);
  for (const char *b : barriers)
    if (text.contains(b))
      return void(u.kind = Kind::Barrier);
  size_t sp = text.find_first_of(" \t");
  StringRef op = text.take_front(sp), args = text.drop_front(sp);
  u.regs = registers(args);
  bool sink = op == "fma.rn.f32" || op.starts_with("ex2.approx");
  bool rise = op == "add.rn.f32" || op == "cvt.rn.bf16x2.f32" ||
              op == "cvt.rn.f16x2.f32";
  if ((sink || rise) && u.regs.size() >= 2) {
    u.kind = sink ? Kind::Sink : Kind::Rise;
    u.def = u.regs.front();
    u.regs.erase(u.regs.begin());
  }
}

/// Whether `u` (Sink or Rise) may move past `other`.
bool canPass(const Unit &u, const Unit &other) {
  if (other.kind == Kind::Barrier)
    return false;
  auto names = [](const Unit &x, StringRef r) {
    return x.def == r || llvm::is_contained(x.regs, r);
  };
  if (names(other, u.def))
    return false; // reads or writes u's result
  if (other.def.empty()) {
    for (StringRef r : u.regs) // Other: may write any register it names
      if (names(other, r))
        return false;
    return true;
  }
  return !llvm::is_contained(u.regs, other.def); // writes one of u's sources
}

/// Multiply-adds per thread of the tensor-core instructions of `ptx`:
/// `wgmma.mma_async.sync.aligned.mMnNkK` (a warpgroup's) and
/// `mma.sync.aligned.mMnNkK` (a warp's).
int64_t macsPerThread(StringRef ptx) {
  const StringRef tag = ".sync.aligned.m";
  int64_t macs = 0;
  for (size_t i = ptx.find(tag); i != StringRef::npos; i = ptx.find(tag, i + 1)) {
    StringRef before = ptx.take_front(i);
    int64_t threads = before.ends_with("wgmma.mma_async") ? 128
                      : before.ends_with("mma")           ? 32
                                                          : 0;
    StringRef rest = ptx.drop_front(i + tag.size());
    int64_t m = 0, n = 0, k = 0;
    if (!threads || rest.consumeInteger(10, m) || !rest.consume_front("n") ||
        rest.consumeInteger(10, n) || !rest.consume_front("k") ||
        rest.consumeInteger(10, k))
      continue;
    macs += m * n * k / threads;
  }
  return macs;
}
} // namespace

bool target::interleaveExpChains(std::string &ptx) {
  int64_t exps = 0;
  for (size_t i = ptx.find("ex2.approx"); i != std::string::npos;
       i = ptx.find("ex2.approx", i + 1))
    ++exps;
  if (!exps || macsPerThread(ptx) >= kMaxMacsPerExp * exps)
    return false;

  llvm::SmallVector<StringRef> lines;
  StringRef(ptx).split(lines, '\n');
  std::vector<Unit> units;
  for (size_t i = 0; i < lines.size(); ++i) {
    Unit u;
    u.lines.push_back(lines[i]);
    if (lines[i].trim() == "// begin inline asm") {
      while (i + 1 < lines.size() && lines[i].trim() != "// end inline asm")
        u.lines.push_back(lines[++i]);
    }
    units.push_back(std::move(u));
  }
  for (Unit &u : units) // in place, after the vector stopped growing
    classify(u);

  std::vector<size_t> order(units.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // 1. Sink, last first, to just before the first unit it cannot pass.
  for (size_t k = order.size(); k-- > 0;) {
    const Unit &u = units[order[k]];
    if (u.kind != Kind::Sink)
      continue;
    size_t j = k + 1;
    while (j < order.size() && canPass(u, units[order[j]]))
      ++j;
    if (j - 1 > k) {
      size_t id = order[k];
      order.erase(order.begin() + k);
      order.insert(order.begin() + (j - 1), id);
    }
  }
  // 2. Rise, first first, to just after the last unit it cannot pass.
  for (size_t k = 0; k < order.size(); ++k) {
    const Unit &u = units[order[k]];
    if (u.kind != Kind::Rise)
      continue;
    size_t j = k;
    while (j > 0 && canPass(u, units[order[j - 1]]))
      --j;
    if (j < k) {
      size_t id = order[k];
      order.erase(order.begin() + k);
      order.insert(order.begin() + j, id);
    }
  }

  std::string out;
  out.reserve(ptx.size());
  for (size_t n = 0; n < order.size(); ++n)
    for (size_t l = 0; l < units[order[n]].lines.size(); ++l) {
      if (!out.empty())
        out += '\n';
      out += units[order[n]].lines[l].str();
    }
  ptx = std::move(out);
  return true;
}
