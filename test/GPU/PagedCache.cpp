//===- PagedCache.cpp - packed keys as a paged KV cache, for tests --------===//
#include "PagedCache.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tilegpu {

PagedCache makePagedCache(std::mt19937_64 &rng, const std::vector<float> &k,
                          const std::vector<float> &v, int heads, int d,
                          const std::vector<int> &cuK, int page, int group) {
  PagedCache c;
  c.page = page;
  c.group = group;
  const int batch = int(cuK.size()) - 1, kvHeads = heads / group;
  const long totalK = cuK.back();
  std::vector<int> pages(batch);
  for (int b = 0; b < batch; ++b) {
    pages[b] = (cuK[b + 1] - cuK[b] + page - 1) / page;
    c.numPages += pages[b];
    c.maxBlocks = std::max(c.maxBlocks, pages[b]);
  }
  c.maxBlocks += 2; // unused entries at the end of every row
  c.numPages += 2;  // pages no sequence owns
  std::vector<int> order(c.numPages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t rowElems = std::size_t(kvHeads) * d;
  c.k.assign(std::size_t(c.numPages) * page * rowElems, NAN);
  c.v.assign(c.k.size(), NAN);
  c.table.assign(std::size_t(batch) * c.maxBlocks, c.numPages + 1000);
  int next = 0;
  for (int b = 0; b < batch; ++b) {
    for (int j = 0; j < pages[b]; ++j)
      c.table[std::size_t(b) * c.maxBlocks + j] = order[next++];
    for (int t = 0; t < cuK[b + 1] - cuK[b]; ++t) {
      std::size_t slot = std::size_t(c.table[std::size_t(b) * c.maxBlocks + t / page]) * page + t % page;
      for (int hk = 0; hk < kvHeads; ++hk) {
        std::size_t from = (std::size_t(hk) * group * totalK + cuK[b] + t) * d;
        std::size_t to = slot * rowElems + std::size_t(hk) * d;
        std::copy_n(k.begin() + from, d, c.k.begin() + to);
        std::copy_n(v.begin() + from, d, c.v.begin() + to);
      }
    }
  }
  return c;
}

} // namespace tilegpu
