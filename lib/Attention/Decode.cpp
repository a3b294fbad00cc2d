//===- Decode.cpp - split-KV decode: plan once, launch many ---------------===//
//
// plan() compiles decode.tile and decode_combine.tile for the shape, asks
// the driver how many decode programs an SM runs at once, picks the split
// count and allocates the split workspace (partial O and LSE, f32). run()
// only packs arguments and launches: the lengths and block table are read
// on the GPU, so a captured run() replays with new ones.
//
//===----------------------------------------------------------------------===//

#include "tile/Decode.h"

#include "tile/ConfigTable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace tile {

namespace {
/// decodeSplits's first branch (see there).
bool onePerSM(long programs, long sms, bool paged) {
  return !paged && programs > 0 && 2 * programs <= sms;
}
} // namespace

int decodeSplits(long programs, long blocks, long sms, long perSM,
                 int maxSplits, bool paged) {
  if (programs <= 0 || sms <= 0)
    return 1;
  long limit = std::max(1L, std::min<long>(maxSplits, blocks));
  // Few sequences on a contiguous cache: one program per SM. A program
  // keeps one K/V block in flight, so an SM's read rate hardly grows with
  // a second resident program, while every extra program adds a prologue
  // (Q load, the first block's latency) and a partial for the combine. On
  // an H100 (132 SMs, two decode programs per SM), batch 1 / 8 KV heads /
  // 64k keys read 2.71 TB/s at 16 splits (128 programs) and 2.66 at 29.
  // A paged program alone on an SM reads 0.86x contiguous (its prefetch
  // issues only after the block's math, behind the page-id loads and row
  // arithmetic), and there the second resident program pays (2.65 TB/s
  // at 29 splits, 2.33 at 16).
  if (onePerSM(programs, sms, paged))
    return int(std::min(limit, sms / programs));
  // More: FlashDecoding's rule over every resident slot.
  long slots = sms * std::max(1L, perSM);
  std::vector<double> eff;
  for (long s = 1; s <= limit; ++s) {
    double waves = double(programs * s) / double(slots);
    eff.push_back(waves / std::ceil(waves));
  }
  double best = *std::max_element(eff.begin(), eff.end());
  for (std::size_t i = 0; i < eff.size(); ++i)
    if (eff[i] >= 0.85 * best)
      return int(i + 1);
  return 1;
}

struct Decode::Impl {
  explicit Impl(const Device &d) : device(d) {}
  const Device &device;
  DecodeParams params;
  Kernel decode, combine;
  int splits = 1;
  DeviceBuffer oPart, lsePart, lse;
  std::string planLine;
};

namespace {
const char *typeName(DType t) {
  return t == DType::BF16 ? "bf16" : t == DType::F16 ? "f16" : "f32";
}

/// decode.tile requires sm_scale > 0 at launch; refused here first, with
/// the forward's wording (0 stands for 1/sqrt(headDim)).
std::string checkScale(float scale) {
  if (!(scale >= 0) || std::isinf(scale))
    return fmt::format("scale {} must be finite and >= 0 (0: 1/sqrt(D))",
                       scale);
  return "";
}

std::string checkParams(const DecodeParams &p) {
  if (p.batch < 1 || p.kvHeads < 1 || p.group < 1 || p.queryLen < 1)
    return fmt::format("batch ({}), kvHeads ({}), group ({}) and queryLen ({}) "
                       "must be >= 1", p.batch, p.kvHeads, p.group, p.queryLen);
  if (p.group * p.queryLen > 128)
    return fmt::format("group * queryLen = {} query rows per program; decode.tile "
                       "takes at most 128", p.group * p.queryLen);
  if (p.headDim < 16 || p.headDim > 256 || p.headDim % 8)
    return fmt::format("headDim {} is not a multiple of 8 in [16, 256]", p.headDim);
  if (p.pageSize < 0 || (p.pageSize & (p.pageSize - 1)))
    return fmt::format("pageSize {} is not 0 (contiguous) or a power of two",
                       p.pageSize);
  if (p.maxBlocks < 1)
    return fmt::format("maxBlocks must be >= 1, got {}", p.maxBlocks);
  // Grid (batch, kvHeads, splits): x takes any batch, and y and z over 65535
  // run as split launches; the combine numbers its rows in i32.
  const std::int64_t rows =
      std::int64_t(p.batch) * p.queryLen * p.kvHeads * p.group;
  if (rows > INT32_MAX)
    return fmt::format("batch * queryLen * kvHeads * group = {} query rows "
                       "exceed 2^31 - 1", rows);
  if (p.splits < 0 || p.splits > 65535)
    return fmt::format("splits must be in [0, 65535], got {}", p.splits);
  return checkScale(p.scale);
}
} // namespace

Decode::Decode(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Decode::Decode(Decode &&) noexcept = default;
Decode &Decode::operator=(Decode &&) noexcept = default;
Decode::~Decode() = default;

Expected<Decode> Decode::plan(const Device &device, const DecodeParams &params,
                              DecodeOptions options) {
  if (std::string why = checkParams(params); !why.empty())
    return Status::error("decode: " + why);
  if (!options.jit)
    return Status::error("decode: DecodeOptions::jit is required");
  std::string dir =
      options.kernelDir.empty() ? defaultKernelDir() : options.kernelDir;
  auto impl = std::make_unique<Impl>(device);
  impl->params = params;
  const DecodeParams &p = params;
  // BN and the schedule from the arch's config table, where it has one
  // (keys T, D, PAGED; size: the longest sequence), else the kernel's own.
  long maxLen = long(p.maxBlocks) * (p.pageSize ? p.pageSize : 1);
  KernelConfig config;
  std::string why;
  if (!ConfigTable::lookupIfPresent(
          fmt::format("{}/configs/decode.{}.json", dir, device.archString()),
          {{"T", typeName(p.dtype)},
           {"D", std::to_string(p.headDim)},
           {"PAGED", p.pageSize ? "true" : "false"}},
          maxLen, config, why))
    return Status::error("decode: cannot read the config table: " +
                         why.substr(0, why.find('\n')));
  Defines defines = config.defines;
  for (const auto &[k, v] : Defines{{"T", typeName(p.dtype)},
                                    {"D", std::to_string(p.headDim)},
                                    {"G", std::to_string(p.group)},
                                    {"QLEN", std::to_string(p.queryLen)},
                                    {"PAGE", std::to_string(p.pageSize)},
                                    {"NHD", p.nhd ? "true" : "false"}})
    defines[k] = v;
  Expected<Kernel> dk = options.jit->loadFile(device, dir + "/decode.tile",
                                              defines, "", config.schedule);
  if (!dk)
    return dk.status().withContext("decode: decode.tile");
  // Keys per iteration: the table's BN, else the compiled kernel's.
  long blockKeys = 0;
  if (auto it = defines.find("BN"); it != defines.end())
    blockKeys = std::atol(it->second.c_str());
  else if (auto it = dk->manifest().constants.find("BN");
           it != dk->manifest().constants.end())
    blockKeys = std::atol(it->second.c_str());
  if (blockKeys <= 0)
    return Status::error("decode: no positive BN in the config table or "
                         "decode.tile's manifest");
  Expected<Kernel> ck = options.jit->loadFile(
      device, dir + "/decode_combine.tile",
      {{"T", typeName(p.dtype)}, {"D", std::to_string(p.headDim)}});
  if (!ck)
    return ck.status().withContext("decode: decode_combine.tile");
  impl->decode = dk.take();
  impl->combine = ck.take();

  long blocks = (maxLen + blockKeys - 1) / blockKeys;
  impl->splits = p.splits;
  std::string splitWhy = "DecodeParams::splits";
  if (!impl->splits) {
    Expected<unsigned> perSM = impl->decode.programsPerSM();
    if (!perSM)
      return perSM.status().withContext("decode");
    const long programs = long(p.batch) * p.kvHeads, sms = device.smCount();
    const bool paged = p.pageSize > 0;
    impl->splits = decodeSplits(programs, blocks, sms, long(*perSM), 128, paged);
    splitWhy = onePerSM(programs, sms, paged)
                   ? fmt::format("one program per SM: {} programs, {} SMs",
                                 programs, sms)
                   : fmt::format("FlashDecoding's waves: {} programs, {} "
                                 "slots",
                                 programs, sms * long(*perSM));
  }
  const std::size_t rows =
      std::size_t(p.batch) * p.queryLen * p.kvHeads * p.group;
  if (impl->splits > 1) {
    Expected<DeviceBuffer> o =
        DeviceBuffer::allocate(device, rows * impl->splits * p.headDim * 4);
    Expected<DeviceBuffer> l = DeviceBuffer::allocate(device, rows * impl->splits * 4);
    if (!o || !l)
      return (!o ? o.status() : l.status()).withContext("decode: split workspace");
    impl->oPart = o.take();
    impl->lsePart = l.take();
  }
  if (!p.lse) {
    Expected<DeviceBuffer> l = DeviceBuffer::allocate(device, rows * 4);
    if (!l)
      return l.status().withContext("decode: lse");
    impl->lse = l.take();
  }
  impl->planLine = fmt::format(
      "decode: {} B={} H_KV={} G={} QLEN={} D={} {} {}, {} split{} ({}); "
      "BN={} ({})",
      typeName(p.dtype), p.batch, p.kvHeads, p.group, p.queryLen, p.headDim,
      p.pageSize ? fmt::format("page {}", p.pageSize) : std::string("contiguous"),
      p.nhd ? "nhd" : "hnd", impl->splits, impl->splits > 1 ? "s" : "",
      splitWhy, blockKeys, config.origin);
  return Decode(std::move(impl));
}

Status Decode::run() { return run(impl_->params); }

Status Decode::run(const DecodeParams &params) {
  const DecodeParams &p = params, &planned = impl_->params;
  if (p.batch != planned.batch || p.kvHeads != planned.kvHeads ||
      p.group != planned.group || p.queryLen != planned.queryLen ||
      p.headDim != planned.headDim || p.pageSize != planned.pageSize ||
      p.nhd != planned.nhd || p.maxBlocks != planned.maxBlocks ||
      p.dtype != planned.dtype)
    return Status::error("decode: run() with a shape other than the planned "
                         "one (" + impl_->planLine + ")");
  if (!p.q || !p.kCache || !p.vCache || !p.seqLens || !p.o ||
      (p.pageSize && !p.blockTable))
    return Status::error("decode: a null pointer among q, kCache, vCache, "
                         "seqLens, o (and blockTable when paged)");
  if (std::string why = checkScale(p.scale); !why.empty())
    return Status::error("decode: " + why);
  const int splits = impl_->splits;
  const char *t = typeName(p.dtype);
  DevicePtr lse = p.lse ? p.lse : impl_->lse.ptr();
  // Unused pointer slots get a valid one (the kernel never reads them).
  DevicePtr oPart = splits > 1 ? impl_->oPart.ptr() : p.o;
  DevicePtr lsePart = splits > 1 ? impl_->lsePart.ptr() : lse;
  float scale = p.scale ? p.scale : float(1.0 / std::sqrt(double(p.headDim)));
  std::vector<KernelArg> args = {
      KernelArg::pointer(p.q, t),          KernelArg::pointer(p.kCache, t),
      KernelArg::pointer(p.vCache, t),
      KernelArg::pointer(p.pageSize ? p.blockTable : p.seqLens, "i32"),
      KernelArg::pointer(p.seqLens, "i32"), KernelArg::pointer(p.o, t),
      KernelArg::pointer(lse, "f32"),      KernelArg::pointer(oPart, "f32"),
      KernelArg::pointer(lsePart, "f32"),  KernelArg::int32(p.kvHeads),
      KernelArg::int32(p.maxBlocks),       KernelArg::int32(splits),
      KernelArg::float32(scale)};
  if (Status s = impl_->decode.launch(
          {unsigned(p.batch), unsigned(p.kvHeads), unsigned(splits)}, args,
          p.stream);
      !s.ok())
    return s.withContext("decode");
  if (splits == 1)
    return Status();
  const long rows = long(p.batch) * p.queryLen * p.kvHeads * p.group;
  std::vector<KernelArg> cargs = {
      KernelArg::pointer(oPart, "f32"), KernelArg::pointer(lsePart, "f32"),
      KernelArg::pointer(p.o, t),       KernelArg::pointer(lse, "f32"),
      KernelArg::int32(int(rows)),      KernelArg::int32(splits)};
  // decode_combine.tile: one row per program.
  if (Status s = impl_->combine.launch({unsigned(rows), 1, 1}, cargs, p.stream);
      !s.ok())
    return s.withContext("decode: combine");
  return Status();
}

int Decode::splits() const { return impl_->splits; }
const std::string &Decode::planLine() const { return impl_->planLine; }

} // namespace tile
