//===- LinearAttnTest.cpp - GPU parity of chunked linear attention --------===//
//
//   tile-gpu-linear-attn [--seed N] [--tile PATH] [--only NAME] [--quick]
//
// JIT-compiles examples/attention/linear_attn.tile and linear_attn_decode.tile
// (beside --tile, $TILEC_LINEAR_ATTN_TILE or the source tree) for the GPU's
// arch and checks them against the fp64 recurrent reference
// (LinearAttnReference.h), for bf16 and f16, D = 64 and 128, chunks of 32,
// 64 and 128, φ = elu + 1 or identity, with or without the normaliser and
// the per-head decay γ, causal and non-causal, seqlens 1, 17, 1000, 4097:
//   * O, the final state S and z poisoned with NaN first, guards after them
//     untouched; rel-L2 of O <= 1e-2, of S and z <= 1e-2;
//   * a prefix run's state fed to the INITIAL kernel on the suffix gives the
//     suffix's outputs and the whole sequence's final state;
//   * the segmented forward (linear_attn_segsum.tile, then SEGMENTED
//     linear_attn over segments of 3 chunks) gives the same O, S and z;
//   * the decode kernel run token by token from a zero state gives the
//     reference outputs (rel-L2 <= 1e-2), a state within 1e-4 of fp64, and
//     the chunked forward's final state within 1e-2.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "LinearAttnCases.h"
#include "Reference.h"
#include "SourcePath.h"
#include "TestDevice.h"
#include "TestOptions.h"

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {

/// What a forward launch wrote, decoded, and whether it stayed in bounds.
struct Outputs {
  std::vector<float> o, state, z;
  std::string error; ///< a launch or copy failure (fatal)
  std::string outOfBounds;
};

/// One forward over `in`: linear_attn from `init`/`initZ` (INITIAL kernels),
/// or, with `segsum`, the two segmented passes over segments of `segLen`.
Outputs runForward(const Device &dev, const Kernel &kernel, const LinConfig &c,
                   const Inputs &in, const std::vector<float> *init,
                   const std::vector<float> *initZ,
                   const Kernel *segsum = nullptr, int segLen = 0) {
  Outputs r;
  const std::size_t eb = dtypeBytes(c.t), d = std::size_t(c.d);
  const std::size_t n = std::size_t(kBH) * in.len * d;
  std::vector<std::uint8_t> qb = encode(c.t, in.q), kb = encode(c.t, in.k),
                            vb = encode(c.t, in.v);
  std::vector<float> gammas = {float(kGammas[0]), float(kGammas[1])};
  Expected<DeviceBuffer> q = upload(dev, qb.data(), qb.size());
  Expected<DeviceBuffer> k = upload(dev, kb.data(), kb.size());
  Expected<DeviceBuffer> v = upload(dev, vb.data(), vb.size());
  Expected<DeviceBuffer> o = upload(dev, nullptr, n * eb, kGuard * eb);
  Expected<DeviceBuffer> g = upload(dev, gammas.data(), gammas.size() * 4);
  Expected<DeviceBuffer> si = upload(dev, init ? init->data() : nullptr,
                                     init ? init->size() * 4 : 0);
  Expected<DeviceBuffer> zi = upload(dev, initZ ? initZ->data() : nullptr,
                                     initZ ? initZ->size() * 4 : 0);
  Expected<DeviceBuffer> so = upload(dev, nullptr, kBH * d * d * 4, kGuard * 4);
  Expected<DeviceBuffer> zo = upload(dev, nullptr, kBH * d * 4, kGuard * 4);
  const unsigned nseg = segsum ? unsigned((in.len + segLen - 1) / segLen) : 1;
  Expected<DeviceBuffer> ss = upload(dev, nullptr, nseg * kBH * d * d * 4);
  Expected<DeviceBuffer> sz = upload(dev, nullptr, nseg * kBH * d * 4);
  for (const Expected<DeviceBuffer> *x :
       {&q, &k, &v, &o, &g, &si, &zi, &so, &zo, &ss, &sz})
    if (!*x) {
      r.error = x->error();
      return r;
    }
  const char *tn = dtypeName(c.t);
  std::vector<KernelArg> args = {
      KernelArg::pointer(*q, tn),      KernelArg::pointer(*k, tn),
      KernelArg::pointer(*v, tn),      KernelArg::pointer(*o, tn),
      KernelArg::pointer(*g, "f32"),   KernelArg::pointer(*si, "f32"),
      KernelArg::pointer(*zi, "f32"),  KernelArg::pointer(*so, "f32"),
      KernelArg::pointer(*zo, "f32"),  KernelArg::int32(in.len),
      KernelArg::int32(kHeads),        KernelArg::float32(float(c.scale())),
      KernelArg::pointer(*ss, "f32"),  KernelArg::pointer(*sz, "f32"),
      KernelArg::int32(segLen)};
  std::array<unsigned, 3> grid = {unsigned(c.d / c.bv()), unsigned(kBH), nseg};
  Status s;
  if (segsum)
    s = segsum->launch(grid, {KernelArg::pointer(*k, tn), KernelArg::pointer(*v, tn),
                              KernelArg::pointer(*g, "f32"), KernelArg::pointer(*ss, "f32"),
                              KernelArg::pointer(*sz, "f32"), KernelArg::int32(in.len),
                              KernelArg::int32(kHeads), KernelArg::int32(segLen)});
  if (s.ok())
    s = kernel.launch(grid, args);
  if (s.ok())
    s = dev.synchronize();
  std::vector<std::uint8_t> ob(o->size()), sb(so->size()), zb(zo->size());
  if (s.ok())
    s = o->copyToHost(ob.data(), ob.size());
  if (s.ok())
    s = so->copyToHost(sb.data(), sb.size());
  if (s.ok())
    s = zo->copyToHost(zb.data(), zb.size());
  if (!s.ok()) {
    r.error = s.message();
    return r;
  }
  if (!untouched(ob, n * eb))
    r.outOfBounds += " O";
  if (!untouched(sb, kBH * d * d * 4))
    r.outOfBounds += " state";
  if (!untouched(zb, c.norm ? kBH * d * 4 : 0))
    r.outOfBounds += " z";
  r.o = decode(c.t, ob.data(), n);
  r.state = decode(DType::F32, sb.data(), kBH * d * d);
  r.z = decode(DType::F32, zb.data(), kBH * d);
  return r;
}

struct Kernels {
  JIT &jit;
  const Device &dev;
  std::string fwdPath, decodePath, segsumPath;
  std::map<std::string, Expected<Kernel>> cache;

  /// The forward (INITIAL as given), the decode kernel, or (`segmented`)
  /// the SEGMENTED forward and, as `decode`, its segsum pass, of `c`,
  /// compiled once; the error text of a failed compile.
  const Expected<Kernel> &get(const LinConfig &c, bool decode, bool initial,
                              bool segmented = false) {
    std::string key = (decode && !segmented ? "decode_" + c.decodeName()
                                            : (decode ? "segsum_" : "") + c.name()) +
                      (initial ? "_initial" : "") + (segmented ? "_seg" : "");
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second;
    auto b = [](bool x) { return std::string(x ? "true" : "false"); };
    Defines defs = {{"T", dtypeName(c.t)},      {"D", std::to_string(c.d)},
                    {"BV", std::to_string(c.bv())},
                    {"FEATURE", c.elu ? "1" : "0"}, {"NORMALIZE", b(c.norm)},
                    {"DECAY", b(c.decay)}};
    if (!decode || segmented)
      defs["C"] = std::to_string(c.c);
    if (!decode) {
      defs["INITIAL"] = b(initial);
      defs["NONCAUSAL"] = b(c.noncausal);
      defs["SEGMENTED"] = b(segmented);
    }
    Schedule sched;
    sched.numWarps = decode && !segmented ? 4 : c.d == 64 ? 4 : 8;
    Expected<CompiledKernelRef> compiled = jit.compileFile(
        segmented && decode ? segsumPath : decode ? decodePath : fwdPath, defs,
        "", dev.archString(), sched);
    Expected<Kernel> k = compiled ? jit.load(dev, **compiled)
                                  : Expected<Kernel>(Status::error(compiled.error()));
    return cache.emplace(key, std::move(k)).first->second;
  }
};

void runConfig(Kernels &ks, const LinConfig &c, const std::vector<int> &lens,
               std::mt19937_64 &rng, Totals &totals) {
  const Expected<Kernel> &fwd = ks.get(c, false, false);
  if (!fwd)
    return report(totals, c.name() + " compile", false, fwd.error());
  for (int len : lens) {
    Inputs in = makeInputs(rng, c, len);
    std::vector<double> oRef, sRef, zRef;
    reference(c, in, oRef, sRef, zRef);
    std::string why;
    auto fail = [&](const std::string &w) {
      if (!w.empty())
        why += (why.empty() ? "" : "; ") + w;
    };
    double worst = 0;
    Outputs out = runForward(ks.dev, *fwd, c, in, nullptr, nullptr);
    if (!out.error.empty()) {
      totals.fatal = true;
      return report(totals, c.name(), false, out.error);
    }
    if (!out.outOfBounds.empty())
      fail("written past the end of" + out.outOfBounds);
    fail(check("O", out.o, oRef, 1e-2, worst));
    fail(check("state", out.state, sRef, 1e-2, worst));
    if (c.norm) {
      std::vector<float> z(out.z);
      fail(check("z", z, zRef, 1e-2, worst));
    }
    // Prefix, then the suffix from the prefix's state (INITIAL).
    const Expected<Kernel> *init =
        len > 1 && c.c == 64 ? &ks.get(c, false, true) : nullptr;
    if (init && !*init)
      fail("INITIAL compile: " + init->error());
    if (init && *init) {
      int p = len / 2 + 1;
      Inputs pre = slice(in, c.d, 0, p), suf = slice(in, c.d, p, len - p);
      Outputs a = runForward(ks.dev, *fwd, c, pre, nullptr, nullptr);
      Outputs b = runForward(ks.dev, **init, c, suf, &a.state, &a.z);
      if (!a.error.empty() || !b.error.empty()) {
        totals.fatal = true;
        return report(totals, c.name(), false, a.error + b.error);
      }
      std::vector<double> sufRef;
      if (c.noncausal) { // every query of the suffix sees only the suffix + S
        std::vector<double> s0(a.state.begin(), a.state.end()),
            z0(a.z.begin(), a.z.end());
        reference(c, suf, sufRef, s0, z0);
      } else {
        sufRef.assign(oRef.begin(), oRef.begin()); // rows p.. of every head
        for (int h = 0; h < kBH; ++h)
          sufRef.insert(sufRef.end(),
                        oRef.begin() + std::ptrdiff_t(h * len + p) * c.d,
                        oRef.begin() + std::ptrdiff_t(h + 1) * len * c.d);
      }
      fail(check("O after a prefix", b.o, sufRef, 1e-2, worst));
      if (!c.noncausal)
        fail(check("state after a prefix", b.state, sRef, 1e-2, worst));
    }
    // Segments of 3 chunks: the segsum pass, then every segment at once.
    if (!c.noncausal && c.c == 64 && len > 1) {
      const Expected<Kernel> &seg = ks.get(c, false, false, true);
      const Expected<Kernel> &sum = ks.get(c, true, false, true);
      if (!seg || !sum) {
        fail("segmented compile: " + (seg ? sum.error() : seg.error()));
      } else {
        Outputs g = runForward(ks.dev, *seg, c, in, nullptr, nullptr, &*sum, 3 * c.c);
        if (!g.error.empty()) {
          totals.fatal = true;
          return report(totals, c.name(), false, "segmented: " + g.error);
        }
        if (!g.outOfBounds.empty())
          fail("segmented: written past the end of" + g.outOfBounds);
        fail(check("segmented O", g.o, oRef, 1e-2, worst));
        fail(check("segmented state", g.state, sRef, 1e-2, worst));
        if (c.norm)
          fail(check("segmented z", g.z, zRef, 1e-2, worst));
      }
    }
    if (!c.noncausal && len <= 1000 && c.c == 64) {
      const Expected<Kernel> &dec = ks.get(c, true, false);
      if (!dec)
        fail("decode compile: " + dec.error());
      else
        fail(checkDecode(ks.dev, *dec, c, in, oRef, sRef, out.state, worst,
                         totals));
      if (totals.fatal)
        return report(totals, c.name(), false, why);
    }
    char line[160];
    std::snprintf(line, sizeof(line), "%-34s S %5d worst rel-L2 %s",
                  c.name().c_str(), len, fmt(worst).c_str());
    report(totals, line, why.empty(), why);
  }
}

std::vector<LinConfig> configs(bool quick) {
  std::vector<LinConfig> out;
  for (DType t : {DType::BF16, DType::F16})
    for (int d : {64, 128}) {
      if (quick && d == 128)
        continue;
      for (int c : {32, 64, 128}) {
        out.push_back({t, d, c, true, true, false, false});
        out.push_back({t, d, c, false, false, true, false});
      }
      // Every feature / normaliser / decay combination at C = 64.
      for (int m = 0; m < 8; ++m)
        if (m != 4 && m != 3) // {elu, norm, no decay}, {id, no norm, decay}
          out.push_back({t, d, 64, (m & 4) != 0, (m & 2) != 0, (m & 1) != 0,
                         false});
      out.push_back({t, d, 64, true, true, false, true});
      out.push_back({t, d, 64, false, false, false, true});
    }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  opt.tilePath = sourcePath("TILEC_LINEAR_ATTN_TILE",
                            "examples/attention/linear_attn.tile",
                            TILEC_LINEAR_ATTN_TILE);
  if (!parseTestOptions(argc, argv, opt, true, "bf16_d64_c64_elu_norm"))
    return 2;
  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::string decodePath = opt.tilePath;
  decodePath.replace(decodePath.rfind(".tile"), 5, "_decode.tile");
  std::printf("tile-gpu-linear-attn: %s, arch %s, seed %llu (rerun: --seed "
              "%llu)\nkernels: %s, %s\n",
              dev->description().c_str(), dev->archString().c_str(), opt.seed,
              opt.seed, opt.tilePath.c_str(), decodePath.c_str());
  std::mt19937_64 rng(opt.seed);
  std::vector<int> lens = {1, 17, 1000};
  if (!opt.quick)
    lens.push_back(4097);
  JIT jit;
  std::string segsumPath = opt.tilePath;
  segsumPath.replace(segsumPath.rfind(".tile"), 5, "_segsum.tile");
  Kernels ks{jit, *dev, opt.tilePath, decodePath, segsumPath, {}};
  Totals totals;
  for (const LinConfig &c : configs(opt.quick)) {
    if (c.name().find(opt.only) == std::string::npos)
      continue;
    runConfig(ks, c, lens, rng, totals);
    if (totals.fatal) {
      std::printf("stopped early: a launch failed, the CUDA context is "
                  "unusable\n");
      break;
    }
  }
  return summarize(totals, opt.seed, opt.only);
}
