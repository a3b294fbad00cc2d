//===- AttentionBackwardTest.cpp - tile::AttentionBackward, no GPU --------===//
//
// Against the fake driver (FakeCuda.h) and a fake compiler that writes the
// manifests of the three backward kernels: what a plan compiles (arch,
// defines), what it allocates (delta, once), what run() launches (three
// kernels, the last one dQ with its grid and arguments; no allocation, no
// synchronisation), and the argument checks. The GPU test
// AttentionApiTest.cpp checks the numbers against fp64.
//
//===----------------------------------------------------------------------===//

#include "tile/AttentionBackward.h"
#include "AttentionFixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <set>

using namespace tile;
using tiletest::contains;
using tiletest::fake;
using tiletest::fakePath;
using tiletest::kernelDir;
using tiletest::ScopedEnv;

namespace {

/// The backward kernels' manifests (their parameter lists as the .tile
/// files declare them) with distinct blocks: preprocess BM 128, dK/dV BN 32,
/// dQ BM 64, dQ's cast BM 16. Fails for the kernel names in `failing`.
struct FakeBackwardCompiler {
  std::set<std::string> failing;
  std::vector<std::pair<std::string, CompileOptions>> calls;

  CompileFn fn() {
    return [this](const std::string &source, const std::string &filename,
                  const CompileOptions &o, EmitStage) {
      std::size_t at = source.find("\nkernel ");
      at = at == std::string::npos ? 0 : at + 8;
      std::string name = source.substr(at, source.find_first_of("<( ", at) - at);
      calls.push_back({name, o});
      CompileResult r;
      if (failing.count(name)) {
        r.diagnostics = filename + ":1:1: error: fake failure of " + name;
        return r;
      }
      std::string pt = "ptr<" + o.defines.at("T") + ">";
      Manifest &m = r.manifest;
      m.constants = o.defines;
      if (name == "flash_bwd_preprocess") {
        m.params = {{"o", pt}, {"dout", pt}, {"delta", "ptr<f32>"},
                    {"seqlen", "i32"}};
        m.constants["BM"] = "128";
      } else if (name == "flash_bwd_dq_cast") {
        m.params = {{"dq_acc", "ptr<f32>"}, {"dq", pt}, {"seqlen", "i32"}};
        m.constants["BM"] = "16";
      } else {
        m.params = {{"q", pt},    {"k", pt},
                    {"v", pt},    {"dout", pt},
                    {"lse", "ptr<f32>"}, {"delta", "ptr<f32>"}};
        if (name == "flash_bwd_dkdv")
          m.params.insert(m.params.end(), {{"dk", pt}, {"dv", pt}});
        else
          m.params.push_back({"dq", pt});
        m.params.insert(m.params.end(), {{"seqlen", "i32"},
                                         {"sm_scale", "f32"}});
        if (name == "flash_bwd_dkdv")
          m.params.push_back({"dq_acc", "ptr<f32>"});
        m.constants[name == "flash_bwd_dkdv" ? "BN" : "BM"] =
            name == "flash_bwd_dkdv" ? "32" : "64";
      }
      m.gridArgs = {"offset_y"}; // each reads program_id(1), as tilec writes
      m.gridArgsKnown = true;
      m.kernelName = name;
      m.blockSize = 128;
      m.arch = o.arch;
      m.sourceHash = hashHex(source);
      r.ok = true;
      r.ptx = "// fake\n.visible .entry " + name + "(\n)\n{\n ret;\n}\n";
      return r;
    };
  }
};

struct Fixture {
  ScopedEnv driver{"TILEC_CUDA_DRIVER", fakePath()};
  ScopedEnv mode;
  FakeBackwardCompiler compiler;
  std::vector<std::string> lines;
  std::vector<DeviceBuffer> buffers;

  explicit Fixture(const char *m = nullptr) : mode("FAKECUDA_MODE", m) {}

  AttentionOptions options() {
    AttentionOptions o;
    o.kernelDir = kernelDir();
    o.nvtx = false;
    o.log = [this](const std::string &l) { lines.push_back(l); };
    JITOptions j;
    j.diskCache = false;
    j.cubin = false;
    j.debug = [](const std::string &) {};
    o.jit = std::make_shared<JIT>(j, compiler.fn());
    return o;
  }

  /// B=2, H=`heads`, bf16, with fake-driver buffers for every tensor.
  AttentionBackwardParams params(const Device &dev, int d, int seqlen,
                                 int heads = 3) {
    AttentionBackwardParams p;
    p.batch = 2;
    p.heads = heads;
    p.seqlen = seqlen;
    p.headDim = d;
    std::size_t rows = std::size_t(p.batch) * p.heads * std::max(seqlen, 1);
    DevicePtr *ptrs[] = {&p.q,  &p.k,  &p.v,  &p.o, &p.dout,
                         &p.dq, &p.dk, &p.dv, &p.lse};
    for (DevicePtr *ptr : ptrs) {
      auto b = DeviceBuffer::allocate(
          dev, ptr == &p.lse ? rows * 4 : rows * std::size_t(d) * 2);
      EXPECT_TRUE(b.ok()) << b.error();
      *ptr = b->ptr();
      buffers.push_back(b.take());
    }
    return p;
  }
};

Device openDevice() {
  auto dev = Device::open();
  EXPECT_TRUE(dev.ok()) << dev.error();
  return dev.take();
}

float asFloat(unsigned long long bits) {
  float f;
  std::uint32_t b = std::uint32_t(bits);
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(AttentionBackwardTest, PlansThreeKernelsAndRunsWithoutAllocating) {
  Fixture f;
  ASSERT_TRUE(fake());
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 128, 1000);
  p.causal = true;
  int allocs = fake()->allocs;
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(b->kernelName(), "flash_bwd");
  // The workspace: delta, [B*H, S] f32, allocated here and only here.
  EXPECT_EQ(fake()->allocs, allocs + 1);
  EXPECT_EQ(fake()->lastAllocBytes, 6u * 1000 * 4);
  DevicePtr delta = fake()->lastAllocPtr;
  ASSERT_EQ(f.compiler.calls.size(), 3u);
  const char *order[] = {"flash_bwd_preprocess", "flash_bwd_dkdv",
                         "flash_bwd_dq"};
  for (int i = 0; i < 3; ++i) {
    const auto &[name, o] = f.compiler.calls[i];
    EXPECT_EQ(name, order[i]);
    EXPECT_EQ(o.arch, "sm_90a");
    EXPECT_EQ(o.defines.at("D"), "128");
    EXPECT_EQ(o.defines.at("T"), "bf16");
    EXPECT_EQ(o.defines.count("CAUSAL"), i == 0 ? 0u : 1u);
    if (i > 0) {
      EXPECT_EQ(o.defines.at("CAUSAL"), "true");
    }
    // dK/dV and dQ take their sm_90a config table's schedule
    // (examples/attention/configs/flash_bwd_*.sm_90a.json: K, V and Q, dO
    // in shared memory); preprocess has no table.
    EXPECT_EQ(o.schedule.tmaA, i > 0) << name;
  }
  ASSERT_EQ(f.lines.size(), 1u);
  EXPECT_EQ(f.lines[0], "attention backward: flash_bwd_preprocess, "
                        "flash_bwd_dkdv, flash_bwd_dq (BM=64 BN=32, sm_90a; "
                        "flash_bwd_dkdv: default; flash_bwd_dq: default)");

  FakeCudaState before = *fake();
  ASSERT_TRUE(b->run().ok());
  EXPECT_EQ(fake()->launches, before.launches + 3);
  EXPECT_EQ(fake()->allocs, before.allocs);
  EXPECT_EQ(fake()->ctxSyncs, before.ctxSyncs);
  // dK/dV's dq_acc (read only with ATOMIC_DQ) is null here.
  const FakeLaunch &dkdv = fake()->launchLog[(before.launches + 1) % 8];
  ASSERT_EQ(dkdv.paramCount, 12); // 11 and offset_y (grids over 65535)
  EXPECT_EQ(dkdv.params[10], 0u);
  // The last launch is dQ: grid (ceil(S / 64), B*H), 9 arguments and offset_y.
  EXPECT_EQ(fake()->grid[0], (1000u + 63) / 64);
  EXPECT_EQ(fake()->grid[1], 6u);
  EXPECT_EQ(fake()->grid[2], 1u);
  ASSERT_EQ(fake()->paramCount, 10);
  EXPECT_EQ(fake()->params[0], p.q);
  EXPECT_EQ(fake()->params[4], p.lse);
  EXPECT_EQ(fake()->params[5], delta);
  EXPECT_EQ(fake()->params[6], p.dq);
  EXPECT_EQ(fake()->params[7], 1000u);
  EXPECT_FLOAT_EQ(asFloat(fake()->params[8]), float(1 / std::sqrt(128.0)));

  // Other pointers, the same shape: launched on them.
  AttentionBackwardParams q = p;
  q.dq = p.dk;
  q.scale = 0;
  ASSERT_TRUE(b->run(q).ok());
  EXPECT_EQ(fake()->params[6], p.dk);
}

TEST(AttentionBackwardTest, GqaSumsEachGroupInTheDkDvKernel) {
  Fixture f;
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 64, 300); // B = 2, H = 3
  p.headsKv = 1;                                       // MQA: G = 3
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  ASSERT_EQ(f.compiler.calls.size(), 3u);
  EXPECT_EQ(f.compiler.calls[0].second.defines.count("G"), 0u); // per query head
  EXPECT_EQ(f.compiler.calls[1].second.defines.at("G"), "3");
  EXPECT_EQ(f.compiler.calls[2].second.defines.at("G"), "3");
  int before = fake()->launches;
  ASSERT_TRUE(b->run().ok());
  ASSERT_EQ(fake()->launches, before + 3);
  // dK/dV: one program per key block of each KV head (B * H_kv = 2); dQ:
  // per query head (B * H = 6).
  EXPECT_EQ(fake()->launchLog[(before + 1) % 8].grid[1], 2u);
  EXPECT_EQ(fake()->launchLog[(before + 2) % 8].grid[1], 6u);

  AttentionBackwardParams q = p;
  q.headsKv = 3;
  EXPECT_TRUE(contains(b->run(q).message(), "differ from the plan's")) << b->run(q).message();
  q.headsKv = 2;
  auto bad = AttentionBackward::plan(dev, q, f.options());
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error(), "heads_kv 2 must divide heads 3")) << bad.error();
}

TEST(AttentionBackwardTest, AtomicDqAddsInTheDkDvPassAndCasts) {
  Fixture f;
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 64, 300); // B = 2, H = 3
  p.headsKv = 1;                                       // MQA: G = 3
  p.deterministic = false;
  int allocs = fake()->allocs;
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  // delta, then dQ's f32 accumulator [B*H, S, D], zeroed at plan time.
  EXPECT_EQ(fake()->allocs, allocs + 2);
  EXPECT_EQ(fake()->lastAllocBytes, 6u * 300 * 64 * 4);
  DevicePtr acc = fake()->lastAllocPtr;
  const float *accHost = reinterpret_cast<const float *>(acc);
  EXPECT_TRUE(std::all_of(accHost, accHost + 6 * 300 * 64,
                          [](float x) { return x == 0.0f; }));
  ASSERT_EQ(f.compiler.calls.size(), 3u);
  EXPECT_EQ(f.compiler.calls[1].first, "flash_bwd_dkdv");
  EXPECT_EQ(f.compiler.calls[1].second.defines.at("ATOMIC_DQ"), "true");
  EXPECT_EQ(f.compiler.calls[2].first, "flash_bwd_dq_cast");
  EXPECT_EQ(f.compiler.calls[2].second.defines.count("CAUSAL"), 0u);
  EXPECT_EQ(f.compiler.calls[2].second.defines.at("D"), "64");
  ASSERT_EQ(f.lines.size(), 1u);
  EXPECT_TRUE(contains(f.lines[0], "flash_bwd_dkdv+atomic dQ, "
                                   "flash_bwd_dq_cast (BM=16 BN=32"))
      << f.lines[0];

  int before = fake()->launches;
  ASSERT_TRUE(b->run().ok());
  ASSERT_EQ(fake()->launches, before + 3);
  const FakeLaunch &dkdv = fake()->launchLog[(before + 1) % 8];
  ASSERT_EQ(dkdv.paramCount, 12);
  EXPECT_EQ(dkdv.params[10], acc);
  // The cast: (dq_acc, dq, seqlen) per query block of each query head.
  const FakeLaunch &cast = fake()->launchLog[(before + 2) % 8];
  EXPECT_EQ(cast.grid[0], (300u + 15) / 16);
  EXPECT_EQ(cast.grid[1], 6u);
  ASSERT_EQ(cast.paramCount, 4);
  EXPECT_EQ(cast.params[0], acc);
  EXPECT_EQ(cast.params[1], p.dq);
  EXPECT_EQ(cast.params[2], 300u);

  // A run stopped after dK/dV (the cast's launch fails) leaves partial sums
  // in dq_acc: the next run zeroes it before it launches anything.
  fake()->failLaunch = fake()->launches + 3;
  EXPECT_FALSE(b->run().ok());
  fake()->failLaunch = 0;
  std::memset(reinterpret_cast<void *>(acc), 0x3F, 6 * 300 * 64 * 4);
  ASSERT_TRUE(b->run().ok());
  EXPECT_TRUE(std::all_of(accHost, accHost + 6 * 300 * 64,
                          [](float x) { return x == 0.0f; }));

  // The plan's determinism is part of its shape.
  AttentionBackwardParams q = p;
  q.deterministic = true;
  EXPECT_TRUE(contains(b->run(q).message(), "not deterministic"))
      << b->run(q).message();
}

TEST(AttentionBackwardTest, HeadDim256RunsTheDeterministicKernels) {
  Fixture f;
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 256, 100);
  p.deterministic = false;
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  ASSERT_EQ(f.compiler.calls.size(), 3u);
  EXPECT_EQ(f.compiler.calls[1].second.defines.count("ATOMIC_DQ"), 0u);
  EXPECT_EQ(f.compiler.calls[2].first, "flash_bwd_dq");
  ASSERT_EQ(f.lines.size(), 1u);
  EXPECT_TRUE(contains(f.lines[0], "deterministic: no atomic dQ at head dim "
                                   "256"))
      << f.lines[0];
  ASSERT_TRUE(b->run().ok());
  EXPECT_EQ(fake()->paramCount, 10); // flash_bwd_dq, not the cast
}

TEST(AttentionBackwardTest, Sm80CompilesForSm80) {
  Fixture f("sm80");
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 64, 17);
  p.dtype = DType::F32;
  p.scale = 0.5f;
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  for (const auto &call : f.compiler.calls) {
    EXPECT_EQ(call.second.arch, "sm_80");
    EXPECT_EQ(call.second.defines.at("T"), "f32");
    // No sm_80 table: the kernels' defaults and the default schedule.
    EXPECT_FALSE(call.second.schedule.tmaA);
  }
  ASSERT_EQ(f.lines.size(), 1u);
  EXPECT_EQ(f.lines[0].find("flash_bwd_dkdv:"), std::string::npos)
      << f.lines[0];
  ASSERT_TRUE(b->run().ok());
  EXPECT_FLOAT_EQ(asFloat(fake()->params[8]), 0.5f);
  EXPECT_EQ(fake()->grid[0], 1u);
}

TEST(AttentionBackwardTest, InvalidParamsAreErrors) {
  Fixture f;
  Device dev = openDevice();
  auto expectError = [&](AttentionBackwardParams p, const char *what) {
    auto b = AttentionBackward::plan(dev, p, f.options());
    ASSERT_FALSE(b.ok()) << what;
    EXPECT_TRUE(contains(b.error(), what)) << b.error();
    EXPECT_TRUE(contains(b.error(), "attention backward: ")) << b.error();
  };
  AttentionBackwardParams p = f.params(dev, 64, 100);
  AttentionBackwardParams bad = p;
  bad.headDim = 0; // the forward's check
  expectError(bad, "head dim 0 is outside 1..256");
  bad = p;
  bad.headDim = 80;
  expectError(bad, "head dim 80 is not supported");
  bad = p;
  bad.layout = AttentionLayout::BSHD;
  expectError(bad, "layout bshd is not supported");
  bad = p;
  bad.seqlen = -1;
  expectError(bad, "seqlen (-1) must be >= 0");
  bad = p;
  bad.scale = -1;
  expectError(bad, "must be finite and >= 0");
  EXPECT_TRUE(f.compiler.calls.empty()); // refused before compiling

  AttentionOptions noJit = f.options();
  noJit.jit.reset();
  EXPECT_FALSE(AttentionBackward::plan(dev, p, noJit).ok());

  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  AttentionBackwardParams other = p;
  other.seqlen = 99;
  Status s = b->run(other);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "differ from the plan's")) << s.message();
  other = p;
  other.dv = 0;
  int launches = fake()->launches;
  s = b->run(other);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "must all be set")) << s.message();
  EXPECT_EQ(fake()->launches, launches);
}

TEST(AttentionBackwardTest, BatchHeadsOver65535RunAsSplitLaunches) {
  // B * H = 70000 (B = 2, H = 35000): every kernel's grid y is over the
  // hardware's 65535, so each runs as two launches, the second starting at
  // offset_y = 65535 (the parameter after the kernel's own).
  Fixture f;
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 64, 1, 35000);
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  int first = fake()->launches;
  ASSERT_TRUE(b->run().ok());
  ASSERT_EQ(fake()->launches, first + 6); // preprocess, dK/dV, dQ: two each
  const int kernelParams[] = {4, 11, 9};
  for (int i = 0; i < 6; ++i) {
    const FakeLaunch &l = fake()->launchLog[(first + i) % 8];
    bool second = i % 2;
    EXPECT_EQ(l.grid[0], 1u) << i;
    EXPECT_EQ(l.grid[1], second ? 70000u - 65535u : 65535u) << i;
    ASSERT_EQ(l.paramCount, kernelParams[i / 2] + 1) << i;
    EXPECT_EQ(std::uint32_t(l.params[kernelParams[i / 2]]), second ? 65535u : 0u) << i;
  }
}

TEST(AttentionBackwardTest, Sm75IsRefused) {
  Fixture f("sm75");
  Device dev = openDevice();
  auto b = AttentionBackward::plan(dev, f.params(dev, 64, 10), f.options());
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(contains(b.error(), "compute capability 8.0")) << b.error();
}

TEST(AttentionBackwardTest, CompileFailureNamesTheKernel) {
  Fixture f;
  f.compiler.failing = {"flash_bwd_dkdv"};
  Device dev = openDevice();
  auto b = AttentionBackward::plan(dev, f.params(dev, 64, 10), f.options());
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(contains(b.error(), "flash_bwd_dkdv failed to compile"))
      << b.error();
  EXPECT_TRUE(contains(b.error(), "fake failure of flash_bwd_dkdv"));
}

TEST(AttentionBackwardTest, SeqlenZeroAllocatesAndLaunchesNothing) {
  Fixture f;
  Device dev = openDevice();
  AttentionBackwardParams p = f.params(dev, 64, 0);
  int allocs = fake()->allocs;
  auto b = AttentionBackward::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(fake()->allocs, allocs);
  int launches = fake()->launches;
  ASSERT_TRUE(b->run().ok());
  EXPECT_EQ(fake()->launches, launches);
}

} // namespace
