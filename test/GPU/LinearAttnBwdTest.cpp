//===- LinearAttnBwdTest.cpp - GPU parity of the linear attention backward ===//
//
//   tile-gpu-linear-attn-bwd [--seed N] [--tile PATH] [--only NAME] [--quick]
//
// JIT-compiles the three kernels of examples/attention/linear_attn_bwd.tile
// (--tile, $TILEC_LINEAR_ATTN_BWD_TILE or the source tree) and checks dq, dk
// and dv of causal linear attention without the normaliser against an fp64
// token-by-token backward of the recurrence (S_t = γ S_{t-1} + φ(k_t)ᵀ v_t,
// o_t = s·φ(q_t) S_t; the gradient state G_t = γ G_{t+1} + s·φ(q_t)ᵀ dO_t
// from the end), for bf16 and f16, D = 64 and 128, chunks of 32, 64 and
// 128, elu + 1 and identity features, with and without the per-head decay,
// seqlens 1, 17, 1000 (and 2049 without --quick). Gradients are NaN-poisoned
// first with guards after them; rel-L2 <= 1e-2 each.
//
// Exit: 0 all passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "LinearAttnCases.h"
#include "SourcePath.h"
#include "TestDevice.h"
#include "TestOptions.h"

#include "tile/JIT.h"
#include "tile/Runtime.h"

#include <array>
#include <cstdio>
#include <string>
#include <vector>

using namespace tile;
using namespace tilegpu;

namespace {

/// fp64 gradients of one head: q, k, v, dO [len, d] -> dq, dk, dv.
void referenceBackwardHead(const LinConfig &c, int len, const float *q,
                           const float *k, const float *v, const float *dO,
                           double gamma, double *dq, double *dk, double *dv) {
  const int d = c.d;
  const double s = c.scale();
  auto phi = [&](double x) { return linearFeature(c.elu, x); };
  auto dphi = [&](double x) { return !c.elu || x > 0 ? 1.0 : std::exp(x); };
  std::vector<double> st(std::size_t(d) * d, 0.0); // S, then G
  for (int t = 0; t < len; ++t) {                   // dq_t = s φ'(q) dO_t S_tᵀ
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j)
        st[std::size_t(i) * d + j] = gamma * st[std::size_t(i) * d + j] +
                                     phi(k[std::size_t(t) * d + i]) * v[std::size_t(t) * d + j];
    for (int i = 0; i < d; ++i) {
      double acc = 0;
      for (int j = 0; j < d; ++j)
        acc += double(dO[std::size_t(t) * d + j]) * st[std::size_t(i) * d + j];
      dq[std::size_t(t) * d + i] = s * dphi(q[std::size_t(t) * d + i]) * acc;
    }
  }
  std::fill(st.begin(), st.end(), 0.0);
  for (int t = len - 1; t >= 0; --t) { // G_t = γ G_{t+1} + s φ(q_t)ᵀ dO_t
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j)
        st[std::size_t(i) * d + j] = gamma * st[std::size_t(i) * d + j] +
                                     s * phi(q[std::size_t(t) * d + i]) * dO[std::size_t(t) * d + j];
    for (int i = 0; i < d; ++i) {
      double a = 0;
      for (int j = 0; j < d; ++j)
        a += st[std::size_t(i) * d + j] * v[std::size_t(t) * d + j];
      dk[std::size_t(t) * d + i] = dphi(k[std::size_t(t) * d + i]) * a;
    }
    for (int j = 0; j < d; ++j) {
      double a = 0;
      for (int i = 0; i < d; ++i)
        a += phi(k[std::size_t(t) * d + i]) * st[std::size_t(i) * d + j];
      dv[std::size_t(t) * d + j] = a;
    }
  }
}

const char *kKernels[3] = {"linear_attn_bwd_dq", "linear_attn_bwd_dk",
                           "linear_attn_bwd_dv"};

void runConfig(JIT &jit, const Device &dev, const std::string &path,
               const LinConfig &c, const std::vector<int> &lens,
               std::mt19937_64 &rng, Totals &totals) {
  auto b = [](bool x) { return std::string(x ? "true" : "false"); };
  Defines defs = {{"T", dtypeName(c.t)}, {"D", std::to_string(c.d)},
                  {"C", std::to_string(c.c)}, {"BK", std::to_string(c.bv())},
                  {"FEATURE", c.elu ? "1" : "0"}, {"DECAY", b(c.decay)}};
  Schedule sched;
  sched.numWarps = c.d == 64 ? 4 : 8;
  std::vector<Kernel> kernels;
  for (const char *name : kKernels) {
    Expected<CompiledKernelRef> compiled =
        jit.compileFile(path, defs, name, dev.archString(), sched);
    Expected<Kernel> k = compiled ? jit.load(dev, **compiled)
                                  : Expected<Kernel>(Status::error(compiled.error()));
    if (!k)
      return report(totals, c.name() + " " + name, false, k.error());
    kernels.push_back(k.take());
  }
  const std::size_t eb = dtypeBytes(c.t), d = std::size_t(c.d);
  for (int len : lens) {
    Inputs in = makeInputs(rng, c, len);
    const std::size_t n = std::size_t(kBH) * len * d;
    std::vector<float> dO = randomNormal(rng, n);
    roundTo(c.t, dO);
    std::vector<std::vector<double>> ref(3, std::vector<double>(n));
    for (int h = 0; h < kBH; ++h) {
      std::size_t off = std::size_t(h) * len * d;
      referenceBackwardHead(c, len, &in.q[off], &in.k[off], &in.v[off], &dO[off],
                            c.decay ? kGammas[h % kHeads] : 1.0, &ref[0][off],
                            &ref[1][off], &ref[2][off]);
    }
    std::vector<float> gammas = {float(kGammas[0]), float(kGammas[1])};
    std::vector<std::uint8_t> qb = encode(c.t, in.q), kb = encode(c.t, in.k),
                              vb = encode(c.t, in.v), ob = encode(c.t, dO);
    Expected<DeviceBuffer> q = upload(dev, qb.data(), qb.size());
    Expected<DeviceBuffer> k = upload(dev, kb.data(), kb.size());
    Expected<DeviceBuffer> v = upload(dev, vb.data(), vb.size());
    Expected<DeviceBuffer> g = upload(dev, gammas.data(), gammas.size() * 4);
    Expected<DeviceBuffer> go = upload(dev, ob.data(), ob.size());
    Expected<DeviceBuffer> grad = upload(dev, nullptr, n * eb, kGuard * eb);
    for (const Expected<DeviceBuffer> *x : {&q, &k, &v, &g, &go, &grad})
      if (!*x) {
        totals.fatal = true;
        return report(totals, c.name(), false, x->error());
      }
    std::string why;
    double worst = 0;
    const char *what[3] = {"dq", "dk", "dv"};
    for (int w = 0; w < 3; ++w) {
      const char *tn = dtypeName(c.t);
      std::vector<KernelArg> args = {
          KernelArg::pointer(*q, tn),    KernelArg::pointer(*k, tn),
          KernelArg::pointer(*v, tn),    KernelArg::pointer(*go, tn),
          KernelArg::pointer(*grad, tn), KernelArg::pointer(*g, "f32"),
          KernelArg::int32(len),         KernelArg::int32(kHeads),
          KernelArg::float32(float(c.scale()))};
      std::vector<std::uint8_t> out(grad->size());
      Status s = grad->fill(0xFF);
      if (s.ok())
        s = kernels[w].launch({unsigned(c.d / c.bv()), unsigned(kBH), 1}, args);
      if (s.ok())
        s = dev.synchronize();
      if (s.ok())
        s = grad->copyToHost(out.data(), out.size());
      if (!s.ok()) {
        totals.fatal = true;
        return report(totals, c.name() + " " + what[w], false, s.message());
      }
      std::string fail;
      if (!untouched(out, n * eb))
        fail = std::string(what[w]) + " written past the end";
      else
        fail = check(what[w], decode(c.t, out.data(), n), ref[w], 1e-2, worst);
      if (!fail.empty())
        why += (why.empty() ? "" : "; ") + fail;
    }
    char line[160];
    std::snprintf(line, sizeof(line), "%-30s S %5d worst rel-L2 %s",
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
      for (int m = 0; m < 4; ++m) // every feature map, with and without decay
        out.push_back({t, d, 64, (m & 2) != 0, false, (m & 1) != 0, false});
      for (int c : {32, 128})
        out.push_back({t, d, c, true, false, true, false});
    }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  TestOptions opt;
  opt.tilePath = sourcePath("TILEC_LINEAR_ATTN_BWD_TILE",
                            "examples/attention/linear_attn_bwd.tile",
                            TILEC_LINEAR_ATTN_BWD_TILE);
  if (!parseTestOptions(argc, argv, opt, true, "bf16_d64_c64_elu_decay"))
    return 2;
  std::optional<Device> dev = openTestDevice();
  if (!dev)
    return kSkipExit;
  std::printf("tile-gpu-linear-attn-bwd: %s, arch %s, seed %llu (rerun: --seed "
              "%llu)\nkernel: %s\n",
              dev->description().c_str(), dev->archString().c_str(), opt.seed,
              opt.seed, opt.tilePath.c_str());
  std::mt19937_64 rng(opt.seed);
  std::vector<int> lens = {1, 17, 1000};
  if (!opt.quick)
    lens.push_back(2049);
  JIT jit;
  Totals totals;
  for (const LinConfig &c : configs(opt.quick)) {
    if (c.name().find(opt.only) == std::string::npos)
      continue;
    runConfig(jit, *dev, opt.tilePath, c, lens, rng, totals);
    if (totals.fatal) {
      std::printf("stopped early: a launch failed, the CUDA context is "
                  "unusable\n");
      break;
    }
  }
  return summarize(totals, opt.seed, opt.only);
}
