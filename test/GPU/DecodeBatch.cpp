//===- DecodeBatch.cpp - a decode batch, its cache layouts and fp64 reference ==//

#include "DecodeBatch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>


namespace tilegpu {

std::string DecodeConfig::name() const {
  std::string s = std::string(dtypeName(t)) + "_d" + std::to_string(d) +
                  "_g" + std::to_string(g) + "_q" + std::to_string(qlen);
  s += page ? "_page" + std::to_string(page) : std::string("_contig");
  s += nhd ? "_nhd" : "_hnd";
  return s + "_split" + std::to_string(splits);
}

std::vector<int> decodeLengths(std::mt19937_64 &rng, int page, bool quick) {
  int p = std::max(page, 16);
  std::vector<int> lens = {0, 1, 17, 2 * p, 3 * p + 5, 1000, 4099};
  if (!quick)
    lens.push_back(65537);
  std::uniform_int_distribution<int> pick(1, 3000);
  for (int i = 0; i < (quick ? 1 : 3); ++i)
    lens.push_back(pick(rng) | 1);
  std::shuffle(lens.begin(), lens.end(), rng);
  return lens;
}

DecodeBatch makeDecodeBatch(std::mt19937_64 &rng, const DecodeConfig &c,
                            const std::vector<int> &lens) {
  DecodeBatch bt;
  bt.b = int(lens.size());
  bt.g = c.g;
  bt.qlen = c.qlen;
  bt.d = c.d;
  bt.lens = lens;
  const int H = bt.heads(), D = c.d, Q = c.qlen;
  bt.q = randomNormal(rng, bt.rows() * D);
  roundTo(c.t, bt.q);
  for (int len : lens) {
    bt.k.push_back(randomNormal(rng, std::size_t(len) * bt.hkv * D));
    bt.v.push_back(randomNormal(rng, std::size_t(len) * bt.hkv * D));
    roundTo(c.t, bt.k.back());
    roundTo(c.t, bt.v.back());
  }
  const double scale = 1.0 / std::sqrt(double(D));
  bt.oRef.assign(bt.rows() * D, 0.0);
  bt.lseRef.assign(bt.rows(), -INFINITY);
  for (int b = 0; b < bt.b; ++b)
    for (int t = 0; t < Q; ++t)
      for (int h = 0; h < H; ++h) {
        const std::size_t row = (std::size_t(b) * Q + t) * H + h;
        const int len = lens[b], hk = h / c.g;
        const int seen = std::max(0, len - Q + t + 1); // keys 0 .. seen-1
        if (!seen)
          continue;
        const float *qi = &bt.q[row * D];
        std::vector<double> s(seen);
        double m = -INFINITY;
        for (int j = 0; j < seen; ++j) {
          const float *kj = &bt.k[b][(std::size_t(j) * bt.hkv + hk) * D];
          double dot = 0;
          for (int x = 0; x < D; ++x)
            dot += double(qi[x]) * double(kj[x]);
          s[j] = dot * scale;
          m = std::max(m, s[j]);
        }
        double l = 0;
        double *oi = &bt.oRef[row * D];
        for (int j = 0; j < seen; ++j) {
          double w = std::exp(s[j] - m);
          l += w;
          const float *vj = &bt.v[b][(std::size_t(j) * bt.hkv + hk) * D];
          for (int x = 0; x < D; ++x)
            oi[x] += w * double(vj[x]);
        }
        for (int x = 0; x < D; ++x)
          oi[x] /= l;
        bt.lseRef[row] = m + std::log(l);
      }
  return bt;
}

namespace {
/// Copies one token's K or V row of KV head `hk` to element `to` of `pool`.
void putRow(std::vector<std::uint8_t> &pool, DType t, const float *row, int d,
            std::size_t to) {
  std::vector<float> r(row, row + d);
  std::vector<std::uint8_t> bytes = encode(t, r);
  std::copy(bytes.begin(), bytes.end(),
            pool.begin() + std::ptrdiff_t(to * dtypeBytes(t)));
}
} // namespace

DecodeCache layOutCache(const DecodeBatch &bt, const DecodeConfig &c,
                        std::mt19937_64 &rng) {
  DecodeCache cache;
  const int D = bt.d, HKV = bt.hkv;
  const std::size_t eb = dtypeBytes(c.t);
  const int longest = *std::max_element(bt.lens.begin(), bt.lens.end());
  if (!c.page) {
    cache.maxBlocks = longest + 3;
    std::size_t elems = std::size_t(bt.b) * cache.maxBlocks * HKV * D;
    cache.k.assign(elems * eb, 0xFF); // NaN in every 16- and 32-bit type
    cache.v.assign(elems * eb, 0xFF);
    cache.table = {0};
    for (int b = 0; b < bt.b; ++b)
      for (int j = 0; j < bt.lens[b]; ++j)
        for (int hk = 0; hk < HKV; ++hk) {
          std::size_t at =
              c.nhd ? ((std::size_t(b) * cache.maxBlocks + j) * HKV + hk) * D
                    : ((std::size_t(b) * HKV + hk) * cache.maxBlocks + j) * D;
          std::size_t from = (std::size_t(j) * HKV + hk) * D;
          putRow(cache.k, c.t, &bt.k[b][from], D, at);
          putRow(cache.v, c.t, &bt.v[b][from], D, at);
        }
    return cache;
  }
  int pages = 0;
  for (int len : bt.lens) {
    pages += (len + c.page - 1) / c.page;
    cache.maxBlocks = std::max(cache.maxBlocks, (len + c.page - 1) / c.page);
  }
  cache.maxBlocks += 2; // table entries past every sequence's pages
  const int numPages = pages + 5; // spare pages of NaN
  std::vector<int> order(numPages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t pageElems = std::size_t(c.page) * HKV * D;
  cache.k.assign(numPages * pageElems * eb, 0xFF);
  cache.v.assign(cache.k.size(), 0xFF);
  // Unused entries: ids far past the pool, so that reading through one
  // faults instead of reading NaN.
  cache.table.assign(std::size_t(bt.b) * cache.maxBlocks, 0x3fffffff);
  std::size_t next = 0;
  for (int b = 0; b < bt.b; ++b)
    for (int p = 0; p * c.page < bt.lens[b]; ++p) {
      int id = order[next++];
      cache.table[std::size_t(b) * cache.maxBlocks + p] = id;
      for (int j = p * c.page; j < std::min(bt.lens[b], (p + 1) * c.page); ++j)
        for (int hk = 0; hk < HKV; ++hk) {
          std::size_t slot = std::size_t(j - p * c.page);
          std::size_t at =
              std::size_t(id) * pageElems +
              (c.nhd ? (slot * HKV + hk) * D : (std::size_t(hk) * c.page + slot) * D);
          std::size_t from = (std::size_t(j) * HKV + hk) * D;
          putRow(cache.k, c.t, &bt.k[b][from], D, at);
          putRow(cache.v, c.t, &bt.v[b][from], D, at);
        }
    }
  return cache;
}

std::string checkDecodeOutput(const DecodeConfig &c, const DecodeBatch &bt,
                              const std::vector<std::uint8_t> &oBytes,
                              const std::vector<std::uint8_t> &lseBytes,
                              double &worst) {
  const std::size_t rows = bt.rows(), D = bt.d;
  auto untouched = [](const std::vector<std::uint8_t> &b, std::size_t from) {
    return b.size() >= from &&
           std::all_of(b.begin() + std::ptrdiff_t(from), b.end(),
                       [](std::uint8_t x) { return x == 0xFF; });
  };
  if (!untouched(oBytes, rows * D * dtypeBytes(c.t)) || !untouched(lseBytes, rows * 4))
    return "written past [B, QLEN, H]";
  std::vector<float> o = decode(c.t, oBytes.data(), rows * D);
  std::vector<float> lse = decode(DType::F32, lseBytes.data(), rows);
  std::vector<float> got, gotLse;
  std::vector<double> ref, refLse;
  for (std::size_t r = 0; r < rows; ++r) {
    if (std::isinf(bt.lseRef[r])) { // sees no key
      bool zero = std::all_of(o.begin() + r * D, o.begin() + (r + 1) * D,
                              [](float x) { return x == 0.0f; });
      if (!zero || !(std::isinf(lse[r]) && lse[r] < 0))
        return "row " + std::to_string(r) + " sees no key but O != 0 or LSE != -inf";
      continue;
    }
    got.insert(got.end(), o.begin() + r * D, o.begin() + (r + 1) * D);
    ref.insert(ref.end(), bt.oRef.begin() + r * D, bt.oRef.begin() + (r + 1) * D);
    gotLse.push_back(lse[r]);
    refLse.push_back(bt.lseRef[r]);
  }
  const double tol = c.t == DType::F32 ? 1e-5 : 1e-2;
  const double lseTol = c.t == DType::F32 ? 1e-5 : 1e-3;
  ErrorStats e = compare(got, ref), le = compareScaled(gotLse, refLse);
  worst = std::max(worst, e.relL2);
  char buf[96];
  if (e.nonFinite || le.nonFinite)
    return std::to_string(e.nonFinite + le.nonFinite) + " outputs not written or NaN";
  if (e.relL2 > tol) {
    std::snprintf(buf, sizeof(buf), "rel-L2 %.2e > %.0e", e.relL2, tol);
    return buf;
  }
  if (le.maxAbs > lseTol) {
    std::snprintf(buf, sizeof(buf), "LSE error %.2e > %.0e", le.maxAbs, lseTol);
    return buf;
  }
  return "";
}

} // namespace tilegpu
