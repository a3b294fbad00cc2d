//===- VariantsCheck.h - a variant run against its fp64 reference -*- C++ -*-===//
//
// The rules of tile-gpu-variants (docs/testing.md) for one launch's O and
// LSE, read back whole:
//   * every row of every (b, h) below Sq: O finite; rel-L2 of O over the
//     case <= tol (1e-2 f16/bf16, 1e-5 f32) and max |O - ref| <=
//     5 tol max |ref| (one bad row cannot hide behind the others);
//   * a row whose reference is exactly 0 (it sees no key, or a sink of
//     +1e4 takes all the weight) is exactly 0;
//   * LSE: -inf exactly where the reference is -inf (a row that sees
//     nothing, no sinks), else within lseTol (1e-3 / 1e-5) * (1 + |lse|);
//   * pad rows (after each sequence) and guard rows (after each buffer) of
//     O and LSE still hold the 0xFF poison.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "VariantsDevice.h"

#include <string>
#include <vector>

namespace tilegpu {

struct Tolerance {
  double o = 1e-2;   ///< rel-L2 of O
  double lse = 1e-3; ///< |lse - ref| / (1 + |ref|)
};

struct CheckResult {
  double relL2 = 0, maxAbsRel = 0, lseErr = 0;
  std::vector<std::string> failures; ///< empty: passed
};

CheckResult checkVariant(const VariantCase &c, const Layout &qLayout,
                         const std::vector<std::uint8_t> &o,
                         const std::vector<std::uint8_t> &lse,
                         const std::vector<double> &oRef,
                         const std::vector<double> &lseRef,
                         const Tolerance &tol);

} // namespace tilegpu
