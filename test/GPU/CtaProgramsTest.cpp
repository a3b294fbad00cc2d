//===- CtaProgramsTest.cpp - cta_programs with shared temporaries ---------===//
//
//   tile-gpu-cta-programs
//
// JIT-compiles a small kernel that reads K through a TMA ring (producer,
// persistent) and ends in a reduction across its warps, which goes through
// shared memory and a CTA barrier; with cta_programs = 3 each of a CTA's
// three programs needs its own temporaries and barrier. Checks that the
// output of cta_programs = 3 (and 2) equals that of cta_programs = 1 bit
// for bit, and that the latter matches a host reference, on sequence
// lengths that leave spare programs in a CTA and partial key blocks.
//
// Exit: 0 passed, 1 a failure, 77 no GPU of sm_90a (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "TestDevice.h"

#include "tile/JIT.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <cstring>
#include <string>
#include <vector>

using namespace tile;

namespace {

constexpr int kBM = 64, kBN = 128, kD = 64, kHeads = 3;

// out[head][query block][c] = sum over the block's rows r < seqlen and key
// blocks n0 of q[r] . k[n0 + c] (keys past seqlen read as zero).
const char *kSource = R"(
kernel colsum<BM = 64, BN = 128, D = 64>(
    q: ptr<bf16>, k: ptr<bf16>, o: ptr<f32>, seqlen: i32) {
  let base = i64(program_id(1)) * i64(seqlen) * D;
  let rows = program_id(0) * BM + iota(BM);
  let cols = iota(D);
  let qt = load(q + base + rows[:, None] * D + cols[None, :],
                mask: (rows < seqlen)[:, None], other: 0);
  var acc = zeros([BM, BN], f32);
  for n0 in range(0, seqlen, BN) {
    let keys = n0 + iota(BN);
    let kt = load(k + base + keys[None, :] * D + cols[:, None],
                  mask: (keys < seqlen)[None, :], other: 0);
    acc = dot(qt, kt, acc);
  }
  let p = program_id(1) * num_programs(0) + program_id(0);
  store(o + p * BN + iota(BN), reduce_sum(acc, axis: 0));
}
)";

/// Runs the kernel built with cta_programs = `members` on `seqlen`;
/// false (after a FAIL line) on any error.
bool run(JIT &jit, const Device &dev, int members, int seqlen,
         const std::vector<std::uint16_t> &q, const std::vector<std::uint16_t> &k,
         std::vector<float> &out) {
  std::string what = "cta_programs = " + std::to_string(members) +
                     ", seqlen " + std::to_string(seqlen);
  auto fail = [&](const std::string &why) {
    std::printf("FAIL: %s: %s\n", what.c_str(), why.c_str());
    return false;
  };
  tile::Schedule schedule; // a producer warpgroup, persistent programs
  schedule.producer = true;
  schedule.persistent = true;
  schedule.ctaPrograms = members;
  Expected<CompiledKernelRef> compiled = jit.compileSource(
      kSource, "cta_programs.tile", {}, "", dev.archString(), schedule);
  if (!compiled)
    return fail("compile: " + compiled.error());
  Expected<Kernel> kernel = jit.load(dev, **compiled);
  if (!kernel)
    return fail("load: " + kernel.error());
  int expectBlock = 32 * (4 * members + 4);
  if (kernel->manifest().blockSize != expectBlock)
    return fail("block of " + std::to_string(kernel->manifest().blockSize) +
                " threads, expected " + std::to_string(expectBlock));
  unsigned nmb = unsigned((seqlen + kBM - 1) / kBM);
  // Inputs with a guard of rows (the TMA maps span the allocation).
  Expected<DeviceBuffer> dq = DeviceBuffer::allocate(dev, (q.size() + 256 * kD) * 2);
  Expected<DeviceBuffer> dk = DeviceBuffer::allocate(dev, (k.size() + 256 * kD) * 2);
  Expected<DeviceBuffer> dout =
      DeviceBuffer::allocate(dev, std::size_t(kHeads) * nmb * kBN * 4);
  if (!dq || !dk || !dout)
    return fail(!dq ? dq.error() : !dk ? dk.error() : dout.error());
  std::vector<std::uint16_t> qg = q, kg = k;
  qg.resize(q.size() + 256 * kD, 0);
  kg.resize(k.size() + 256 * kD, 0);
  Status s = dq->upload(qg);
  if (s.ok())
    s = dk->upload(kg);
  if (s.ok())
    s = dout->fill(0xff);
  if (s.ok())
    s = kernel->launch({nmb, unsigned(kHeads), 1},
                       {KernelArg::pointer(*dq, "bf16"), KernelArg::pointer(*dk, "bf16"),
                        KernelArg::pointer(*dout, "f32"), KernelArg::int32(seqlen)});
  if (s.ok())
    s = dev.synchronize();
  out.assign(std::size_t(kHeads) * nmb * kBN, 0.f);
  if (s.ok())
    s = dout->download(out);
  if (!s.ok())
    return fail(s.message());
  return true;
}

} // namespace

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice("sm_90a");
  if (!dev)
    return tilegpu::kSkipExit;
  std::printf("tile-gpu-cta-programs: %s\n", dev->description().c_str());
  JIT jit;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  bool ok = true;
  // 1 and 100: one and two query blocks (a CTA of three with spares); 1000
  // and 4097: partial last key blocks, 16 and 65 query blocks.
  for (int seqlen : {1, 100, 1000, 4097}) {
    std::size_t n = std::size_t(kHeads) * seqlen * kD;
    std::vector<std::uint16_t> q(n), k(n);
    for (auto &x : q)
      x = floatToBFloat16(uni(rng));
    for (auto &x : k)
      x = floatToBFloat16(uni(rng));
    std::vector<float> one, many;
    if (!run(jit, *dev, 1, seqlen, q, k, one)) {
      ok = false;
      continue;
    }
    // Host reference for cta_programs = 1: the sum is bilinear, (sum of
    // the block's q rows) . (sum of the keys c, c + BN, ...).
    int nmb = (seqlen + kBM - 1) / kBM;
    auto at = [&](const std::vector<std::uint16_t> &x, int h, int row, int d) {
      return double(bfloat16ToFloat(x[(std::size_t(h) * seqlen + row) * kD + d]));
    };
    double worst = 0;
    for (int h = 0; h < kHeads; ++h) {
      std::vector<double> ks(std::size_t(kBN) * kD, 0.0);
      for (int key = 0; key < seqlen; ++key)
        for (int d = 0; d < kD; ++d)
          ks[std::size_t(key % kBN) * kD + d] += at(k, h, key, d);
      for (int mb = 0; mb < nmb; ++mb) {
        std::vector<double> qs(kD, 0.0);
        for (int r = mb * kBM; r < std::min(seqlen, (mb + 1) * kBM); ++r)
          for (int d = 0; d < kD; ++d)
            qs[d] += at(q, h, r, d);
        for (int c = 0; c < kBN; ++c) {
          double want = 0;
          for (int d = 0; d < kD; ++d)
            want += qs[d] * ks[std::size_t(c) * kD + d];
          double got = one[(std::size_t(h) * nmb + mb) * kBN + c];
          worst = std::max(worst, std::fabs(got - want) / (1.0 + std::fabs(want)));
        }
      }
    }
    if (!(worst < 1e-3)) {
      std::printf("FAIL: cta_programs = 1, seqlen %d: relative error %.3g "
                  "against the host\n", seqlen, worst);
      ok = false;
    }
    for (int members : {2, 3}) {
      if (!run(jit, *dev, members, seqlen, q, k, many)) {
        ok = false;
        continue;
      }
      std::size_t bad = 0;
      for (std::size_t i = 0; i < one.size(); ++i)
        bad += std::memcmp(&one[i], &many[i], 4) != 0;
      std::printf("%s: cta_programs = %d, seqlen %d: %zu of %zu outputs "
                  "differ from cta_programs = 1 (host error %.2g)\n",
                  bad ? "FAIL" : "PASS", members, seqlen, bad, one.size(), worst);
      ok &= bad == 0;
    }
  }
  std::printf("%s\n", ok ? "tile-gpu-cta-programs: all passed"
                         : "tile-gpu-cta-programs: FAILED");
  return ok ? 0 : 1;
}
