//===- PagedCache.h - packed keys as a paged KV cache, for tests -*- C++ -*-===//
//
// tile-gpu-varlen's chunked-prefill case (flash_fwd_paged.tile): the keys
// and values of packed sequences ([H, total_k, D], sequence b at rows
// cu_k[b] .. cu_k[b + 1] of each head) laid out as a vLLM "NHD" cache,
// [num_pages, page, H / group, D], KV head hk holding head hk * group of
// the packed tensors. Pages are handed out in a shuffled order, two spare
// pages are never used, every row no sequence owns holds NaN, and every
// block-table entry past a sequence's pages holds an id outside the pool:
// a kernel that reads either gives NaN or faults.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <random>
#include <vector>

namespace tilegpu {

struct PagedCache {
  int page = 16, group = 1, numPages = 0, maxBlocks = 0;
  std::vector<float> k, v;  ///< [numPages, page, heads / group, d]
  std::vector<int> table;   ///< [batch, maxBlocks]
};

PagedCache makePagedCache(std::mt19937_64 &rng, const std::vector<float> &k,
                          const std::vector<float> &v, int heads, int d,
                          const std::vector<int> &cuK, int page, int group);

} // namespace tilegpu
