//===- LinearAttnDecode.cpp - the decode step against the chunked forward -===//
//
// Part of tile-gpu-linear-attn (LinearAttnTest.cpp): linear_attn_decode.tile
// run token by token.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "LinearAttnCases.h"

#include "tile/Runtime.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace tile;

namespace tilegpu {

/// The decode kernel token by token from a zero state over `in` (tokens
/// packed [len, BH, D] so that each step's rows are contiguous): its outputs
/// against the reference, its final state against fp64 and against the
/// chunked forward's `chunkState`. "" or why not; a launch failure sets
/// totals.fatal.
std::string checkDecode(const Device &dev, const Kernel &kernel,
                        const LinConfig &c, const Inputs &in,
                        const std::vector<double> &oRef,
                        const std::vector<double> &sRef,
                        const std::vector<float> &chunkState, double &worst,
                        Totals &totals) {
  const std::size_t eb = dtypeBytes(c.t), d = std::size_t(c.d);
  const std::size_t n = std::size_t(kBH) * in.len * d, row = kBH * d;
  auto pack = [&](const std::vector<float> &x) {
    std::vector<float> out(n);
    for (int t = 0; t < in.len; ++t)
      for (int h = 0; h < kBH; ++h)
        std::copy_n(&x[(std::size_t(h) * in.len + t) * d], d,
                    &out[(std::size_t(t) * kBH + h) * d]);
    return encode(c.t, out);
  };
  std::vector<std::uint8_t> qb = pack(in.q), kb = pack(in.k), vb = pack(in.v);
  std::vector<float> gammas = {float(kGammas[0]), float(kGammas[1])};
  std::vector<float> zeros(kBH * d * d, 0.0f);
  Expected<DeviceBuffer> q = upload(dev, qb.data(), qb.size());
  Expected<DeviceBuffer> k = upload(dev, kb.data(), kb.size());
  Expected<DeviceBuffer> v = upload(dev, vb.data(), vb.size());
  Expected<DeviceBuffer> o = upload(dev, nullptr, n * eb, kGuard * eb);
  Expected<DeviceBuffer> g = upload(dev, gammas.data(), gammas.size() * 4);
  Expected<DeviceBuffer> st = upload(dev, zeros.data(), zeros.size() * 4);
  Expected<DeviceBuffer> z = upload(dev, zeros.data(), row * 4);
  for (const Expected<DeviceBuffer> *x : {&q, &k, &v, &o, &g, &st, &z})
    if (!*x) {
      totals.fatal = true;
      return x->error();
    }
  const char *tn = dtypeName(c.t);
  Status s;
  for (int t = 0; t < in.len && s.ok(); ++t) {
    DevicePtr off = DevicePtr(t) * row * eb;
    std::vector<KernelArg> args = {
        KernelArg::pointer(q->ptr() + off, tn),
        KernelArg::pointer(k->ptr() + off, tn),
        KernelArg::pointer(v->ptr() + off, tn),
        KernelArg::pointer(o->ptr() + off, tn),
        KernelArg::pointer(*g, "f32"),
        KernelArg::pointer(*st, "f32"),
        KernelArg::pointer(*z, "f32"),
        KernelArg::int32(kHeads),
        KernelArg::float32(float(c.scale()))};
    s = kernel.launch({unsigned(kBH), 1, 1}, args);
  }
  if (s.ok())
    s = dev.synchronize();
  std::vector<std::uint8_t> ob(o->size());
  std::vector<float> state(kBH * d * d);
  if (s.ok())
    s = o->copyToHost(ob.data(), ob.size());
  if (s.ok())
    s = st->copyToHost(state.data(), state.size() * 4);
  if (!s.ok()) {
    totals.fatal = true;
    return "decode: " + s.message();
  }
  std::string why;
  if (!untouched(ob, n * eb))
    why = "decode wrote past the end of O";
  std::vector<float> packed = decode(c.t, ob.data(), n), got(n);
  for (int t = 0; t < in.len; ++t)
    for (int h = 0; h < kBH; ++h)
      std::copy_n(&packed[(std::size_t(t) * kBH + h) * d], d,
                  &got[(std::size_t(h) * in.len + t) * d]);
  for (std::string w :
       {check("decode O", got, oRef, 1e-2, worst),
        check("decode state", state, sRef, 1e-4, worst),
        check("chunked state vs decode", chunkState,
              std::vector<double>(state.begin(), state.end()), 1e-2, worst)})
    if (!w.empty())
      why += (why.empty() ? "" : "; ") + w;
  return why;
}

} // namespace tilegpu
