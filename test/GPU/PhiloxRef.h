//===- PhiloxRef.h - Philox4x32-10 and rand() on the host -----*- C++ -*-===//
//
// The CPU reference of the `philox` and `rand` builtins, for the GPU tests
// that check them (tile-gpu-philox) or kernels built on them
// (tile-gpu-dropout): Random123's philox4x32 and Triton's
// uint_to_uniform_float.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

namespace tilegpu {

using Word4 = std::array<std::uint32_t, 4>;

/// Philox4x32 as Random123's philox.h defines it.
inline Word4 philoxRef(Word4 c, std::uint32_t k0, std::uint32_t k1,
                       int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    std::uint64_t p0 = std::uint64_t(0xD2511F53u) * c[0];
    std::uint64_t p1 = std::uint64_t(0xCD9E8D57u) * c[2];
    c = {std::uint32_t(p1 >> 32) ^ c[1] ^ k0, std::uint32_t(p1),
         std::uint32_t(p0 >> 32) ^ c[3] ^ k1, std::uint32_t(p0)};
  }
  return c;
}

/// Triton's uint_to_uniform_float of a u32: [0, 1).
inline float uniformRef(std::uint32_t x) {
  std::int32_t s;
  std::memcpy(&s, &x, 4);
  if (s < 0)
    s = -s - 1;
  return float(s) * 4.6566127342e-10f;
}

/// rand(seed, offset) of a .tile kernel: the first word of Philox at
/// counter (offset, 0, 0, 0) and key (seed's low, high words), as a float.
inline float randRef(std::uint64_t seed, std::uint32_t offset) {
  return uniformRef(philoxRef({offset, 0, 0, 0}, std::uint32_t(seed),
                              std::uint32_t(seed >> 32))[0]);
}

} // namespace tilegpu
