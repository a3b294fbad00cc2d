//===- VariantsDevice.h - one variant case's buffers on the GPU -*- C++ -*-===//
//
// For tile-gpu-variants: the case's tensors moved from the reference's
// logical layout ([B, H, S, D]) to the kernel's strided one ([B, S, H, D] or
// [B, H, S, D], strides in units of D elements), with `pad` rows after each
// sequence (NaN in q, k, v) and guard rows after each buffer; o and lse are
// poisoned with 0xFF before every launch. Then the kernel's argument list,
// the launch and the read-back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "VariantsCases.h"

#include "tile/Runtime.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tilegpu {

/// Where row i of head h of batch b lives, in rows of D elements.
struct Layout {
  long row = 1, head = 1, batch = 1;
  long rows = 0; ///< rows of the allocation before the guard
  long at(int b, int h, int i) const { return b * batch + h * head + i * row; }
};

/// [B, S, H, D] or [B, H, S, D] with `pad` rows after each sequence.
Layout makeLayout(bool bshd, int batch, int heads, int seqlen, int pad);

/// Rows after every buffer that must stay poisoned (o, lse) or NaN (inputs).
inline constexpr long kGuardRows = 64;

struct VariantData {
  std::vector<float> q, k, v; ///< logical, rounded to the dtype
};

class DeviceVariant {
public:
  /// Uploads the case's inputs, hook data and (sparse) `mask`.
  tile::Status upload(const tile::Device &dev, const VariantCase &c,
                      const VariantData &data, const BlockMask *mask);
  /// Poisons o and lse, launches with `bm` rows per program, waits, reads o
  /// and lse back whole (pad and guard rows included).
  tile::Status run(const tile::Device &dev, const tile::Kernel &kernel,
                   int bm, std::vector<std::uint8_t> &o,
                   std::vector<std::uint8_t> &lse);

  /// Launches with heads_kv = `headsKv` instead of the case's (no wait):
  /// arguments the kernel's require(...) must refuse before the GPU runs.
  tile::Status launchWithHeadsKv(const tile::Kernel &kernel, int bm,
                                 int headsKv);
  /// The same with sm_scale = `smScale`.
  tile::Status launchWithScale(const tile::Kernel &kernel, int bm,
                               float smScale);

  Layout qLayout, kLayout;

private:
  std::vector<tile::KernelArg> arguments() const;
  std::array<unsigned, 3> grid(int bm) const;

  const VariantCase *case_ = nullptr;
  bool sparse_ = false;
  int maskBatch_ = 1, maskHeads_ = 1, maxBlocks_ = 0;
  tile::DeviceBuffer q_, k_, v_, o_, lse_, sinks_, auxF_, auxI_;
  tile::DeviceBuffer kvNum_, kvIdx_, fullNum_, fullIdx_;
};

/// The dtype's bytes of `logical` ([B, H, S, D]) placed at `layout`, NaN
/// everywhere else (pad rows and the guard).
std::vector<std::uint8_t> toLayout(DType t, const std::vector<float> &logical,
                                   const Layout &layout, int batch, int heads,
                                   int seqlen, int d);

} // namespace tilegpu
