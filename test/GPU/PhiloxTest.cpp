//===- PhiloxTest.cpp - Philox4x32-10 on the GPU, and dropout masks ------===//
//
//   tile-gpu-philox
//
// 1. The known-answer vectors of Random123 (kat_vectors, "philox4x32 10":
//    counter and key all zeros, all ones, the digits of pi) from the
//    `philox` builtin, on scalars and on tiles of counters; every lane of
//    the tile (other counters) against the reference below.
// 2. The same seed and offsets give the same dropout mask in two kernels
//    with other tile shapes and program splits (a 1-D kernel of 128
//    offsets per program and a 2-D one of 16 x 64), and both equal the CPU
//    reference of rand(seed, offset) > p (Triton's tl.rand).
//
// Exit: 0 passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "PhiloxRef.h"
#include "SourceKernel.h"
#include "TestDevice.h"

#include "tile/JIT.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace tile;
using tilegpu::philoxRef;
using tilegpu::uniformRef;
using tilegpu::Word4;

namespace {

struct Kat {
  Word4 ctr;
  std::uint32_t k0, k1;
  Word4 want;
};
const Kat kKats[] = {
    {{0, 0, 0, 0}, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     0xffffffff,
     0xffffffff,
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     0xa4093822,
     0x299f31d0,
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

const char *kSource = R"(
// Scalar counters: out[0..3] = the four words.
kernel kat_scalar(seed: u64, c0: u32, c1: u32, c2: u32, c3: u32, out: ptr<u32>) {
  let lane = iota(4);
  let w0 = philox(seed, c0, c1, c2, c3, word: 0);
  let w1 = philox(seed, c0, c1, c2, c3, word: 1);
  let w2 = philox(seed, c0, c1, c2, c3, word: 2);
  let w3 = philox(seed, c0, c1, c2, c3, word: 3);
  store(out + lane, where(lane == 0, w0, where(lane == 1, w1,
                                                where(lane == 2, w2, w3))));
}

// A tile of N counters (ctr holds c0[N], c1[N], c2[N], c3[N]); out the same.
kernel kat_tile<N = 64>(seed: u64, ctr: ptr<u32>, out: ptr<u32>) {
  let i = iota(N);
  let c0 = load(ctr + i);
  let c1 = load(ctr + N + i);
  let c2 = load(ctr + 2 * N + i);
  let c3 = load(ctr + 3 * N + i);
  store(out + i, philox(seed, c0, c1, c2, c3, word: 0));
  store(out + N + i, philox(seed, c0, c1, c2, c3, word: 1));
  store(out + 2 * N + i, philox(seed, c0, c1, c2, c3, word: 2));
  store(out + 3 * N + i, philox(seed, c0, c1, c2, c3, word: 3));
}

// Dropout masks of n offsets, 128 per program.
kernel mask_1d<BLOCK = 128, P = 0.3>(seed: u64, mask: ptr<u8>, u: ptr<f32>, n: i32) {
  let offs = program_id(0) * BLOCK + iota(BLOCK);
  let r = rand(seed, offs);
  store(u + offs, r, mask: offs < n);
  store(mask + offs, where(r > P, u8(1), u8(0)), mask: offs < n);
}

// The same masks as a rows x cols matrix (n = rows * cols), in 16 x 64
// tiles on a 2-D grid.
kernel mask_2d<BM = 16, BN = 64, P = 0.3>(seed: u64, mask: ptr<u8>, rows: i32, cols: i32) {
  let r = program_id(1) * BM + iota(BM);
  let c = program_id(0) * BN + iota(BN);
  let offs = r[:, None] * cols + c[None, :];
  let ok = (r[:, None] < rows) && (c[None, :] < cols);
  store(mask + offs, where(rand(seed, offs) > P, u8(1), u8(0)), mask: ok);
}
)";

std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof(b), "0x%08x", v);
  return b;
}

using Ctx = tilegpu::SourceTest;

std::optional<Kernel> build(Ctx &t, const char *name) {
  Schedule schedule;
  schedule.numWarps = 1;
  Expected<Kernel> k = tilegpu::loadSourceKernel(t.jit, t.dev, kSource,
                                                 "philox_test.tile", name, schedule);
  if (!k)
    return t.fail(k.error()), std::nullopt;
  return std::move(*k);
}

std::uint64_t seedOf(std::uint32_t k0, std::uint32_t k1) {
  return std::uint64_t(k1) << 32 | k0;
}

void checkKatScalar(Ctx &t) {
  std::optional<Kernel> k = build(t, "kat_scalar");
  if (!k)
    return;
  Expected<DeviceBuffer> out = DeviceBuffer::allocate(t.dev, 16);
  if (!out)
    return (void)t.fail(out.error());
  for (const Kat &v : kKats) {
    Status s = k->launch({1, 1, 1},
                         {KernelArg::uint64(seedOf(v.k0, v.k1)),
                          KernelArg::uint32(v.ctr[0]), KernelArg::uint32(v.ctr[1]),
                          KernelArg::uint32(v.ctr[2]), KernelArg::uint32(v.ctr[3]),
                          KernelArg::pointer(*out, "u32")});
    if (s.ok())
      s = t.dev.synchronize();
    std::vector<std::uint32_t> got(4);
    if (s.ok())
      s = out->download(got);
    if (!s.ok())
      return (void)t.fail("kat_scalar: " + s.message());
    for (int w = 0; w < 4; ++w)
      if (got[w] != v.want[w])
        t.fail("kat_scalar key " + hex(v.k0) + " word " + std::to_string(w) +
               ": " + hex(got[w]) + ", expected " + hex(v.want[w]));
  }
  std::printf("%s: kat_scalar, 3 known-answer vectors\n",
              t.ok ? "PASS" : "FAIL");
}

void checkKatTile(Ctx &t) {
  constexpr int N = 64;
  std::optional<Kernel> k = build(t, "kat_tile");
  if (!k)
    return;
  Expected<DeviceBuffer> ctr = DeviceBuffer::allocate(t.dev, 16 * N);
  Expected<DeviceBuffer> out = DeviceBuffer::allocate(t.dev, 16 * N);
  if (!ctr || !out)
    return (void)t.fail(!ctr ? ctr.error() : out.error());
  bool ok = true;
  for (const Kat &v : kKats) {
    // Lane 0 holds the KAT counter, the others counters derived from it.
    std::vector<std::uint32_t> host(4 * N);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < 4; ++j)
        host[j * N + i] = v.ctr[j] + std::uint32_t(i) * (0x01000193u + j);
    Status s = ctr->upload(host);
    if (s.ok())
      s = k->launch({1, 1, 1}, {KernelArg::uint64(seedOf(v.k0, v.k1)),
                                KernelArg::pointer(*ctr, "u32"),
                                KernelArg::pointer(*out, "u32")});
    if (s.ok())
      s = t.dev.synchronize();
    std::vector<std::uint32_t> got(4 * N);
    if (s.ok())
      s = out->download(got);
    if (!s.ok())
      return (void)t.fail("kat_tile: " + s.message());
    for (int i = 0; i < N; ++i) {
      Word4 c = {host[i], host[N + i], host[2 * N + i], host[3 * N + i]};
      Word4 want = i == 0 ? v.want : philoxRef(c, v.k0, v.k1);
      for (int w = 0; w < 4; ++w)
        if (got[w * N + i] != want[w]) {
          ok = t.fail("kat_tile key " + hex(v.k0) + " lane " +
                      std::to_string(i) + " word " + std::to_string(w) + ": " +
                      hex(got[w * N + i]) + ", expected " + hex(want[w]));
          break;
        }
    }
  }
  std::printf("%s: kat_tile, 3 known-answer vectors and %d other counters each\n",
              ok ? "PASS" : "FAIL", N - 1);
}

void checkMasks(Ctx &t) {
  const int rows = 37, cols = 200, n = rows * cols;
  const float p = 0.3f;
  std::optional<Kernel> k1 = build(t, "mask_1d");
  std::optional<Kernel> k2 = build(t, "mask_2d");
  if (!k1 || !k2)
    return;
  Expected<DeviceBuffer> m1 = DeviceBuffer::allocate(t.dev, n);
  Expected<DeviceBuffer> m2 = DeviceBuffer::allocate(t.dev, n);
  Expected<DeviceBuffer> u = DeviceBuffer::allocate(t.dev, 4 * n);
  if (!m1 || !m2 || !u)
    return (void)t.fail("allocate");
  bool ok = true;
  for (std::uint64_t seed : {std::uint64_t(0), std::uint64_t(1234567),
                             std::uint64_t(0xdeadbeefcafef00dull)}) {
    Status s = m1->fill(7);
    if (s.ok())
      s = m2->fill(9);
    if (s.ok())
      s = k1->launch({unsigned((n + 127) / 128), 1, 1},
                     {KernelArg::uint64(seed), KernelArg::pointer(*m1, "u8"),
                      KernelArg::pointer(*u, "f32"), KernelArg::int32(n)});
    if (s.ok())
      s = k2->launch({unsigned((cols + 63) / 64), unsigned((rows + 15) / 16), 1},
                     {KernelArg::uint64(seed), KernelArg::pointer(*m2, "u8"),
                      KernelArg::int32(rows), KernelArg::int32(cols)});
    if (s.ok())
      s = t.dev.synchronize();
    std::vector<std::uint8_t> a(n), b(n);
    std::vector<float> uv(n);
    if (s.ok())
      s = m1->download(a);
    if (s.ok())
      s = m2->download(b);
    if (s.ok())
      s = u->download(uv);
    if (!s.ok())
      return (void)t.fail("masks: " + s.message());
    int kept = 0;
    for (int i = 0; i < n; ++i) {
      Word4 w = philoxRef({std::uint32_t(i), 0, 0, 0}, std::uint32_t(seed),
                          std::uint32_t(seed >> 32));
      float r = uniformRef(w[0]);
      std::uint8_t want = r > p;
      kept += want;
      if (uv[i] != r || !(r >= 0.0f && r < 1.0f)) {
        ok = t.fail("seed " + std::to_string(seed) + " offset " +
                    std::to_string(i) + ": rand " + std::to_string(uv[i]) +
                    ", expected " + std::to_string(r));
        break;
      }
      if (a[i] != want || b[i] != want) {
        ok = t.fail("seed " + std::to_string(seed) + " offset " +
                    std::to_string(i) + ": masks " + std::to_string(a[i]) +
                    " (1-D) and " + std::to_string(b[i]) + " (2-D), expected " +
                    std::to_string(want));
        break;
      }
    }
    // A mask that ignored the seed or the offsets would fail above; one
    // that is constant would keep 0 or n.
    if (kept < n / 2 || kept > n * 9 / 10)
      ok = t.fail("seed " + std::to_string(seed) + ": kept " +
                  std::to_string(kept) + " of " + std::to_string(n));
  }
  std::printf("%s: dropout masks, 1-D (128) and 2-D (16 x 64) kernels, %d "
              "offsets, 3 seeds, against the CPU reference\n",
              ok ? "PASS" : "FAIL", n);
}

} // namespace

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice();
  if (!dev)
    return tilegpu::kSkipExit;
  std::printf("tile-gpu-philox: %s\n", dev->description().c_str());
  // The reference first: it must reproduce the known answers itself.
  for (const Kat &v : kKats)
    if (philoxRef(v.ctr, v.k0, v.k1) != v.want) {
      std::printf("FAIL: the CPU reference misses a known-answer vector\n");
      return 1;
    }
  JIT jit;
  Ctx t{*dev, jit};
  checkKatScalar(t);
  checkKatTile(t);
  checkMasks(t);
  std::printf("%s\n", t.ok ? "tile-gpu-philox: all passed"
                           : "tile-gpu-philox: FAILED");
  return t.ok ? 0 : 1;
}
