//===- VariantsReference.cpp - fp64 reference of the forward variants -----===//

#include "VariantsReference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

namespace tilegpu {

bool denseVisible(const VariantProblem &p, int b, int h, int i, int j) {
  if (j < 0 || j >= p.sk)
    return false;
  long diag = p.bottomRight ? long(p.sk) - p.sq : 0;
  long pos = long(i) + diag; // query i's key position
  int right = p.causal ? 0 : p.windowRight;
  if (right >= 0 && j > pos + right)
    return false;
  if (p.windowLeft >= 0 && j < pos - p.windowLeft)
    return false;
  return !p.maskMod || p.maskMod(b, h, i, j);
}

namespace {

/// The keys query i of (b, h) sees, with multiplicity (a block listed twice
/// in a block mask counts twice, as in the kernel).
void visibleKeys(const VariantProblem &p, int b, int h, int i,
                 std::vector<int> &keys) {
  keys.clear();
  const BlockMask *m = p.blockMask;
  if (!m) {
    for (int j = 0; j < p.sk; ++j)
      if (denseVisible(p, b, h, i, j))
        keys.push_back(j);
    return;
  }
  const long r = m->row(b, h, i / m->bm);
  const int kBlocks = (p.sk + m->bn - 1) / m->bn;
  for (int partial = 1; partial >= 0; --partial) {
    const std::vector<int> &num = partial ? m->kvNum : m->fullNum;
    const std::vector<int> &idx = partial ? m->kvIdx : m->fullIdx;
    for (int t = 0; t < num[std::size_t(r)]; ++t) {
      int blk = idx[std::size_t(r * m->maxBlocks + t)];
      if (blk < 0 || blk >= kBlocks) // clamped to the block past the end
        continue;
      for (int j = blk * m->bn; j < std::min(p.sk, (blk + 1) * m->bn); ++j)
        if (!partial || !p.maskMod || p.maskMod(b, h, i, j))
          keys.push_back(j);
    }
  }
}

/// body(row) for rows [0, n), spread over the hardware threads.
template <typename Body> void parallelRows(long n, Body body) {
  const long chunk = 8;
  std::atomic<long> next{0};
  auto worker = [&] {
    for (long start; (start = next.fetch_add(chunk)) < n;)
      for (long r = start; r < std::min(n, start + chunk); ++r)
        body(r);
  };
  unsigned t = std::max(1u, std::thread::hardware_concurrency());
  t = unsigned(std::min<long>(t, (n + chunk - 1) / chunk));
  std::vector<std::thread> threads;
  for (unsigned k = 1; k < t; ++k)
    threads.emplace_back(worker);
  worker();
  for (std::thread &th : threads)
    th.join();
}

} // namespace

ReferenceInfo referenceVariant(const VariantProblem &p,
                               const std::vector<float> &q,
                               const std::vector<float> &k,
                               const std::vector<float> &v,
                               std::vector<double> &o,
                               std::vector<double> &lse) {
  const std::size_t D = std::size_t(p.d);
  const long rows = long(p.batch) * p.heads * p.sq;
  o.assign(std::size_t(rows) * D, 0.0);
  lse.assign(std::size_t(rows), 0.0);
  const int group = p.heads / p.headsKv;
  const double scale = double(p.smScale); // the f32 the kernel is passed
  std::mutex mu;
  ReferenceInfo info;
  parallelRows(rows, [&](long row) {
    thread_local std::vector<int> keys;
    thread_local std::vector<double> s;
    const int i = int(row % p.sq);
    const int h = int(row / p.sq % p.heads);
    const int b = int(row / p.sq / p.heads);
    const int hk = h / group;
    visibleKeys(p, b, h, i, keys);
    const float *qi = &q[std::size_t(row) * D];
    const std::size_t kvBase =
        (std::size_t(b) * p.headsKv + std::size_t(hk)) * std::size_t(p.sk) * D;
    s.resize(keys.size());
    double m = -INFINITY, amax = 0;
    for (std::size_t t = 0; t < keys.size(); ++t) {
      const float *kj = &k[kvBase + std::size_t(keys[t]) * D];
      double dot = 0;
      for (std::size_t c = 0; c < D; ++c)
        dot += double(qi[c]) * double(kj[c]);
      double x = dot * scale;
      if (p.scoreMod)
        x = p.scoreMod(x, b, h, i, keys[t]);
      s[t] = x;
      m = std::max(m, x);
      amax = std::max(amax, std::fabs(x));
    }
    const bool sinks = !p.sinks.empty();
    const double sink = sinks ? double(p.sinks[std::size_t(h)]) : -INFINITY;
    const double mAll = std::max(m, sink);
    double *oi = &o[std::size_t(row) * D];
    if (mAll == -INFINITY) { // nothing visible, no sink
      lse[std::size_t(row)] = -INFINITY;
    } else {
      double l = sinks ? std::exp(sink - mAll) : 0.0;
      for (std::size_t t = 0; t < keys.size(); ++t) {
        double w = std::exp(s[t] - mAll);
        l += w;
        const float *vj = &v[kvBase + std::size_t(keys[t]) * D];
        for (std::size_t c = 0; c < D; ++c)
          oi[c] += w * double(vj[c]);
      }
      for (std::size_t c = 0; c < D; ++c)
        oi[c] /= l;
      lse[std::size_t(row)] = mAll + std::log(l);
    }
    std::lock_guard<std::mutex> lock(mu);
    info.maxAbsLogit = std::max(info.maxAbsLogit, amax);
    info.emptyRows += keys.empty();
    info.visiblePairs += long(keys.size());
  });
  return info;
}

} // namespace tilegpu
