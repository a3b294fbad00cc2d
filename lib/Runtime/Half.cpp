//===- Half.cpp - host fp16 / bf16 conversions (round to nearest even) ----===//

#include "tile/Runtime.h"

#include <cmath>
#include <cstring>

namespace tile {

namespace {
std::uint32_t bitsOf(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float floatOf(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
} // namespace

std::uint16_t floatToHalf(float f) {
  std::uint32_t x = bitsOf(f);
  std::uint16_t sign = std::uint16_t((x >> 16) & 0x8000u);
  std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) // inf, NaN (kept quiet, payload top bits kept)
    return sign | 0x7c00u |
           (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u);
  if (ax >= 0x477ff000u) // ≥ 65520 rounds to inf
    return sign | 0x7c00u;
  if (ax < 0x38800000u) { // below 2^-14: subnormal half (or zero)
    // a·2^24 is exact; the nearest integer (ties to even) is the encoding,
    // 1024 being the smallest normal.
    float scaled = floatOf(ax) * 16777216.0f;
    return sign | std::uint16_t(std::nearbyint(scaled));
  }
  std::uint32_t mant = ax & 0x7fffffu;
  std::uint32_t exp = (ax >> 23) - 127 + 15;
  std::uint32_t h = (exp << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h; // may carry into the exponent: correct
  return sign | std::uint16_t(h);
}

float halfToFloat(std::uint16_t h) {
  std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) // inf / NaN
    return floatOf(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) { // zero / subnormal: mant · 2^-24
    float v = float(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return floatOf(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

std::uint16_t floatToBFloat16(float f) {
  std::uint32_t x = bitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a (quiet) NaN
    return std::uint16_t((x >> 16) | 0x40u);
  std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return std::uint16_t((x + rounding) >> 16);
}

float bfloat16ToFloat(std::uint16_t b) {
  return floatOf(std::uint32_t(b) << 16);
}

} // namespace tile
