//===- Fp8Host.h - a host model of e4m3 and e5m2 ---------------*- C++ -*-===//
//
// The fp8 formats as tilec implements them (docs/language.md#fp8): decode
// every code, encode to the nearest finite value with ties to the even
// code, saturating (past the largest finite value, infinities included,
// gives the largest finite code); NaN of either sign encodes as 0x7f, as
// `cvt.rn.satfinite` does. By exhaustive search over the 128 magnitudes:
// slow, obviously right.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <limits>

namespace tilegpu {

struct Format {
  const char *name; // the .tile type
  int mant, bias;
  bool ieee; // e5m2: infinities, exponent all ones is inf/NaN
};
inline const Format kE4m3{"f8e4m3", 3, 7, false};
inline const Format kE5m2{"f8e5m2", 2, 15, true};

inline bool isNanCode(const Format &f, unsigned c) {
  unsigned mag = c & 0x7f, expAll = 0x7f >> f.mant << f.mant;
  return f.ieee ? (mag & expAll) == expAll && (mag & ~expAll) != 0
                : mag == 0x7f;
}

/// The value of code `c` (NaN for NaN codes).
inline double decodeHost(const Format &f, unsigned c) {
  if (isNanCode(f, c))
    return std::numeric_limits<double>::quiet_NaN();
  int e = int((c & 0x7f) >> f.mant), m = int(c & ((1u << f.mant) - 1));
  double s = (c & 0x80) ? -1.0 : 1.0;
  if (f.ieee && e == (0x7f >> f.mant))
    return s * std::numeric_limits<double>::infinity();
  if (e == 0)
    return s * std::ldexp(double(m), 1 - f.bias - f.mant);
  return s * std::ldexp(1.0 + double(m) / double(1 << f.mant), e - f.bias);
}

/// Nearest finite code, ties to the even code, saturating; NaN: 0x7f.
inline unsigned encodeHost(const Format &f, double x) {
  if (std::isnan(x))
    return 0x7f;
  unsigned sign = std::signbit(x) ? 0x80 : 0;
  double a = std::fabs(x);
  unsigned best = 0, top = 0; // top: the largest finite code
  for (unsigned c = 0; c < 0x80; ++c)
    if (std::isfinite(decodeHost(f, c)))
      top = c;
  if (a >= decodeHost(f, top)) // saturation, infinities included
    return top | sign;
  double bestErr = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c <= top; ++c) {
    double err = std::fabs(decodeHost(f, c) - a);
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
      best = c;
      bestErr = err;
    }
  }
  return best | sign;
}

} // namespace tilegpu
