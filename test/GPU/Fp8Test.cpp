//===- Fp8Test.cpp - fp8 conversions and fp8 dots on the GPU --------------===//
//
//   tile-gpu-fp8
//
// For e4m3 (the "FN" format: no infinities, largest finite 448) and e5m2:
//  - decode: all 256 codes to f32 equal a host decoder (NaN codes: NaN);
//  - encode: about 70 000 f32 values (every f16 value, ±inf, NaN, values
//    past the largest finite, f32 subnormals, random f32) to fp8 equal the
//    host's nearest finite value, ties to even, saturating (NaN: a NaN
//    code); bf16 and f16 sources through `T(x)` too;
//  - the sm_80 lowering (integer arithmetic on the bits) and the sm_90a one
//    (cvt) give the same codes bit for bit, both run on this GPU (sm_80
//    PTX runs on an sm_90 device), and so do 1-element tiles (no pairs);
//  - dot: 64 x 64 x K products of fp8 tiles whose values are small
//    integers (every partial sum exact in f32) equal the host's exactly,
//    on sm_80 (as f16) and on the device's arch (K = 128 on sm_90a: fp8
//    wgmma k32; K = 64 as f16).
//
// Exit: 0 passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "Fp8Host.h"
#include "SourceKernel.h"
#include "TestDevice.h"

#include "tile/JIT.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tile;

namespace {

const char *kSource = R"(
kernel decode<T = f8e4m3, N = 256>(codes: ptr<u8>, out: ptr<f32>) {
  let i = iota(N);
  store(out + i, f32(bitcast(load(codes + i), T)));
}

kernel encode<T = f8e4m3, S = f32, N = 1024>(x: ptr<S>, codes: ptr<u8>, n: i32) {
  let i = program_id(0) * N + iota(N);
  let ok = i < n;
  store(codes + i, bitcast(T(load(x + i, mask: ok)), u8), mask: ok);
}

kernel fp8_dot<T = f8e4m3, M = 64, N = 64, K = 64>(a: ptr<f32>, b: ptr<f32>, out: ptr<f32>) {
  let r = iota(M);
  let c = iota(N);
  let k = iota(K);
  let at = T(load(a + r[:, None] * K + k[None, :]));
  let bt = T(load(b + k[:, None] * N + c[None, :]));
  store(out + r[:, None] * N + c[None, :], dot(at, bt));
}
)";

using tilegpu::Format;
using tilegpu::kE4m3;
using tilegpu::kE5m2;
using tilegpu::decodeHost;
using tilegpu::encodeHost;

using Ctx = tilegpu::SourceTest;

std::optional<Kernel> build(Ctx &t, const char *name, const Defines &d,
                            const std::string &arch) {
  Expected<Kernel> k = tilegpu::loadSourceKernel(t.jit, t.dev, kSource,
                                                 "fp8_test.tile", name, {}, d, arch);
  if (!k)
    return t.fail(k.error()), std::nullopt;
  return std::move(*k);
}

template <typename T>
std::optional<DeviceBuffer> buffer(Ctx &t, const std::vector<T> &host) {
  Expected<DeviceBuffer> b = DeviceBuffer::allocate(t.dev, host.size() * sizeof(T));
  Status s = b ? b->upload(host) : Status();
  if (!b || !s.ok())
    return t.fail(!b ? b.error() : s.message()), std::nullopt;
  return std::move(*b);
}

bool run(Ctx &t, const std::string &what, Status s, const DeviceBuffer &out,
         void *host, std::size_t bytes) {
  if (s.ok())
    s = t.dev.synchronize();
  if (s.ok())
    s = out.copyToHost(host, bytes);
  return s.ok() || t.fail(what + ": " + s.message());
}

std::string describe(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void checkDecode(Ctx &t, const Format &f, const std::string &arch) {
  std::optional<Kernel> k = build(t, "decode", {{"T", f.name}}, arch);
  if (!k)
    return;
  std::vector<std::uint8_t> codes(256);
  for (int c = 0; c < 256; ++c)
    codes[c] = std::uint8_t(c);
  std::vector<float> out(256, 0.0f);
  auto dc = buffer(t, codes), dout = buffer(t, out);
  std::string what = std::string("decode ") + f.name + " (" + arch + ")";
  if (!dc || !dout ||
      !run(t, what,
           k->launch({1, 1, 1}, {KernelArg::pointer(*dc, "u8"),
                                 KernelArg::pointer(*dout, "f32")}),
           *dout, out.data(), out.size() * 4))
    return;
  int bad = 0;
  for (int c = 0; c < 256; ++c) {
    double want = decodeHost(f, unsigned(c));
    bool same = std::isnan(want) ? std::isnan(out[c]) : double(out[c]) == want;
    if (!same && bad++ < 4)
      std::printf("  code 0x%02x: got %s, want %s\n", c,
                  describe(out[c]).c_str(), describe(want).c_str());
  }
  if (bad)
    t.fail(what + ": " + std::to_string(bad) + " codes decode wrongly");
  std::printf("%s: %s (256 codes)\n", bad ? "FAIL" : "PASS", what.c_str());
}

/// Every f16 value, specials, values past the largest finite, f32
/// subnormals and random f32.
std::vector<float> encodeInputs() {
  std::vector<float> v;
  for (std::uint32_t h = 0; h < 0x10000; ++h) { // f16 bits -> f32
    std::uint32_t s = (h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float x;
    if (e == 0)
      x = std::ldexp(float(m), -24);
    else if (e == 31)
      x = m ? std::numeric_limits<float>::quiet_NaN()
            : std::numeric_limits<float>::infinity();
    else
      x = std::ldexp(1.0f + float(m) / 1024.0f, int(e) - 15);
    v.push_back(s ? -x : x);
  }
  for (float x : {448.0f, 449.0f, 463.9f, 464.0f, 465.0f, 480.0f, 1e6f, 57344.0f,
                  59000.0f, 61439.0f, 61440.0f, 70000.0f, 3.4e38f, 1e-40f,
                  -1e-45f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    v.push_back(x);
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-20, 17);
  for (int i = 0; i < 4000; ++i)
    v.push_back((i & 1 ? -1.0f : 1.0f) * std::ldexp(mant(rng), ex(rng)));
  return v;
}

/// Encodes `x` on `arch`, `per` elements per program (a tile of N = per);
/// the codes, or empty after a failure.
std::vector<std::uint8_t> encodeOn(Ctx &t, const Format &f, const std::string &arch,
                                   const std::vector<float> &x, int per = 1024) {
  std::optional<Kernel> k =
      build(t, "encode", {{"T", f.name}, {"N", std::to_string(per)}}, arch);
  if (!k)
    return {};
  std::vector<std::uint8_t> codes(x.size(), 0);
  auto dx = buffer(t, x), dc = buffer(t, codes);
  int n = int(x.size());
  if (!dx || !dc ||
      !run(t, std::string("encode ") + f.name + " (" + arch + ")",
           k->launch({unsigned((n + per - 1) / per), 1, 1},
                     {KernelArg::pointer(*dx, "f32"),
                      KernelArg::pointer(*dc, "u8"), KernelArg::int32(n)}),
           *dc, codes.data(), codes.size()))
    return {};
  return codes;
}

void checkEncode(Ctx &t, const Format &f, const std::vector<std::string> &archs) {
  std::vector<float> x = encodeInputs();
  std::vector<std::vector<std::uint8_t>> got;
  for (const std::string &arch : archs) {
    got.push_back(encodeOn(t, f, arch, x));
    if (got.back().empty())
      return;
    int bad = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      unsigned c = got.back()[i], want = encodeHost(f, double(x[i]));
      bool same = c == want; // NaN too: the canonical 0x7f
      if (!same && bad++ < 4)
        std::printf("  %s: got 0x%02x, want 0x%02x\n", describe(x[i]).c_str(), c,
                    want);
    }
    std::string what = std::string("encode f32 -> ") + f.name + " (" + arch + ")";
    if (bad)
      t.fail(what + ": " + std::to_string(bad) + " values round wrongly");
    std::printf("%s: %s (%zu values: nearest, ties to even, saturating)\n",
                bad ? "FAIL" : "PASS", what.c_str(), x.size());
  }
  // One-element tiles (no pair to convert together) on the device's arch.
  std::vector<float> head(x.begin(), x.begin() + 4096);
  std::vector<std::uint8_t> one = encodeOn(t, f, archs.back(), head, 1);
  bool oneSame = !one.empty() &&
                 std::equal(one.begin(), one.end(), got.back().begin());
  if (!oneSame)
    t.fail(std::string("encode ") + f.name + ": 1-element tiles differ");
  std::printf("%s: encode %s (%s): 1-element tiles give the same codes\n",
              oneSame ? "PASS" : "FAIL", f.name, archs.back().c_str());
  if (got.size() == 2) {
    bool same = got[0] == got[1];
    if (!same)
      t.fail(std::string("encode ") + f.name + ": " + archs[0] + " and " +
             archs[1] + " codes differ");
    std::printf("%s: encode %s: %s and %s codes bitwise equal\n",
                same ? "PASS" : "FAIL", f.name, archs[0].c_str(), archs[1].c_str());
  }
}

/// f16 / bf16 sources: the value of a 16-bit float, encoded, equals the
/// host's encoding of it.
void checkEncode16(Ctx &t, const Format &f, bool bf16, const std::string &arch) {
  const char *s = bf16 ? "bf16" : "f16";
  std::optional<Kernel> k = build(t, "encode", {{"T", f.name}, {"S", s}}, arch);
  if (!k)
    return;
  std::vector<std::uint16_t> x(0x10000);
  for (std::uint32_t i = 0; i < 0x10000; ++i)
    x[i] = std::uint16_t(i);
  std::vector<std::uint8_t> codes(x.size(), 0);
  auto dx = buffer(t, x), dc = buffer(t, codes);
  std::string what = std::string("encode ") + s + " -> " + f.name + " (" + arch + ")";
  if (!dx || !dc ||
      !run(t, what,
           k->launch({64, 1, 1}, {KernelArg::pointer(*dx, s),
                                  KernelArg::pointer(*dc, "u8"),
                                  KernelArg::int32(0x10000)}),
           *dc, codes.data(), codes.size()))
    return;
  int bad = 0;
  for (std::uint32_t i = 0; i < 0x10000; ++i) {
    double v;
    if (bf16) {
      std::uint32_t u = i << 16;
      float fl;
      std::memcpy(&fl, &u, 4);
      v = fl;
    } else {
      std::uint32_t e = (i >> 10) & 0x1f, m = i & 0x3ff;
      v = e == 0    ? std::ldexp(double(m), -24)
          : e == 31 ? (m ? std::nan("") : std::numeric_limits<double>::infinity())
                    : std::ldexp(1.0 + m / 1024.0, int(e) - 15);
      if (i >> 15)
        v = -v;
    }
    unsigned want = encodeHost(f, v);
    if (codes[i] != want && bad++ < 4)
      std::printf("  0x%04x: got 0x%02x, want 0x%02x\n", unsigned(i), codes[i], want);
  }
  if (bad)
    t.fail(what + ": " + std::to_string(bad) + " values round wrongly");
  std::printf("%s: %s (all 65536 values)\n", bad ? "FAIL" : "PASS", what.c_str());
}

void checkDot(Ctx &t, const Format &f, const std::string &arch, int K) {
  std::optional<Kernel> k =
      build(t, "fp8_dot", {{"T", f.name}, {"K", std::to_string(K)}}, arch);
  if (!k)
    return;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> a(64 * K), b(K * 64), out(64 * 64, 0.0f);
  for (float &x : a)
    x = float(d(rng));
  for (float &x : b)
    x = float(d(rng)) * 0.5f;
  auto da = buffer(t, a), db = buffer(t, b), dout = buffer(t, out);
  std::string what = std::string("dot ") + f.name + " 64x64x" +
                     std::to_string(K) + " (" + arch + ")";
  if (!da || !db || !dout ||
      !run(t, what,
           k->launch({1, 1, 1}, {KernelArg::pointer(*da, "f32"),
                                 KernelArg::pointer(*db, "f32"),
                                 KernelArg::pointer(*dout, "f32")}),
           *dout, out.data(), out.size() * 4))
    return;
  int bad = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      double s = 0;
      for (int i = 0; i < K; ++i)
        s += double(a[r * K + i]) * b[i * 64 + c];
      bad += double(out[r * 64 + c]) != s;
    }
  if (bad)
    t.fail(what + ": " + std::to_string(bad) + " elements differ");
  std::printf("%s: %s (exact small integers)\n", bad ? "FAIL" : "PASS", what.c_str());
}

} // namespace

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice();
  if (!dev)
    return tilegpu::kSkipExit;
  std::printf("tile-gpu-fp8: %s\n", dev->description().c_str());
  JIT jit;
  Ctx t{*dev, jit};
  // sm_80 code (software conversions) runs on every device this project
  // targets; the device's own arch adds the hardware conversions.
  std::vector<std::string> archs = {"sm_80"};
  if (dev->archString() != "sm_80")
    archs.push_back(dev->archString());
  for (const Format *f : {&kE4m3, &kE5m2}) {
    for (const std::string &arch : archs) {
      checkDecode(t, *f, arch);
      checkEncode16(t, *f, true, arch);
      checkEncode16(t, *f, false, arch);
      checkDot(t, *f, arch, 64);  // as f16
      checkDot(t, *f, arch, 128); // sm_90a: fp8 wgmma k32
    }
    checkEncode(t, *f, archs);
  }
  std::printf("%s\n", t.ok ? "tile-gpu-fp8: all passed" : "tile-gpu-fp8: FAILED");
  return t.ok ? 0 : 1;
}
