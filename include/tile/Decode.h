//===- Decode.h - split-KV decode as a plan-once, run-many call -*- C++ -*-===//
//
// tile::Decode plans one decode batch shape once (kernels, split count,
// workspace) and then launches it with run(): no allocation and no host
// synchronisation, so a run() can be captured in a CUDA graph and replayed
// with new sequence lengths and block tables in device memory.
//
//   tile::DecodeParams p;
//   p.batch = 16; p.kvHeads = 8; p.group = 4; p.headDim = 128;
//   p.pageSize = 16; p.maxBlocks = 4096;          // block-table row length
//   p.q = q; p.kCache = k; p.vCache = v; p.blockTable = table;
//   p.seqLens = lens; p.o = o; p.stream = stream;
//   auto dec = tile::Decode::plan(*dev, p, {jit});
//   tile::Status s = dec->run();                 // again with run(p2)
//
// The kernels are examples/attention/decode.tile and decode_combine.tile;
// layouts, the split rule and the cost model are in docs/serving.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Attention.h"

#include <memory>
#include <string>

namespace tile {

struct DecodeParams {
  int batch = 1;
  int kvHeads = 1;
  int group = 1;    ///< query heads per KV head (GQA); heads = kvHeads * group
  int queryLen = 1; ///< new tokens per sequence (group * queryLen <= 128)
  int headDim = 128;
  /// Tokens per page; 0: the contiguous cache [B, maxBlocks, H_KV, D] (NHD)
  /// or [B, H_KV, maxBlocks, D].
  int pageSize = 16;
  bool nhd = true; ///< pages [num_pages, page, H_KV, D]; false: [.., H_KV, page, D]
  /// Block-table row length (paged), or cache rows per sequence (contiguous):
  /// bounds every sequence length, and with it the split count.
  int maxBlocks = 0;
  DType dtype = DType::BF16;
  float scale = 0; ///< softmax scale, finite and >= 0; 0: 1/sqrt(headDim)
  int splits = 0;  ///< KV splits; 0: the rule of decodeSplits()
  /// q, o [B, QLEN, H, D]; lse [B, QLEN, H] f32 (0: the plan keeps its own);
  /// blockTable i32 [B, maxBlocks] (paged); seqLens i32 [B].
  DevicePtr q = 0, kCache = 0, vCache = 0, blockTable = 0, seqLens = 0, o = 0,
            lse = 0;
  Stream stream = nullptr;
};

struct DecodeOptions {
  std::shared_ptr<JIT> jit; ///< required (its caches are shared)
  std::string kernelDir;    ///< empty: defaultKernelDir()
};

/// The split count (<= maxSplits, each split with at least one key block)
/// for `programs` = batch * KV heads over `sms` SMs that run `perSM`
/// decode programs each: on a contiguous cache with at most half as many
/// programs as SMs, as many splits as give every SM one program; otherwise
/// (and always for a `paged` cache) FlashDecoding's rule, the fewest
/// splits whose waves of programs * splits over the sms * perSM resident
/// slots are at least 85 % as full as the best count's (docs/serving.md).
int decodeSplits(long programs, long blocks, long sms, long perSM,
                 int maxSplits = 128, bool paged = false);

class Decode {
public:
  Decode(Decode &&) noexcept;
  Decode &operator=(Decode &&) noexcept;
  ~Decode();

  /// Compiles and loads the kernels for `params`' shape (pointers may be
  /// 0), picks the split count and allocates the split workspace.
  static Expected<Decode> plan(const Device &device, const DecodeParams &params,
                               DecodeOptions options);
  /// Launches on the planned pointers and stream.
  Status run();
  /// Launches on `params`' pointers, stream and scale; the shape must be
  /// the planned one.
  Status run(const DecodeParams &params);

  int splits() const;
  /// "decode: bf16 B=16 H_KV=8 G=4 QLEN=1 D=128 page 16 nhd, 3 splits".
  const std::string &planLine() const;

  struct Impl;

private:
  explicit Decode(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace tile
