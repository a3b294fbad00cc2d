//===- Fp8ToGPU.cpp - fp8 registers: conversions, the 8-bit A fragment ----===//
//
// e4m3 here is the "FN" format (bias 7, no infinities, S.1111.111 is NaN,
// largest finite 448); e5m2 is IEEE-like (bias 15, infinities, largest
// finite 57344). Narrowing rounds to nearest even and saturates: finite
// values and infinities beyond the largest finite value become it, NaN
// stays NaN (PTX `cvt.rn.satfinite`, the OCP/NVIDIA convention).
//
// Cost: on sm_90a one `cvt` per pair of elements (f16x2 <- e4m3x2 plus two
// f16 -> f32, or e4m3x2 <- two f32). sm_80 has no fp8 conversions; the same
// results come from integer and f32 arithmetic on the bits (about 12
// instructions per element), which the GPU test compares with the hardware
// bit for bit.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// The format's constants.
struct Fp8Format {
  int64_t mantBits;  // 3 (e4m3) or 2 (e5m2)
  int64_t expBias;   // 7 or 15
  int64_t maxFinite; // code of the largest finite magnitude: 0x7e or 0x7b
  int64_t nanCode;   // 0x7f for both
  bool hasInf;       // e5m2: exponent all ones with mantissa 0
  explicit Fp8Format(Type t)
      : mantBits(isa<Float8E4M3FNType>(t) ? 3 : 2),
        expBias(isa<Float8E4M3FNType>(t) ? 7 : 15),
        maxFinite(isa<Float8E4M3FNType>(t) ? 0x7e : 0x7b), nanCode(0x7f),
        hasInf(!isa<Float8E4M3FNType>(t)) {}
  /// Smallest normal magnitude: 2^(1 - bias).
  double minNormal() const { return std::ldexp(1.0, int(1 - expBias)); }
  /// Value of one subnormal step: 2^(1 - bias - mantBits).
  double subnormalStep() const {
    return std::ldexp(1.0, int(1 - expBias - mantBits));
  }
  double maxValue() const {
    int64_t e = (maxFinite >> mantBits) - expBias;
    double m = 1.0 + double(maxFinite & ((1 << mantBits) - 1)) /
                         double(1 << mantBits);
    return std::ldexp(m, int(e));
  }
  std::string ptxName() const { return mantBits == 3 ? "e4m3" : "e5m2"; }
};

struct VecBuilder {
  OpBuilder &b;
  Location loc;
  int64_t n;
  VectorType ty(Type e) const { return VectorType::get({n}, e); }
  Value splatI(int64_t v, unsigned w = 32) const {
    auto t = ty(b.getIntegerType(w));
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getIntegerAttr(b.getIntegerType(w), v)));
  }
  Value splatF(double v) const {
    auto t = ty(b.getF32Type());
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getF32FloatAttr(float(v))));
  }
  Value bitsOf(Value f32) const {
    return arith::BitcastOp::create(b, loc, ty(b.getI32Type()), f32);
  }
  Value floatOf(Value i32) const {
    return arith::BitcastOp::create(b, loc, ty(b.getF32Type()), i32);
  }
  Value andI(Value x, int64_t m) const {
    return arith::AndIOp::create(b, loc, x, splatI(m));
  }
  Value shr(Value x, int64_t s) const {
    return arith::ShRUIOp::create(b, loc, x, splatI(s));
  }
  Value shl(Value x, int64_t s) const {
    return arith::ShLIOp::create(b, loc, x, splatI(s));
  }
  Value cmpI(arith::CmpIPredicate p, Value x, int64_t v) const {
    return arith::CmpIOp::create(b, loc, p, x, splatI(v));
  }
  Value sel(Value c, Value t, Value f) const {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
};

/// Software fp8 -> f32 (`codes`: vector<n x i32> holding the byte).
Value softExtend(VecBuilder &v, Value codes, const Fp8Format &f) {
  OpBuilder &b = v.b;
  int64_t expMask = (0x7f >> f.mantBits);
  Value sign = v.shl(v.shr(codes, 7), 31);
  Value exp = v.andI(v.shr(codes, f.mantBits), expMask);
  Value mant = v.andI(codes, (1 << f.mantBits) - 1);
  // Normal: rebias the exponent, move the mantissa to the top of f32's.
  Value normal = arith::OrIOp::create(
      b, v.loc, v.shl(arith::AddIOp::create(b, v.loc, exp, v.splatI(127 - f.expBias)), 23),
      v.shl(mant, 23 - f.mantBits));
  if (f.hasInf) // exponent all ones: infinity or NaN (exponent 255)
    normal = v.sel(v.cmpI(arith::CmpIPredicate::eq, exp, expMask),
                   arith::OrIOp::create(b, v.loc, v.splatI(0x7f800000),
                                        v.shl(mant, 23 - f.mantBits)),
                   normal);
  else // S.1111.111: NaN
    normal = v.sel(v.cmpI(arith::CmpIPredicate::eq, v.andI(codes, 0x7f), f.nanCode),
                   v.splatI(0x7fc00000), normal);
  // Subnormal (exponent 0): mantissa x step, exact in f32.
  Value sub = v.bitsOf(arith::MulFOp::create(
      b, v.loc, arith::UIToFPOp::create(b, v.loc, v.ty(b.getF32Type()), mant),
      v.splatF(f.subnormalStep())));
  Value mag = v.sel(v.cmpI(arith::CmpIPredicate::eq, exp, 0), sub, normal);
  return v.floatOf(arith::OrIOp::create(b, v.loc, mag, sign));
}

/// Software f32 -> fp8 code (vector<n x i32>).
Value softNarrow(VecBuilder &v, Value x, const Fp8Format &f) {
  OpBuilder &b = v.b;
  Value bits = v.bitsOf(x);
  Value sign = v.shl(v.shr(bits, 31), 7);
  Value absBits = v.andI(bits, 0x7fffffff);
  Value a = v.floatOf(absBits);
  // Normal: round the f32 mantissa to nearest even at the fp8 precision,
  // then rebias (a carry moves into the exponent as it should).
  int64_t drop = 23 - f.mantBits;
  Value odd = v.andI(v.shr(absBits, drop), 1);
  Value rounded = arith::AddIOp::create(
      b, v.loc, absBits,
      arith::AddIOp::create(b, v.loc, v.splatI((int64_t(1) << (drop - 1)) - 1), odd));
  Value normal = arith::SubIOp::create(
      b, v.loc, v.shr(rounded, drop),
      v.splatI((127 - f.expBias) << f.mantBits));
  // Subnormal: magnitude / step, rounded to nearest even (up to the
  // smallest normal's code, which follows on) by adding and subtracting
  // 2^23: f32 addition rounds to nearest even, and the sum keeps no
  // fraction bits (scaled < 2^mantBits + 1).
  Value scaled = arith::MulFOp::create(b, v.loc, a, v.splatF(1.0 / f.subnormalStep()));
  Value magic = v.splatF(8388608.0);
  Value whole = arith::SubFOp::create(
      b, v.loc, arith::AddFOp::create(b, v.loc, scaled, magic), magic);
  Value sub = arith::FPToUIOp::create(b, v.loc, v.ty(b.getI32Type()), whole);
  auto cmpF = [&](arith::CmpFPredicate p, double c) {
    return arith::CmpFOp::create(b, v.loc, p, a, v.splatF(c));
  };
  Value code = v.sel(cmpF(arith::CmpFPredicate::OLT, f.minNormal()), sub, normal);
  code = v.sel(cmpF(arith::CmpFPredicate::OGE, f.maxValue()), v.splatI(f.maxFinite),
               code);
  // NaN of either sign becomes the canonical positive 0x7f, as `cvt` does.
  code = arith::OrIOp::create(b, v.loc, code, sign);
  return v.sel(arith::CmpFOp::create(b, v.loc, arith::CmpFPredicate::UNO, x, x),
               v.splatI(f.nanCode), code);
}
} // namespace

Value lowering::fp8ToF32(OpBuilder &b, Location loc, Value x, Type fp8,
                         bool hardware) {
  int64_t n = cast<VectorType>(x.getType()).getNumElements();
  Fp8Format f(fp8);
  VecBuilder v{b, loc, n};
  Value bytes = vector::BitCastOp::create(b, loc, v.ty(b.getI8Type()), x);
  if (!hardware || n % 2)
    return softExtend(v, arith::ExtUIOp::create(b, loc, v.ty(b.getI32Type()), bytes), f);
  // Pairs of bytes -> f16x2 -> two f32.
  Value pairs = vector::BitCastOp::create(
      b, loc, VectorType::get({n / 2}, b.getI16Type()), bytes);
  SmallVector<Value> halves;
  for (int64_t i = 0; i < n / 2; ++i) {
    Value p = vector::ExtractOp::create(b, loc, pairs, ArrayRef<int64_t>{i});
    Value w = ptx(b, loc, b.getI32Type(), ValueRange{p},
                  "cvt.rn.f16x2." + f.ptxName() + "x2 $0, $1;", "=r,h");
    halves.push_back(w);
  }
  Value words = vector::FromElementsOp::create(
      b, loc, VectorType::get({n / 2}, b.getI32Type()), halves);
  Value f16s = vector::BitCastOp::create(b, loc, v.ty(b.getF16Type()), words);
  return arith::ExtFOp::create(b, loc, v.ty(b.getF32Type()), f16s);
}

Value lowering::f32ToFp8(OpBuilder &b, Location loc, Value x, Type fp8,
                         bool hardware) {
  int64_t n = cast<VectorType>(x.getType()).getNumElements();
  Fp8Format f(fp8);
  VecBuilder v{b, loc, n};
  if (!hardware || n % 2) {
    Value codes = softNarrow(v, x, f);
    Value bytes = arith::TruncIOp::create(b, loc, v.ty(b.getI8Type()), codes);
    return vector::BitCastOp::create(b, loc, v.ty(fp8), bytes);
  }
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < n; i += 2) {
    Value lo = vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{i});
    Value hi = vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{i + 1});
    // The first source goes to the upper byte.
    pairs.push_back(ptx(b, loc, b.getI16Type(), ValueRange{hi, lo},
                        "cvt.rn.satfinite." + f.ptxName() + "x2.f32 $0, $1, $2;",
                        "=h,f,f"));
  }
  Value halves = vector::FromElementsOp::create(
      b, loc, VectorType::get({n / 2}, b.getI16Type()), pairs);
  return vector::BitCastOp::create(b, loc, v.ty(fp8), halves);
}

/// 8-bit elements from the accumulator layout (a product's result, e.g. P
/// cast to fp8) to the 8-bit A fragment (getFp8DotALayout), inside quads of
/// lanes: the thread at quad position t wants columns 4t..4t+3 of each
/// 16-column block, which quad positions 2(t & 1) and 2(t & 1) + 1 hold in
/// their pairs at columns +0 and (for t >= 2) +8. Each sender packs its
/// four bytes of a block (columns 0, 1, 8, 9) in a word; each receiver
/// takes two words (shfl.idx) and keeps the half it needs of each: two
/// shuffles and a byte select per four elements, no shared memory. nullopt
/// for other layouts.
std::optional<SmallVector<Value>>
lowering::accumulatorToFp8A(OpBuilder &b, Location loc, KernelInfo &k,
                  ArrayRef<Value> vals, Type elt, LayoutAttr src,
                  LayoutAttr dst) {
  static const int64_t accLanes[] = {0, 2, 0, 4, 1, 0, 2, 0, 4, 0};
  static const int64_t fp8Lanes[] = {0, 4, 0, 8, 1, 0, 2, 0, 4, 0};
  if (elt.getIntOrFloatBitWidth() != 8 || src.getRank() != 2 ||
      !llvm::equal(src.getLanes(), accLanes) ||
      !llvm::equal(dst.getLanes(), fp8Lanes) ||
      !llvm::equal(src.getWarps(), dst.getWarps()) || dst.getNumRegs() % 4 ||
      dst.getNumRegs() != src.getNumRegs())
    return std::nullopt;
  RegIndex si(src);
  // Per group of four destination registers (columns c..c+3 of a row, c a
  // multiple of 16 before the lane's 4t): the source registers of columns
  // c + {0, 1, 8, 9}.
  SmallVector<SmallVector<int64_t>> groups;
  for (int64_t r = 0; r < dst.getNumRegs(); r += 4) {
    SmallVector<int64_t> rc = regCoords(dst, r);
    if (rc[1] % 16)
      return std::nullopt;
    for (int64_t j = 1; j < 4; ++j) {
      SmallVector<int64_t> c = regCoords(dst, r + j);
      if (c[0] != rc[0] || c[1] != rc[1] + j)
        return std::nullopt;
    }
    SmallVector<int64_t> from;
    for (int64_t dc : {0, 1, 8, 9}) {
      int64_t s = si.at(rc[0], rc[1] + dc);
      if (s < 0)
        return std::nullopt;
      from.push_back(s);
    }
    groups.push_back(from);
  }
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  Value quad = arith::AndIOp::create(b, loc, k.lane, c32(3));
  Value base = arith::SubIOp::create(b, loc, k.lane, quad);
  Value first = arith::AddIOp::create(
      b, loc, base,
      arith::ShLIOp::create(b, loc, arith::AndIOp::create(b, loc, quad, c32(1)),
                            c32(1)));
  Value second = arith::AddIOp::create(b, loc, first, c32(1));
  Value upper = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, quad,
                                      c32(2));
  Value width = c32(32);
  SmallVector<Value> out;
  for (ArrayRef<int64_t> from : groups) {
    Value word = toWords(b, loc,
                         {vals[from[0]], vals[from[1]], vals[from[2]],
                          vals[from[3]]},
                         elt, 1)[0];
    auto take = [&](Value lane) {
      return gpu::ShuffleOp::create(b, loc, word, lane, width,
                                    gpu::ShuffleMode::IDX)
          .getShuffleResult();
    };
    Value wa = take(first), wb = take(second);
    // Low halves (columns +0, +1) for quad positions 0, 1; high (+8, +9)
    // for 2, 3: bytes [wa.h0, wa.h1, wb.h0, wb.h1].
    Value lo = arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, wa, c32(0xffff)),
        arith::ShLIOp::create(b, loc, wb, c32(16)));
    Value hi = arith::OrIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, wa, c32(16)),
        arith::AndIOp::create(b, loc, wb, c32(int64_t(0xffff0000))));
    Value w = arith::SelectOp::create(b, loc, upper, hi, lo);
    llvm::append_range(out, fromWords(b, loc, {w}, elt, 4));
  }
  return out;
}

Value lowering::castFp8(OpBuilder &b, Location loc, Value x, Type from,
                        Type to, VectorType vt, bool hardware) {
  if (from == to)
    return x;
  auto f32v = VectorType::get(vt.getShape(), b.getF32Type());
  Value w = x;
  if (isFp8(from))
    w = fp8ToF32(b, loc, x, from, hardware);
  else if (!from.isF32())
    w = arith::ExtFOp::create(b, loc, f32v, x);
  if (isFp8(to))
    return f32ToFp8(b, loc, w, to, hardware);
  if (to.isF32())
    return w;
  if (to.getIntOrFloatBitWidth() < 32)
    return arith::TruncFOp::create(b, loc, vt, w);
  return arith::ExtFOp::create(b, loc, vt, w);
}
