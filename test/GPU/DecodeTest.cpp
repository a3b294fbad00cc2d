//===- DecodeTest.cpp - GPU parity of split-KV decode, paged and contiguous ===//
//
//   tile-gpu-decode [--seed N] [--only NAME] [--quick] [--schedule F=V,...]
//
// JIT-compiles examples/attention/decode.tile and decode_combine.tile
// ($TILEC_SOURCE_DIR/examples/attention, else the source tree) for the
// GPU's arch and checks each configuration (dtype, D, GQA group G, query
// tokens QLEN, page size or contiguous, NHD/HND, split count) against an
// fp64 reference (docs/testing.md, "Serving"):
//   * one batch with lengths 0, 1, 17, two pages, 1000, 4099, 65 537 and
//     random odd ones; QLEN > 1 tokens causal among themselves;
//   * pages handed out shuffled; NaN in spare pages and in the rows of a
//     last page past the length; block-table entries past a sequence's
//     pages hold ids far outside the pool (a read would fault);
//   * O and LSE poisoned first, a guard after [B, QLEN, H] untouched;
//     rel-L2 <= 1e-2 (16-bit) / 1e-5 (f32) per batch, LSE within 1e-3
//     (1e-5) * (1 + |lse|); rows that see no key: O = 0, LSE = -inf;
//   * three launches bitwise equal; the paged kernel bitwise equal to the
//     contiguous one (PAGE = 0) on the same data and splits; the split run
//     within the tolerance of the unsplit one.
//
// --schedule sets fields of decode.tile's schedule (index_ahead: the page
// ids a block further ahead; cp_async: K and V through shared-memory rings).
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "DecodeBatch.h"
#include "Reference.h"
#include "SourcePath.h"
#include "TestDevice.h"
#include "TestOptions.h"

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {

Expected<DeviceBuffer> deviceCopy(const Device &dev, const void *data,
                                  std::size_t bytes) {
  Expected<DeviceBuffer> b =
      DeviceBuffer::allocate(dev, std::max<std::size_t>(bytes, 16));
  if (!b)
    return b;
  if (Status s = b->fill(0xFF); !s.ok())
    return s;
  if (bytes)
    if (Status s = b->copyFromHost(data, bytes); !s.ok())
      return s;
  return b;
}

struct Kernels {
  Kernel decode, combine;
};

/// O and LSE bytes of one run (with the guard after them).
struct Output {
  std::vector<std::uint8_t> o, lse;
  bool operator==(const Output &x) const { return o == x.o && lse == x.lse; }
};

constexpr std::size_t kGuard = 64; // rows after O, values after LSE

/// Launches decode (and the combine when splits > 1) `runs` times into
/// poisoned outputs; `out` gets the first run, `differing` the first run
/// that differed bitwise (0: none).
Status runDecode(const Device &dev, const Kernels &k, const DecodeConfig &c,
                 const DecodeBatch &bt, const DecodeCache &cache, int splits,
                 int runs, Output &out, int &differing) {
  const std::size_t eb = dtypeBytes(c.t), rows = bt.rows();
  std::vector<std::uint8_t> qb = encode(c.t, bt.q);
  Expected<DeviceBuffer> q = deviceCopy(dev, qb.data(), qb.size());
  Expected<DeviceBuffer> kc = deviceCopy(dev, cache.k.data(), cache.k.size());
  Expected<DeviceBuffer> vc = deviceCopy(dev, cache.v.data(), cache.v.size());
  Expected<DeviceBuffer> tab =
      deviceCopy(dev, cache.table.data(), cache.table.size() * 4);
  Expected<DeviceBuffer> lens =
      deviceCopy(dev, bt.lens.data(), bt.lens.size() * 4);
  Expected<DeviceBuffer> o =
      DeviceBuffer::allocate(dev, (rows + kGuard) * bt.d * eb);
  Expected<DeviceBuffer> lse = DeviceBuffer::allocate(dev, (rows + kGuard) * 4);
  Expected<DeviceBuffer> opart =
      DeviceBuffer::allocate(dev, std::max<std::size_t>(rows * splits * bt.d * 4, 16));
  Expected<DeviceBuffer> lpart =
      DeviceBuffer::allocate(dev, std::max<std::size_t>(rows * splits * 4, 16));
  for (const Expected<DeviceBuffer> *x :
       {&q, &kc, &vc, &tab, &lens, &o, &lse, &opart, &lpart})
    if (!*x)
      return x->status();
  const char *tn = dtypeName(c.t);
  std::vector<KernelArg> args = {
      KernelArg::pointer(*q, tn),       KernelArg::pointer(*kc, tn),
      KernelArg::pointer(*vc, tn),      KernelArg::pointer(*tab, "i32"),
      KernelArg::pointer(*lens, "i32"), KernelArg::pointer(*o, tn),
      KernelArg::pointer(*lse, "f32"),  KernelArg::pointer(*opart, "f32"),
      KernelArg::pointer(*lpart, "f32"), KernelArg::int32(bt.hkv),
      KernelArg::int32(cache.maxBlocks), KernelArg::int32(splits),
      KernelArg::float32(float(1.0 / std::sqrt(double(bt.d))))};
  std::vector<KernelArg> combineArgs = {
      KernelArg::pointer(*opart, "f32"), KernelArg::pointer(*lpart, "f32"),
      KernelArg::pointer(*o, tn), KernelArg::pointer(*lse, "f32"),
      KernelArg::int32(int(rows)), KernelArg::int32(splits)};
  const std::array<unsigned, 3> grid = {unsigned(bt.b), unsigned(bt.hkv),
                                        unsigned(splits)};
  // decode_combine.tile: one row per program.
  const std::array<unsigned, 3> combineGrid = {unsigned(rows), 1, 1};
  differing = 0;
  for (int r = 0; r < runs; ++r) {
    Output got;
    for (DeviceBuffer *b : {&*o, &*lse, &*opart, &*lpart})
      if (Status s = b->fill(0xFF); !s.ok())
        return s;
    if (Status s = k.decode.launch(grid, args); !s.ok())
      return s;
    if (splits > 1)
      if (Status s = k.combine.launch(combineGrid, combineArgs); !s.ok())
        return s;
    if (Status s = dev.synchronize(); !s.ok())
      return s.withContext("after the launch");
    got.o.resize(o->size());
    got.lse.resize(lse->size());
    if (Status s = o->copyToHost(got.o.data(), got.o.size()); !s.ok())
      return s;
    if (Status s = lse->copyToHost(got.lse.data(), got.lse.size()); !s.ok())
      return s;
    if (r == 0)
      out = got;
    else if (!differing && !(got == out))
      differing = r;
  }
  return Status();
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", x);
  return buf;
}

void addFailure(std::string &why, const std::string &w) {
  why += (why.empty() ? "" : "; ") + w;
}

} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  const std::string dir = sourcePath("TILEC_DECODE_DIR", "examples/attention",
                                     TILEC_DECODE_DIR);
  if (!parseTestOptions(argc, argv, opt, false, "bf16_d128_g4_q1_page16",
                        /*withSchedule=*/true))
    return 2;
  Schedule schedule;
  if (std::string why = schedule.parse(opt.schedule); !why.empty()) {
    std::fprintf(stderr, "tile-gpu-decode: --schedule %s: %s\n",
                 opt.schedule.c_str(), why.c_str());
    return 2;
  }
  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::printf("tile-gpu-decode: %s, arch %s, seed %llu (rerun: --seed %llu)\n"
              "kernels: %s/decode.tile, decode_combine.tile; schedule %s\n",
              dev->description().c_str(), dev->archString().c_str(), opt.seed,
              opt.seed, dir.c_str(), schedule.str().c_str());
  std::mt19937_64 rng(opt.seed);
  std::vector<DecodeConfig> configs;
  for (DType t : {DType::BF16, DType::F16, DType::F32})
    for (int d : {64, 128}) {
      if (opt.quick && (t == DType::F32 || d == 64))
        continue;
      // {g, qlen, page, nhd, splits}
      for (auto [g, ql, page, nhd, splits] :
           std::vector<std::tuple<int, int, int, bool, int>>{
               {1, 1, 64, false, 1}, {4, 1, 16, true, 1}, {8, 1, 16, true, 3},
               {4, 4, 128, true, 1}, {16, 1, 32, true, 4}, {2, 8, 16, false, 2},
               {4, 2, 256, true, 5},
               // More splits than decode_combine.tile loads at once (S = 32):
               // its online max over two chunks, most splits of the short
               // sequences empty (LSE -inf).
               {1, 1, 16, true, 40}})
        configs.push_back({t, d, g, ql, page, nhd, splits});
    }

  JIT jit;
  Totals totals;
  std::map<std::string, Kernels> cache;
  auto kernelsFor = [&](const DecodeConfig &c, int page) -> Expected<Kernels *> {
    std::string key = c.name() + "/" + std::to_string(page);
    if (auto it = cache.find(key); it != cache.end())
      return &it->second;
    Defines d = {{"T", dtypeName(c.t)}, {"D", std::to_string(c.d)},
                 {"G", std::to_string(c.g)}, {"QLEN", std::to_string(c.qlen)},
                 {"PAGE", std::to_string(page)}, {"NHD", c.nhd ? "true" : "false"}};
    Expected<CompiledKernelRef> dk =
        jit.compileFile(dir + "/decode.tile", d, "", dev->archString(), schedule);
    if (!dk)
      return Status::error(dk.error());
    Expected<CompiledKernelRef> ck = jit.compileFile(
        dir + "/decode_combine.tile",
        {{"T", dtypeName(c.t)}, {"D", std::to_string(c.d)}}, "",
        dev->archString());
    if (!ck)
      return Status::error(ck.error());
    Expected<Kernel> kd = jit.load(*dev, **dk), kc = jit.load(*dev, **ck);
    if (!kd)
      return kd.status();
    if (!kc)
      return kc.status();
    return &cache.emplace(key, Kernels{std::move(*kd), std::move(*kc)})
                .first->second;
  };

  for (const DecodeConfig &c : configs) {
    if (c.name().find(opt.only) == std::string::npos)
      continue;
    Expected<Kernels *> paged = kernelsFor(c, c.page);
    Expected<Kernels *> contig = kernelsFor(c, 0);
    if (!paged || !contig) {
      std::string msg = !paged ? paged.error() : contig.error();
      if (c.t == DType::F32)
        std::printf("%s SKIP (the compiler refuses f32: %s)\n", c.name().c_str(),
                    msg.substr(0, msg.find('\n')).c_str());
      else
        report(totals, c.name() + " compile/load", false, msg);
      continue;
    }
    DecodeBatch bt = makeDecodeBatch(rng, c, decodeLengths(rng, c.page, opt.quick));
    DecodeConfig cc = c;
    cc.page = 0;
    DecodeCache pagedCache = layOutCache(bt, c, rng), flat = layOutCache(bt, cc, rng);
    Output out, outFlat, outUnsplit;
    int differing = 0, unused = 0;
    Status s = runDecode(*dev, **paged, c, bt, pagedCache, c.splits, 3, out, differing);
    if (s.ok())
      s = runDecode(*dev, **contig, cc, bt, flat, c.splits, 1, outFlat, unused);
    if (s.ok())
      s = runDecode(*dev, **paged, c, bt, pagedCache, 1, 1, outUnsplit, unused);
    if (!s.ok()) {
      report(totals, c.name(), false, s.message());
      std::printf("stopped early: a launch failed, the CUDA context is unusable\n");
      totals.fatal = true;
      break;
    }
    std::string why;
    double worst = 0;
    for (auto [o, what] : {std::pair{&out, "paged"}, {&outUnsplit, "unsplit"}})
      if (std::string w = checkDecodeOutput(c, bt, o->o, o->lse, worst); !w.empty())
        addFailure(why, what + (": " + w));
    if (differing)
      addFailure(why, "run " + std::to_string(differing) + " differs bitwise from run 0");
    if (!(out == outFlat))
      addFailure(why, "paged differs bitwise from the contiguous cache");
    char line[200];
    std::snprintf(line, sizeof(line), "%-36s B %2d H %2d rel-L2 %s", c.name().c_str(),
                  bt.b, bt.heads(), fmt(worst).c_str());
    report(totals, line, why.empty(), why);
  }
  return summarize(totals, opt.seed, opt.only);
}
