//===- DecodeApiTest.cpp - tile::Decode plan/run, captured in a CUDA graph -===//
//
//   tile-gpu-decode-api [--seed N] [--quick]
//
// tile::Decode (include/tile/Decode.h) on a paged bf16 batch (GQA 4, pages
// of 16, lengths 0 … 4099): the planned split count (the rule of
// decodeSplits) and a forced one (3) both match the fp64 reference. Then
// run() is captured in a CUDA graph on a stream of its own; the cache,
// block table and lengths of a second batch (the same lengths shuffled
// among the sequences, new K/V values) are copied into the same buffers
// and the graph replayed: its output matches the second batch's reference
// and is bitwise equal to an eager run() on it. The capture fails if run()
// allocates or synchronises.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "DecodeBatch.h"
#include "SourcePath.h"
#include "TestDevice.h"
#include "TestOptions.h"

#include "tile/Decode.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace tilegpu;

namespace {

/// The driver calls of stream capture (the runtime has no graph API).
struct GraphApi {
  using Fn = int (*)(...);
  int (*streamCreate)(void **, unsigned) = nullptr;
  int (*beginCapture)(void *, int) = nullptr;
  int (*endCapture)(void *, void **) = nullptr;
  int (*instantiate)(void **, void *, unsigned long long) = nullptr;
  int (*launch)(void *, void *) = nullptr;
  int (*sync)(void *) = nullptr;
  bool load() {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
      h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
      return false;
    auto get = [&](auto &f, const char *name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(h, name));
      return f != nullptr;
    };
    return get(streamCreate, "cuStreamCreate") &&
           get(beginCapture, "cuStreamBeginCapture_v2") &&
           get(endCapture, "cuStreamEndCapture") &&
           get(instantiate, "cuGraphInstantiateWithFlags") &&
           get(launch, "cuGraphLaunch") && get(sync, "cuStreamSynchronize");
  }
};

struct Buffers {
  tile::DeviceBuffer q, k, v, table, lens, o, lse;
};

tile::Status upload(tile::DeviceBuffer &b, const void *data, std::size_t bytes) {
  return b.copyFromHost(data, bytes);
}

/// Copies a batch and its cache into `b` (allocating on first use).
tile::Status load(const tile::Device &dev, Buffers &b, const DecodeConfig &c,
                  const DecodeBatch &bt, const DecodeCache &cache) {
  std::vector<std::uint8_t> q = encode(c.t, bt.q);
  const std::size_t guard = 64, rows = bt.rows();
  struct Item {
    tile::DeviceBuffer *buf;
    const void *data;
    std::size_t bytes, alloc;
  } items[] = {
      {&b.q, q.data(), q.size(), q.size()},
      {&b.k, cache.k.data(), cache.k.size(), cache.k.size()},
      {&b.v, cache.v.data(), cache.v.size(), cache.v.size()},
      {&b.table, cache.table.data(), cache.table.size() * 4, cache.table.size() * 4},
      {&b.lens, bt.lens.data(), bt.lens.size() * 4, bt.lens.size() * 4},
      {&b.o, nullptr, 0, (rows + guard) * bt.d * dtypeBytes(c.t)},
      {&b.lse, nullptr, 0, (rows + guard) * 4}};
  for (Item &it : items) {
    if (!it.buf->ptr()) {
      auto a = tile::DeviceBuffer::allocate(dev, it.alloc);
      if (!a)
        return a.status();
      *it.buf = a.take();
    }
    if (it.bytes)
      if (tile::Status s = upload(*it.buf, it.data, it.bytes); !s.ok())
        return s;
  }
  for (tile::DeviceBuffer *x : {&b.o, &b.lse})
    if (tile::Status s = x->fill(0xFF); !s.ok())
      return s;
  return tile::Status();
}

tile::Status fetch(const tile::Device &dev, const Buffers &b,
                   std::vector<std::uint8_t> &o, std::vector<std::uint8_t> &lse) {
  if (tile::Status s = dev.synchronize(); !s.ok())
    return s;
  o.resize(b.o.size());
  lse.resize(b.lse.size());
  if (tile::Status s = b.o.copyToHost(o.data(), o.size()); !s.ok())
    return s;
  return b.lse.copyToHost(lse.data(), lse.size());
}

} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  if (!parseTestOptions(argc, argv, opt, false, "graph"))
    return 2;
  std::optional<tile::Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::printf("tile-gpu-decode-api: %s, seed %llu\n", dev->description().c_str(),
              opt.seed);
  std::mt19937_64 rng(opt.seed);
  DecodeConfig c{DType::BF16, 128, 4, 1, 16, true, 0};
  std::vector<int> lens = decodeLengths(rng, c.page, /*quick=*/true);
  DecodeBatch b1 = makeDecodeBatch(rng, c, lens);
  DecodeCache cache1 = layOutCache(b1, c, rng);
  std::shuffle(lens.begin(), lens.end(), rng);
  DecodeBatch b2 = makeDecodeBatch(rng, c, lens);
  DecodeCache cache2 = layOutCache(b2, c, rng);

  Totals totals;
  Buffers buf;
  if (tile::Status s = load(*dev, buf, c, b1, cache1); !s.ok()) {
    std::printf("FAIL: upload: %s\n", s.message().c_str());
    return 1;
  }
  tile::DecodeParams p;
  p.batch = b1.b;
  p.kvHeads = b1.hkv;
  p.group = c.g;
  p.queryLen = c.qlen;
  p.headDim = c.d;
  p.pageSize = c.page;
  p.nhd = c.nhd;
  p.maxBlocks = cache1.maxBlocks;
  p.q = buf.q.ptr();
  p.kCache = buf.k.ptr();
  p.vCache = buf.v.ptr();
  p.blockTable = buf.table.ptr();
  p.seqLens = buf.lens.ptr();
  p.o = buf.o.ptr();
  p.lse = buf.lse.ptr();
  tile::DecodeOptions options;
  options.jit = std::make_shared<tile::JIT>();
  options.kernelDir = sourcePath("TILEC_DECODE_DIR", "examples/attention", TILEC_DECODE_DIR);

  for (int forced : {0, 3}) {
    p.splits = forced;
    auto dec = tile::Decode::plan(*dev, p, options);
    std::string name = forced ? "forced 3 splits" : "planned splits";
    if (!dec) {
      report(totals, name, false, dec.error());
      continue;
    }
    std::printf("%s\n", dec->planLine().c_str());
    std::vector<std::uint8_t> o, lse;
    double worst = 0;
    tile::Status s = load(*dev, buf, c, b1, cache1);
    if (s.ok())
      s = dec->run();
    if (s.ok())
      s = fetch(*dev, buf, o, lse);
    std::string why = s.ok() ? checkDecodeOutput(c, b1, o, lse, worst) : s.message();
    report(totals, name + " (" + std::to_string(dec->splits()) + ")", why.empty(), why);
  }

  // Capture one run() in a graph, replay it on the second batch.
  GraphApi g;
  p.splits = 3;
  void *stream = nullptr, *graph = nullptr, *exec = nullptr;
  auto dec = tile::Decode::plan(*dev, p, options);
  if (!g.load() || g.streamCreate(&stream, 1) || !dec) {
    report(totals, "graph setup", false,
           !dec ? dec.error() : "the driver's stream/graph calls are missing or fail");
  } else {
    p.stream = stream;
    std::string why;
    tile::Status s = load(*dev, buf, c, b1, cache1);
    if (s.ok() && g.beginCapture(stream, 0 /* global */))
      why = "cuStreamBeginCapture failed";
    if (why.empty() && s.ok())
      s = dec->run(p); // recorded, not launched
    if (why.empty() && g.endCapture(stream, &graph))
      why = "cuStreamEndCapture failed (run() did something a capture refuses)";
    if (why.empty() && s.ok() && g.instantiate(&exec, graph, 0))
      why = "cuGraphInstantiate failed";
    std::vector<std::uint8_t> o, lse, oEager, lseEager;
    double worst = 0;
    if (why.empty() && s.ok())
      s = load(*dev, buf, c, b2, cache2); // new lengths, table and cache
    if (why.empty() && s.ok() && (g.launch(exec, stream) || g.sync(stream)))
      why = "cuGraphLaunch failed";
    if (why.empty() && s.ok())
      s = fetch(*dev, buf, o, lse);
    if (why.empty() && s.ok())
      why = checkDecodeOutput(c, b2, o, lse, worst);
    if (why.empty() && s.ok()) {
      p.stream = nullptr;
      s = load(*dev, buf, c, b2, cache2);
      if (s.ok())
        s = dec->run(p);
      if (s.ok())
        s = fetch(*dev, buf, oEager, lseEager);
      if (s.ok() && (o != oEager || lse != lseEager))
        why = "the graph replay differs bitwise from an eager run()";
    }
    if (!s.ok())
      why = s.message();
    report(totals, "graph replay with new lengths", why.empty(), why);
  }
  return summarize(totals, opt.seed, opt.only);
}
