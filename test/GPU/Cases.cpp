//===- Cases.cpp - flash_fwd parity cases on the GPU ----------------------===//

#include "Cases.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace tile;

namespace tilegpu {

std::string Config::name() const {
  return std::string(dtypeName(dtype)) + (causal ? "_causal" : "_full") + "_d" +
         std::to_string(d);
}

static Defines &extraDefines() {
  static Defines d;
  return d;
}

void setExtraDefines(const Defines &d) { extraDefines() = d; }

static tile::Schedule &extraSchedule() {
  static tile::Schedule s;
  return s;
}

void setSchedule(const tile::Schedule &s) { extraSchedule() = s; }

static std::pair<tile::ConfigTable, int64_t> *&table() {
  static std::pair<tile::ConfigTable, int64_t> *t = nullptr;
  return t;
}

void setConfigTable(const tile::ConfigTable &t, int64_t seqlen) {
  table() = new std::pair<tile::ConfigTable, int64_t>(t, seqlen);
}

static tile::KernelConfig fromTable(const Config &c) {
  std::map<std::string, std::string> keys{
      {"T", dtypeName(c.dtype)},
      {"D", std::to_string(c.d)},
      {"CAUSAL", c.causal ? "true" : "false"}};
  return table()->first.lookup(keys, table()->second);
}

Defines Config::defines() const {
  Defines d = extraDefines();
  if (table())
    for (const auto &[k, v] : fromTable(*this).defines)
      d[k] = v;
  d["T"] = dtypeName(dtype);
  d["CAUSAL"] = causal ? "true" : "false";
  d["D"] = std::to_string(this->d);
  return d;
}

tile::Schedule Config::schedule() const {
  return table() ? fromTable(*this).schedule : extraSchedule();
}

static std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

/// BM from the manifest (needed for the grid).
bool blockRows(const Manifest &m, int &bm, std::string &error) {
  auto it = m.constants.find("BM");
  if (it == m.constants.end()) {
    error = "the manifest has no constant BM, so the grid cannot be sized";
    return false;
  }
  bm = std::atoi(it->second.c_str());
  if (bm <= 0) {
    error = "the manifest's BM is '" + it->second + "'";
    return false;
  }
  return true;
}

namespace {

//===----------------------------------------------------------------------===//
// One problem on the GPU
//===----------------------------------------------------------------------===//

struct DeviceProblem {
  DeviceBuffer q, k, v, o, lse;
  std::size_t oElems = 0, lseElems = 0;           ///< checked region
  std::size_t oGuardElems = 0, lseGuardElems = 0; ///< must stay poisoned
};

Status allocate(const Device &dev, const Config &c, const Problem &p,
                int guardRows, const std::vector<float> &q,
                const std::vector<float> &k, const std::vector<float> &v,
                DeviceProblem &out) {
  std::size_t eb = dtypeBytes(c.dtype);
  out.oElems = std::size_t(p.bh) * p.s * p.d;
  out.lseElems = std::size_t(p.bh) * p.s;
  out.oGuardElems = std::size_t(guardRows) * p.d;
  out.lseGuardElems = std::size_t(guardRows);
  // Inputs get a guard too, so that seqlen 0 still passes real pointers.
  std::size_t inElems = out.oElems + out.oGuardElems;
  struct {
    DeviceBuffer *buf;
    std::size_t bytes;
  } allocs[] = {{&out.q, inElems * eb},
                {&out.k, inElems * eb},
                {&out.v, inElems * eb},
                {&out.o, (out.oElems + out.oGuardElems) * eb},
                {&out.lse, (out.lseElems + out.lseGuardElems) * 4}};
  for (auto &a : allocs) {
    Expected<DeviceBuffer> b = DeviceBuffer::allocate(dev, a.bytes);
    if (!b)
      return b.status();
    *a.buf = b.take();
  }
  for (auto [buf, host] :
       {std::pair{&out.q, &q}, std::pair{&out.k, &k}, std::pair{&out.v, &v}}) {
    if (Status s = buf->fill(0); !s.ok())
      return s;
    std::vector<std::uint8_t> bytes = encode(c.dtype, *host);
    if (Status s = buf->copyFromHost(bytes.data(), bytes.size()); !s.ok())
      return s;
  }
  return Status();
}

/// Poisons O and LSE with 0xFF bytes (NaN in every dtype), launches, waits,
/// and reads both back whole (guards included).
Status runOnce(const Device &dev, const Variant &var, const Config &c,
               const Problem &p, DeviceProblem &dp,
               std::array<unsigned, 3> grid, std::vector<std::uint8_t> &o,
               std::vector<std::uint8_t> &lse) {
  if (Status s = dp.o.fill(0xFF); !s.ok())
    return s;
  if (Status s = dp.lse.fill(0xFF); !s.ok())
    return s;
  const char *t = dtypeName(c.dtype);
  std::vector<KernelArg> args = {
      KernelArg::pointer(dp.q, t),       KernelArg::pointer(dp.k, t),
      KernelArg::pointer(dp.v, t),       KernelArg::pointer(dp.o, t),
      KernelArg::pointer(dp.lse, "f32"), KernelArg::int32(p.s),
      KernelArg::float32(p.smScale)};
  if (Status s = var.kernel.launch(grid, args); !s.ok())
    return s;
  if (Status s = dev.synchronize(); !s.ok())
    return s.withContext("after the launch");
  o.resize(dp.o.size());
  lse.resize(dp.lse.size());
  if (Status s = dp.o.copyToHost(o.data(), o.size()); !s.ok())
    return s;
  return dp.lse.copyToHost(lse.data(), lse.size());
}

bool allBytes(const std::vector<std::uint8_t> &b, std::size_t from,
              std::uint8_t value) {
  for (std::size_t i = from; i < b.size(); ++i)
    if (b[i] != value)
      return false;
  return true;
}

std::string where(const Problem &p, std::size_t index, int perRow) {
  std::size_t row = index / std::size_t(perRow);
  return "bh=" + std::to_string(row / std::size_t(std::max(p.s, 1))) +
         " row=" + std::to_string(row % std::size_t(std::max(p.s, 1))) +
         (perRow > 1 ? " col=" + std::to_string(index % perRow) : "");
}

} // namespace

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

void report(Totals &totals, const std::string &line, bool pass,
            const std::string &why) {
  ++totals.cases;
  std::printf("%s %s%s\n", line.c_str(), pass ? "PASS" : "FAIL",
              why.empty() ? "" : ("  (" + why + ")").c_str());
  std::fflush(stdout);
  if (!pass) {
    ++totals.failed;
    totals.failures.push_back(line + "  " + why);
  }
}

int summarize(const Totals &totals, unsigned long long seed,
              const std::string &only) {
  std::printf("\nsummary: %d checks, %d passed, %d failed (seed %llu)\n",
              totals.cases, totals.cases - totals.failed, totals.failed, seed);
  for (const std::string &f : totals.failures)
    std::printf("  FAILED: %s\n", f.c_str());
  if (totals.cases == 0) {
    std::printf("FAIL: nothing ran (--only '%s')\n", only.c_str());
    return 1;
  }
  return totals.failed || totals.fatal ? 1 : 0;
}

void runCase(const Device &dev, std::vector<Variant *> variants,
             const Config &c, const CaseSpec &spec, std::mt19937_64 &rng,
             Totals &totals) {
  Problem p = spec.p;
  std::size_t n = std::size_t(p.bh) * p.s * p.d;
  std::vector<float> q = randomNormal(rng, n, spec.qScale);
  std::vector<float> k = randomNormal(rng, n), v = randomNormal(rng, n);
  roundTo(c.dtype, q);
  roundTo(c.dtype, k);
  roundTo(c.dtype, v);
  std::vector<double> oRef, lseRef;
  double maxLogit = 0;
  referenceAttention(p, q, k, v, oRef, lseRef, &maxLogit);
  double naiveMaxAbs = -1;
  if (spec.qScale != 1.0f) { // FlashAttention's rule for the extreme case
    std::vector<float> naive;
    naiveAttentionF32(p, q, k, v, naive);
    naiveMaxAbs = compare(naive, oRef).maxAbs;
  }

  int guardRows = 0;
  for (Variant *var : variants)
    guardRows = std::max(guardRows, var->bm);
  DeviceProblem dp;
  if (Status s = allocate(dev, c, p, guardRows, q, k, v, dp); !s.ok()) {
    report(totals, "     " + c.name() + " S=" + std::to_string(p.s), false,
           s.message());
    return;
  }

  char head[160];
  std::vector<std::uint8_t> firstO;
  for (Variant *var : variants) {
    std::snprintf(head, sizeof(head), "%-4s %-5s %-6s %4d %6d %5d %-9s",
                  var->path.c_str(), dtypeName(c.dtype),
                  c.causal ? "causal" : "full", p.d, p.s, p.bh,
                  spec.label.c_str());
    unsigned gx = unsigned((p.s + var->bm - 1) / var->bm);
    if (p.s == 0)
      gx = 1; // really launch: every row is masked, nothing may be written
    std::array<unsigned, 3> grid = {gx, unsigned(p.bh), 1};

    std::vector<std::uint8_t> o0, lse0, o, lse;
    std::string why;
    int differingRun = 0;
    for (int r = 0; r < kRepeats; ++r) {
      Status s = runOnce(dev, *var, c, p, dp, grid, r ? o : o0, r ? lse : lse0);
      if (!s.ok()) {
        report(totals, head, false,
               "run " + std::to_string(r) + ": " + s.message());
        totals.fatal = true; // a fault leaves the context unusable
        return;
      }
      if (r && !differingRun && (o != o0 || lse != lse0))
        differingRun = r;
    }

    std::size_t eb = dtypeBytes(c.dtype);
    std::vector<float> out = decode(c.dtype, o0.data(), dp.oElems);
    std::vector<float> lseOut = decode(DType::F32, lse0.data(), dp.lseElems);
    ErrorStats e = compare(out, oRef);
    ErrorStats le = compareScaled(lseOut, lseRef);

    bool pass = true;
    auto fail = [&](const std::string &w) {
      pass = false;
      why += (why.empty() ? "" : "; ") + w;
    };
    if (e.nonFinite)
      fail(std::to_string(e.nonFinite) +
           " O elements not written or NaN/inf, "
           "first at " +
           where(p, e.firstNonFinite, p.d));
    if (le.nonFinite)
      fail(std::to_string(le.nonFinite) +
           " LSE values not written or "
           "NaN/inf, first at " +
           where(p, le.firstNonFinite, 1));
    if (!allBytes(o0, dp.oElems * eb, 0xFF))
      fail("O written past the last row (rows >= seqlen must stay untouched)");
    if (!allBytes(lse0, dp.lseElems * 4, 0xFF))
      fail("LSE written past the last row");
    if (differingRun)
      fail("run " + std::to_string(differingRun) +
           " differs bitwise from run 0");
    // With huge logits the kernel's exp2(x * scale * log2e - m) rounds its
    // argument to f32 (the softmax scale is folded into one multiply): an
    // error of about |logit| * 2^-24 in every exponent, which the naive
    // reference (exp(x - max) on the unscaled difference) does not have.
    double exponentError = 4 * maxLogit * std::ldexp(1.0, -24);
    if (spec.qScale != 1.0f) {
      double bound = std::max(2 * naiveMaxAbs + 1e-5, exponentError);
      if (e.relL2 > c.tolerance() && e.maxAbs > bound)
        fail("max-abs " + fmt(e.maxAbs) + " > max(2*naive-fp32 + 1e-5, " +
             "4*max|logit|*2^-24) = " + fmt(bound) + " and rel-L2 > " +
             fmt(c.tolerance()));
      why += std::string(why.empty() ? "" : "; ") + "max |logit| " +
             fmt(maxLogit) + ", naive fp32 max-abs " + fmt(naiveMaxAbs);
    } else if (e.relL2 > c.tolerance()) {
      fail("rel-L2 > " + fmt(c.tolerance()));
    }
    double lseBound = c.lseTolerance() + (spec.qScale != 1.0f ? exponentError : 0);
    if (le.maxAbs > lseBound)
      fail("LSE error > " + fmt(lseBound) + "*(1+|lse|)");
    if (!firstO.empty() && o0 != firstO)
      why += std::string(why.empty() ? "" : "; ") +
             "note: differs bitwise from the JIT result";
    if (firstO.empty())
      firstO = o0;

    std::string line = std::string(head) + " " + fmt(e.relL2) + "  " +
                       fmt(e.maxAbs) + "  " + fmt(le.maxAbs);
    report(totals, line, pass, why);
  }
}

/// seqlen 0 through the runtime: an empty grid launches nothing.
void runEmptyGrid(const Device &dev, Variant &var, const Config &c,
                  Totals &totals) {
  Problem p;
  p.bh = 4;
  p.s = 0;
  p.d = c.d;
  DeviceProblem dp;
  std::string head = var.path + " " + c.name() + " S=0 grid (0, 4, 1)";
  if (Status s = allocate(dev, c, p, var.bm, {}, {}, {}, dp); !s.ok())
    return report(totals, head, false, s.message());
  std::vector<std::uint8_t> o, lse;
  Status s = runOnce(dev, var, c, p, dp, {0, 4, 1}, o, lse);
  bool pass = s.ok() && allBytes(o, 0, 0xFF) && allBytes(lse, 0, 0xFF);
  report(totals, head, pass,
         s.ok() ? (pass ? "" : "memory was written") : s.message());
}

} // namespace tilegpu
