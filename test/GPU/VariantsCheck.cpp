//===- VariantsCheck.cpp - a variant run against its fp64 reference -------===//

#include "VariantsCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tilegpu {

namespace {

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

std::string at(int b, int h, int i) {
  return "b=" + std::to_string(b) + " h=" + std::to_string(h) +
         " i=" + std::to_string(i);
}

/// Counts a failure kind once, keeping its first place.
struct Tally {
  long count = 0;
  std::string first;
  void add(const std::string &where) {
    if (count++ == 0)
      first = where;
  }
  void report(std::vector<std::string> &out, const std::string &what) const {
    if (count)
      out.push_back(std::to_string(count) + " " + what + ", first at " + first);
  }
};

} // namespace

CheckResult checkVariant(const VariantCase &c, const Layout &qLayout,
                         const std::vector<std::uint8_t> &oBytes,
                         const std::vector<std::uint8_t> &lseBytes,
                         const std::vector<double> &oRef,
                         const std::vector<double> &lseRef,
                         const Tolerance &tol) {
  CheckResult r;
  const std::size_t D = std::size_t(c.d), eb = dtypeBytes(c.dtype);
  const long allocRows = long(oBytes.size() / (D * eb));
  std::vector<char> written(std::size_t(allocRows), 0);
  std::vector<float> row;
  Tally nonFinite, notZero, lseWrong, lseNonFinite, untouched;
  double num = 0, den = 0, maxAbs = 0, maxRef = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.heads; ++h)
      for (int i = 0; i < c.sq; ++i) {
        const long at_ = qLayout.at(b, h, i);
        written[std::size_t(at_)] = 1;
        row = decode(c.dtype, &oBytes[std::size_t(at_) * D * eb], D);
        const std::size_t li = (std::size_t(b) * c.heads + h) * c.sq + i;
        const double *ref = &oRef[li * D];
        bool refZero = std::all_of(ref, ref + D, [](double x) { return x == 0; });
        for (std::size_t k = 0; k < D; ++k) {
          if (!std::isfinite(row[k])) {
            nonFinite.add(at(b, h, i));
            break;
          }
          double d = double(row[k]) - ref[k];
          num += d * d;
          den += ref[k] * ref[k];
          maxAbs = std::max(maxAbs, std::fabs(d));
          maxRef = std::max(maxRef, std::fabs(ref[k]));
          if (refZero && row[k] != 0.0f) {
            notZero.add(at(b, h, i));
            break;
          }
        }
        float got;
        std::memcpy(&got, &lseBytes[li * 4], 4);
        double want = lseRef[li];
        if (std::isinf(want) && want < 0) {
          if (!(std::isinf(got) && got < 0))
            lseWrong.add(at(b, h, i) + " (got " + fmt(got) + ", want -inf)");
        } else if (!std::isfinite(got)) {
          lseNonFinite.add(at(b, h, i) + " (got " + fmt(got) + ")");
        } else {
          double e = std::fabs(double(got) - want) / (1.0 + std::fabs(want));
          r.lseErr = std::max(r.lseErr, e);
          if (e > tol.lse)
            lseWrong.add(at(b, h, i) + " (got " + fmt(got) + ", want " +
                         fmt(want) + ")");
        }
      }
  // Pad and guard rows of O, the guard of LSE: still poisoned.
  for (long rr = 0; rr < allocRows; ++rr)
    if (!written[std::size_t(rr)] &&
        !std::all_of(oBytes.begin() + rr * long(D * eb),
                     oBytes.begin() + (rr + 1) * long(D * eb),
                     [](std::uint8_t x) { return x == 0xFF; }))
      untouched.add("O row " + std::to_string(rr) + " of the allocation" +
                    (rr >= qLayout.rows ? " (guard)" : " (pad)"));
  const std::size_t lseRows = std::size_t(c.batch) * c.heads * c.sq;
  for (std::size_t i = lseRows * 4; i < lseBytes.size(); ++i)
    if (lseBytes[i] != 0xFF) {
      untouched.add("LSE element " + std::to_string(i / 4) + " (guard)");
      break;
    }

  r.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  r.maxAbsRel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
  nonFinite.report(r.failures, "O rows with NaN/inf (or never written)");
  notZero.report(r.failures, "rows that see nothing but are not exactly 0");
  lseNonFinite.report(r.failures, "LSE values NaN/inf (or never written)");
  lseWrong.report(r.failures, "LSE values off by > " + fmt(tol.lse) +
                                  "*(1+|lse|)");
  untouched.report(r.failures, "rows written that must stay poisoned");
  if (r.relL2 > tol.o)
    r.failures.push_back("rel-L2 " + fmt(r.relL2) + " > " + fmt(tol.o));
  if (r.maxAbsRel > 5 * tol.o)
    r.failures.push_back("max-abs " + fmt(r.maxAbsRel) + " * max|O| > " +
                         fmt(5 * tol.o) + " * max|O|");
  return r;
}

} // namespace tilegpu
