//===- AtomicTest.cpp - atomic_add on the GPU: red, vector red, atom -----===//
//
//   tile-gpu-atomic
//
// atomic_add lowers three ways (test/Conversion/atomic-red.tile): `atom`
// per element where the old values are read, `red` where they are not, and
// on sm_90 `red.global.add.v2/.v4.f32` over a thread's consecutive f32.
// Each kernel below runs on a grid whose programs add into the same
// outputs; the inputs are small integers, so every sum is exact in f32
// whatever the order and the result is compared bit for bit:
//  - add_rows: a row-masked 64 x 64 f32 tile (203 rows, 5 programs per
//    row block): out = 5 x, rows past 203 untouched;
//  - add_cols: a 16 x 64 tile masked at column 37 (a bound inside a
//    thread's pair: scalar red), 3 programs: out = 3 x left of it, 0 right;
//  - add_dot: a dot's f32 accumulator (bf16 operands, 3 programs):
//    out = 3 A·B;
//  - add_old: 4 programs read the old values: per element they are
//    {0, x, 2x, 3x} in some order, and out = 4 x;
//  - histogram: an i32 red, counts of positive values in 8 bins.
//
// Exit: 0 passed, 1 a failure, 77 no CUDA driver / GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "SourceKernel.h"
#include "TestDevice.h"

#include "tile/JIT.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tile;

namespace {

const char *kSource = R"(
kernel add_rows<BM = 64, BN = 64>(x: ptr<f32>, out: ptr<f32>, rows: i32) {
  let r = program_id(0) * BM + iota(BM);
  let c = iota(BN);
  let offs = r[:, None] * BN + c[None, :];
  let ok = (r < rows)[:, None];
  atomic_add(out + offs, load(x + offs, mask: ok, other: 0.0), mask: ok);
}

kernel add_cols<BM = 16, BN = 64>(x: ptr<f32>, out: ptr<f32>, cols: i32) {
  let r = iota(BM);
  let c = iota(BN);
  let offs = r[:, None] * BN + c[None, :];
  atomic_add(out + offs, load(x + offs), mask: (c < cols)[None, :]);
}

kernel add_dot<BM = 64, BN = 64, K = 16>(a: ptr<bf16>, b: ptr<bf16>, out: ptr<f32>) {
  let r = iota(BM);
  let c = iota(BN);
  let k = iota(K);
  let acc = dot(load(a + r[:, None] * K + k[None, :]),
                load(b + k[:, None] * BN + c[None, :]));
  atomic_add(out + r[:, None] * BN + c[None, :], acc);
}

kernel add_old<N = 128>(x: ptr<f32>, out: ptr<f32>, olds: ptr<f32>) {
  let i = iota(N);
  let old = atomic_add(out + i, load(x + i));
  store(olds + program_id(0) * N + i, old);
}

kernel histogram<N = 128>(x: ptr<f32>, bins: ptr<i32>, n: i32) {
  let i = program_id(0) * N + iota(N);
  let v = load(x + i, mask: i < n, other: 0.0);
  atomic_add(bins + i % 8, where(v > 0.0, 1, 0), mask: i < n);
}
)";

struct Ctx : tilegpu::SourceTest {
  std::mt19937 rng{20261205};
  /// n integers in [-8, 8] as f32.
  std::vector<float> ints(std::size_t n) {
    std::uniform_int_distribution<int> d(-8, 8);
    std::vector<float> v(n);
    for (float &x : v)
      x = float(d(rng));
    return v;
  }
};

std::optional<Kernel> build(Ctx &t, const char *name) {
  Expected<Kernel> k =
      tilegpu::loadSourceKernel(t.jit, t.dev, kSource, "atomic_test.tile", name);
  if (!k)
    return t.fail(k.error()), std::nullopt;
  return std::move(*k);
}

/// A zero-filled buffer holding `host`'s size in bytes, uploaded if given.
template <typename T>
std::optional<DeviceBuffer> buffer(Ctx &t, const std::vector<T> &host,
                                   bool upload) {
  Expected<DeviceBuffer> b =
      DeviceBuffer::allocate(t.dev, host.size() * sizeof(T));
  Status s = b ? (upload ? b->upload(host) : b->fill(0)) : Status();
  if (!b || !s.ok())
    return t.fail(!b ? b.error() : s.message()), std::nullopt;
  return std::move(*b);
}

bool run(Ctx &t, const char *name, Status s) {
  if (s.ok())
    s = t.dev.synchronize();
  return s.ok() || t.fail(std::string(name) + ": " + s.message());
}

template <typename T>
bool fetch(Ctx &t, const DeviceBuffer &b, std::vector<T> &host) {
  Status s = b.download(host);
  return s.ok() || t.fail(s.message());
}

void checkAddRows(Ctx &t) {
  const int rows = 203, padded = 256, reps = 5;
  std::optional<Kernel> k = build(t, "add_rows");
  if (!k)
    return;
  std::vector<float> x = t.ints(std::size_t(padded) * 64);
  std::vector<float> out(x.size(), 0.0f);
  auto dx = buffer(t, x, true), dout = buffer(t, out, false);
  if (!dx || !dout ||
      !run(t, "add_rows",
           k->launch({padded / 64, reps, 1},
                     {KernelArg::pointer(*dx, "f32"),
                      KernelArg::pointer(*dout, "f32"), KernelArg::int32(rows)})) ||
      !fetch(t, *dout, out))
    return;
  int bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    float want = i < std::size_t(rows) * 64 ? reps * x[i] : 0.0f;
    bad += out[i] != want;
  }
  if (bad)
    t.fail("add_rows: " + std::to_string(bad) + " elements differ from 5 x");
  std::printf("%s: add_rows (row mask, %d rows x 64, %d programs per block)\n",
              bad ? "FAIL" : "PASS", rows, reps);
}

void checkAddCols(Ctx &t) {
  const int cols = 37, reps = 3;
  std::optional<Kernel> k = build(t, "add_cols");
  if (!k)
    return;
  std::vector<float> x = t.ints(16 * 64);
  std::vector<float> out(x.size(), 0.0f);
  auto dx = buffer(t, x, true), dout = buffer(t, out, false);
  if (!dx || !dout ||
      !run(t, "add_cols",
           k->launch({1, reps, 1},
                     {KernelArg::pointer(*dx, "f32"),
                      KernelArg::pointer(*dout, "f32"), KernelArg::int32(cols)})) ||
      !fetch(t, *dout, out))
    return;
  int bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    bad += out[i] != (int(i % 64) < cols ? reps * x[i] : 0.0f);
  if (bad)
    t.fail("add_cols: " + std::to_string(bad) + " elements differ");
  std::printf("%s: add_cols (column mask at %d, %d programs)\n",
              bad ? "FAIL" : "PASS", cols, reps);
}

std::uint16_t bf16Of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return std::uint16_t(u >> 16); // exact for small integers
}

void checkAddDot(Ctx &t) {
  const int reps = 3;
  std::optional<Kernel> k = build(t, "add_dot");
  if (!k)
    return;
  std::vector<float> a = t.ints(64 * 16), b = t.ints(16 * 64);
  std::vector<std::uint16_t> ha(a.size()), hb(b.size());
  std::transform(a.begin(), a.end(), ha.begin(), bf16Of);
  std::transform(b.begin(), b.end(), hb.begin(), bf16Of);
  std::vector<float> out(64 * 64, 0.0f);
  auto da = buffer(t, ha, true), db = buffer(t, hb, true),
       dout = buffer(t, out, false);
  if (!da || !db || !dout ||
      !run(t, "add_dot",
           k->launch({1, reps, 1}, {KernelArg::pointer(*da, "bf16"),
                                    KernelArg::pointer(*db, "bf16"),
                                    KernelArg::pointer(*dout, "f32")})) ||
      !fetch(t, *dout, out))
    return;
  int bad = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      float s = 0;
      for (int i = 0; i < 16; ++i)
        s += a[r * 16 + i] * b[i * 64 + c];
      bad += out[r * 64 + c] != reps * s;
    }
  if (bad)
    t.fail("add_dot: " + std::to_string(bad) + " elements differ from 3 A.B");
  std::printf("%s: add_dot (a dot's accumulator, %d programs)\n",
              bad ? "FAIL" : "PASS", reps);
}

void checkAddOld(Ctx &t) {
  const int n = 128, reps = 4;
  std::optional<Kernel> k = build(t, "add_old");
  if (!k)
    return;
  std::vector<float> x = t.ints(n), out(n, 0.0f), olds(n * reps, 0.0f);
  for (float &v : x)
    v = v == 0 ? 1 : v; // distinct old values per element
  auto dx = buffer(t, x, true), dout = buffer(t, out, false),
       dolds = buffer(t, olds, false);
  if (!dx || !dout || !dolds ||
      !run(t, "add_old",
           k->launch({reps, 1, 1}, {KernelArg::pointer(*dx, "f32"),
                                    KernelArg::pointer(*dout, "f32"),
                                    KernelArg::pointer(*dolds, "f32")})) ||
      !fetch(t, *dout, out) || !fetch(t, *dolds, olds))
    return;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    std::vector<float> seen, want;
    for (int p = 0; p < reps; ++p) {
      seen.push_back(olds[p * n + i]);
      want.push_back(p * x[i]);
    }
    std::sort(seen.begin(), seen.end());
    std::sort(want.begin(), want.end());
    bad += seen != want || out[i] != reps * x[i];
  }
  if (bad)
    t.fail("add_old: " + std::to_string(bad) +
           " elements with wrong old values or sums");
  std::printf("%s: add_old (old values {0, x, 2x, 3x}, %d programs)\n",
              bad ? "FAIL" : "PASS", reps);
}

void checkHistogram(Ctx &t) {
  const int n = 1000;
  std::optional<Kernel> k = build(t, "histogram");
  if (!k)
    return;
  std::vector<float> x = t.ints(n);
  std::vector<std::int32_t> bins(8, 0), want(8, 0);
  for (int i = 0; i < n; ++i)
    want[i % 8] += x[i] > 0;
  auto dx = buffer(t, x, true), dbins = buffer(t, bins, false);
  if (!dx || !dbins ||
      !run(t, "histogram",
           k->launch({(n + 127) / 128, 1, 1},
                     {KernelArg::pointer(*dx, "f32"),
                      KernelArg::pointer(*dbins, "i32"), KernelArg::int32(n)})) ||
      !fetch(t, *dbins, bins))
    return;
  bool good = bins == want;
  if (!good)
    t.fail("histogram: counts differ");
  std::printf("%s: histogram (i32, %d values, 8 bins)\n", good ? "PASS" : "FAIL",
              n);
}

} // namespace

int main() {
  std::optional<Device> dev = tilegpu::openTestDevice();
  if (!dev)
    return tilegpu::kSkipExit;
  std::printf("tile-gpu-atomic: %s\n", dev->description().c_str());
  JIT jit;
  Ctx t{{*dev, jit}};
  checkAddRows(t);
  checkAddCols(t);
  checkAddDot(t);
  checkAddOld(t);
  checkHistogram(t);
  std::printf("%s\n", t.ok ? "tile-gpu-atomic: all passed"
                           : "tile-gpu-atomic: FAILED");
  return t.ok ? 0 : 1;
}
