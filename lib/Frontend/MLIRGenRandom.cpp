//===- MLIRGenRandom.cpp - Philox4x32 counter-based random numbers --------===//
//
// philox(seed, c0, c1, c2, c3, word, rounds) is Philox4x32 (Salmon et al.,
// SC'11; Random123, cuRAND, PyTorch and Triton use it) with key
// (seed & 0xffffffff, seed >> 32) and counter (c0, c1, c2, c3), expanded here
// into `rounds` (default 10) rounds of umulhi / mul / xor on u32 values:
// per element and round 2 mul.hi + 2 mul.lo + 4 xor, the key bumps are
// scalar. It is Triton's tl.philox / tl.randint / tl.rand for 32-bit
// offsets, so the same seed and offsets give the same bits as there.
// Nothing is stored: a dropout mask is recomputed from (seed, offset) in
// the backward pass instead of being saved.
//
// randint(seed, offset) = philox(seed, offset, 0, 0, 0) word 0;
// rand(seed, offset) maps it to f32 in [0, 1) as Triton's
// uint_to_uniform_float does. Four words of one counter come from four
// philox calls that differ only in `word`: CSE keeps one expansion.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/MLIRGen.h"

using namespace mlir;
using namespace ::tile::frontend;
using mlir::tile::PtrType;
using mlir::tile::TileType;

namespace {
// Random123's constants (philox.h): round multipliers and Weyl key bumps.
constexpr int64_t kMulA = 0xD2511F53, kMulB = 0xCD9E8D57;
constexpr int64_t kBumpA = 0x9E3779B9, kBumpB = 0xBB67AE85;
} // namespace

FailureOr<Val> MLIRGen::genRandom(const CallExpr &e, Slots s) {
  StringRef n = e.callee;
  bool isPhilox = n == "philox";
  unsigned roundsSlot = isPhilox ? 6 : 2;
  int64_t rounds = 10, word = 0;
  if (s[roundsSlot]) {
    FailureOr<int64_t> r = constIntArg(e, s, roundsSlot, "the number of rounds");
    if (failed(r))
      return failure();
    if (*r < 1 || *r > 16)
      return error(s[roundsSlot]->loc) << "Philox rounds must be in [1, 16], "
                                       << "got " << *r, failure();
    rounds = *r;
  }
  if (isPhilox && s[5]) {
    FailureOr<int64_t> w = constIntArg(e, s, 5, "the output word");
    if (failed(w))
      return failure();
    if (*w < 0 || *w > 3)
      return error(s[5]->loc) << "the output word must be 0, 1, 2 or 3, got "
                              << *w, failure();
    word = *w;
  }

  // The key: a scalar integer seed, as u64 (Triton: seed.to(uint64)).
  Type u32 = builder.getIntegerType(32, false), u64 = builder.getIntegerType(64, false);
  FailureOr<Val> seed = arg(s, 0);
  if (failed(seed))
    return failure();
  Type seedElem = seed->isRuntime() ? feElem(*seed) : Type();
  bool seedOk = seed->kind == Val::Int ||
                (seedElem && !shapeOf(*seed).size() && seedElem.isInteger() &&
                 !seedElem.isInteger(1));
  if (!seedOk)
    return error(s[0]->loc) << "the seed must be an integer scalar, got "
                            << describe(*seed), failure();
  SrcLoc l = e.getLoc();
  FailureOr<Val> seed64 = genCast(*seed, u64, s[0]->loc);
  if (failed(seed64))
    return failure();
  FailureOr<Val> hi64 = genBinary(BinOp::Shr, *seed64, Val::ofInt(32), l);
  if (failed(hi64))
    return failure();
  FailureOr<Val> k0 = genCast(*seed64, u32, l), k1 = genCast(*hi64, u32, l);
  if (failed(k0) || failed(k1))
    return failure();

  // The counter: four 32-bit integers (constants, scalars or tiles; i32 is
  // taken bit for bit as u32), materialized so that no step folds in the
  // frontend's 64-bit constant arithmetic.
  Val c[4];
  for (unsigned i = 0; i < 4; ++i) {
    const CallArg *slot = i == 0 ? s[1] : isPhilox ? s[1 + i] : nullptr;
    Val v = Val::ofInt(0);
    SrcLoc at = slot ? slot->loc : l;
    if (slot) {
      FailureOr<Val> x = arg(s, 1 + i);
      if (failed(x))
        return failure();
      v = *x;
    }
    if (v.isRuntime()) {
      Type el = feElem(v);
      if (!el.isInteger(32))
        return error(at) << "Philox counters and offsets must be 32-bit "
                         << "integers (i32 or u32), got " << describe(v)
                         << (el.isInteger(64) ? "; 64-bit offsets would need "
                                                "Philox4x64, not supported"
                                              : ""),
               failure();
      FailureOr<Val> b = genBitcast(v, u32, at);
      if (failed(b))
        return failure();
      v = *b;
    } else {
      FailureOr<Value> m = materialize(v, u32, at);
      if (failed(m))
        return failure();
      v = Val::of(*m, true);
    }
    c[i] = v;
  }

  auto bin = [&](BinOp op, Val a, Val b) { return genBinary(op, a, b, l); };
  for (int64_t r = 0; r < rounds; ++r) {
    FailureOr<Val> hiB = genMulHi(Val::ofInt(kMulB), c[2], l);
    FailureOr<Val> loB = bin(BinOp::Mul, Val::ofInt(kMulB), c[2]);
    FailureOr<Val> hiA = genMulHi(Val::ofInt(kMulA), c[0], l);
    FailureOr<Val> loA = bin(BinOp::Mul, Val::ofInt(kMulA), c[0]);
    if (failed(hiB) || failed(loB) || failed(hiA) || failed(loA))
      return failure();
    FailureOr<Val> x0 = bin(BinOp::BitXor, *hiB, c[1]);
    FailureOr<Val> x2 = bin(BinOp::BitXor, *hiA, c[3]);
    if (failed(x0) || failed(x2))
      return failure();
    x0 = bin(BinOp::BitXor, *x0, *k0);
    x2 = bin(BinOp::BitXor, *x2, *k1);
    if (failed(x0) || failed(x2))
      return failure();
    c[0] = *x0, c[1] = *loB, c[2] = *x2, c[3] = *loA;
    if (r + 1 == rounds)
      break;
    k0 = bin(BinOp::Add, *k0, Val::ofInt(kBumpA));
    k1 = bin(BinOp::Add, *k1, Val::ofInt(kBumpB));
    if (failed(k0) || failed(k1))
      return failure();
  }
  if (n != "rand")
    return c[word];

  // uint_to_uniform_float: as i32, fold negatives onto [0, 2^31 - 1], scale
  // by the largest float below 2^-31 so that the result stays below 1.
  FailureOr<Val> x = genBitcast(c[0], builder.getI32Type(), l);
  if (failed(x))
    return failure();
  FailureOr<Val> neg = bin(BinOp::Lt, *x, Val::ofInt(0));
  FailureOr<Val> flip = failed(neg) ? neg : genBitNot(*x, l); // -x - 1
  FailureOr<Val> folded =
      failed(flip) ? flip : genSelect(*neg, *flip, *x, l);
  FailureOr<Val> f = failed(folded) ? folded
                                    : genCast(*folded, builder.getF32Type(), l);
  if (failed(f))
    return failure();
  return bin(BinOp::Mul, *f, Val::ofFloat(4.6566127342e-10));
}
