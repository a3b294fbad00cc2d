//===- AttentionTest.cpp - tile::Attention planning, dispatch, policies ---===//
//
// Against the fake driver (FakeCuda.h) and a fake compiler that writes a
// manifest per kernel name: which kernel a plan picks for an arch, a head
// dim, a layout; the fallback policy and its log lines; what run()
// launches (and that it allocates and synchronises nothing); the guardrail's
// launches and the profiler's summary. The GPU test AttentionApiTest.cpp
// checks the numbers.
//
//===----------------------------------------------------------------------===//

#include "tile/Attention.h"
#include "AttentionFixture.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <set>

using namespace tile;
using tiletest::contains;
using tiletest::fake;
using tiletest::fakePath;
using tiletest::ScopedEnv;

using tiletest::AttentionFixture;
using tiletest::kernelDir;
using tiletest::openDevice;

namespace {

TEST(AttentionTest, Sm90PicksFlashFwdFromTheTable) {
  AttentionFixture f;
  ASSERT_TRUE(fake());
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 128);
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd");
  EXPECT_FALSE(a->usesReference());
  EXPECT_TRUE(a->fallbackReason().empty());
  ASSERT_EQ(f.lines.size(), 1u);
  EXPECT_TRUE(contains(f.lines[0], "attention: flash_fwd (table entry "))
      << f.lines[0];
  EXPECT_TRUE(contains(f.lines[0], "CAUSAL=false D=128 T=bf16")) << f.lines[0];
  EXPECT_TRUE(contains(f.lines[0], ", sm_90a)")) << f.lines[0];
  ASSERT_EQ(f.compiler.calls.size(), 1u); // no reference without a need
  EXPECT_EQ(f.compiler.calls[0].arch, "sm_90a");
  EXPECT_EQ(f.compiler.calls[0].defines.at("D"), "128");

  // run(): one launch, nothing allocated, no synchronisation.
  FakeCudaState before = *fake();
  ASSERT_TRUE(a->run().ok());
  EXPECT_EQ(fake()->launches, before.launches + 1);
  EXPECT_EQ(fake()->allocs, before.allocs);
  EXPECT_EQ(fake()->ctxSyncs, before.ctxSyncs);
  unsigned bm = std::stoul(a->kernel().manifest().constants.at("BM"));
  EXPECT_EQ(fake()->grid[0], (1000 + bm - 1) / bm);
  EXPECT_EQ(fake()->grid[1], 6u);
  EXPECT_EQ(fake()->grid[2], 1u);
  EXPECT_EQ(fake()->paramCount, 7);
  EXPECT_EQ(fake()->params[0], p.q);
  EXPECT_EQ(fake()->params[4], p.lse);
  EXPECT_EQ(a->lastReport().kernel, "flash_fwd");
  EXPECT_FALSE(a->lastReport().guardrail.checked);
}

TEST(AttentionTest, BshdUsesItsKernelAndGrid) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 64, 777, AttentionLayout::BSHD);
  p.causal = true;
  p.dtype = DType::F16;
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd_bshd");
  EXPECT_TRUE(contains(f.lines.at(0), "CAUSAL=true D=64 T=f16"));
  ASSERT_TRUE(a->run().ok());
  EXPECT_EQ(fake()->grid[1], 3u); // H
  EXPECT_EQ(fake()->grid[2], 2u); // B
  EXPECT_EQ(fake()->paramCount, 8);
  EXPECT_EQ(fake()->params[6], 3u); // heads
}

TEST(AttentionTest, HeadDimNotInTheTableFallsBack) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 80, 333);
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd_ref");
  EXPECT_TRUE(a->usesReference());
  ASSERT_EQ(f.lines.size(), 1u);
  EXPECT_TRUE(contains(f.lines[0], "attention: fallback flash_fwd_ref: head "
                                   "dim 80 not in the config table"))
      << f.lines[0];
  // The reference: sm_80 PTX, the padded tile width, the fixed schedule.
  ASSERT_EQ(f.compiler.calls.size(), 1u);
  const CompileOptions &c = f.compiler.calls[0];
  EXPECT_EQ(c.arch, "sm_80");
  EXPECT_EQ(c.defines.at("D"), "80");
  EXPECT_EQ(c.defines.at("DP"), "128");
  EXPECT_EQ(c.defines.at("BSHD"), "false");
  EXPECT_FALSE(c.schedule.tma);
  EXPECT_FALSE(c.schedule.producer);
  EXPECT_EQ(c.schedule.numWarps, 4);
  ASSERT_TRUE(a->run().ok());
  EXPECT_EQ(fake()->grid[0], (333u + 63) / 64);
  EXPECT_EQ(fake()->grid[1], 3u);
  EXPECT_EQ(fake()->grid[2], 2u);
  EXPECT_EQ(a->lastReport().kernel, "flash_fwd_ref");
}

TEST(AttentionTest, PolicyFailIsAnError) {
  AttentionFixture f;
  Device dev = openDevice();
  auto a = Attention::plan(dev, f.params(dev, 80),
                           f.options(FallbackPolicy::Fail));
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(contains(a.error(), "head dim 80 not in the config table"))
      << a.error();
  EXPECT_TRUE(contains(a.error(), "(policy Fail)")) << a.error();
}

TEST(AttentionTest, ForcedReferenceRunsEvenWithPolicyFail) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionOptions o = f.options(FallbackPolicy::Fail);
  o.forceReference = true;
  auto a = Attention::plan(dev, f.params(dev, 128), o);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd_ref");
  EXPECT_TRUE(contains(f.lines.at(0), "fallback flash_fwd_ref: forced"));
}

TEST(AttentionTest, OtherArchFallsBack) {
  AttentionFixture f("sm100");
  Device dev = openDevice();
  auto a = Attention::plan(dev, f.params(dev, 128), f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd_ref");
  EXPECT_TRUE(contains(f.lines.at(0), "fallback flash_fwd_ref: no config "
                                      "table for cc 10.0"))
      << f.lines.at(0);
}

TEST(AttentionTest, Sm75IsRefusedUnderEveryPolicy) {
  // No tilec kernel runs below sm_80, the reference included.
  AttentionFixture f("sm75");
  Device dev = openDevice();
  for (FallbackPolicy policy : {FallbackPolicy::Fail, FallbackPolicy::Fallback,
                                FallbackPolicy::FallbackWarn}) {
    auto a = Attention::plan(dev, f.params(dev, 128), f.options(policy));
    ASSERT_FALSE(a.ok());
    EXPECT_TRUE(contains(a.error(), "compute capability 8.0")) << a.error();
  }
}

TEST(AttentionTest, Sm80UsesItsTable) {
  AttentionFixture f("sm80");
  Device dev = openDevice();
  auto a = Attention::plan(dev, f.params(dev, 64), f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd");
  EXPECT_EQ(f.lines.at(0), "attention: flash_fwd (table default, sm_80)");
  EXPECT_EQ(f.compiler.calls.at(0).arch, "sm_80");
}

TEST(AttentionTest, CompileFailureFallsBackAndSaysWhy) {
  AttentionFixture f;
  f.compiler.failing = {"flash_fwd"};
  Device dev = openDevice();
  auto a = Attention::plan(dev, f.params(dev, 64), f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd_ref");
  EXPECT_TRUE(contains(f.lines.at(0), "attention: fallback flash_fwd_ref: "
                                      "flash_fwd failed to compile: "))
      << f.lines.at(0);
  EXPECT_TRUE(contains(f.lines.at(0), "fake failure of flash_fwd"));
  EXPECT_TRUE(contains(a->fallbackReason(), "failed to compile"));

  // And with the reference failing too: an error naming both.
  AttentionFixture g;
  g.compiler.failing = {"flash_fwd", "flash_fwd_ref"};
  auto b = Attention::plan(dev, g.params(dev, 64), g.options());
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(contains(b.error(), "no kernel can run")) << b.error();
  EXPECT_TRUE(contains(b.error(), "fake failure of flash_fwd_ref"))
      << b.error();
}

TEST(AttentionTest, LoadFailureFallsBack) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionOptions o = f.options();
  // The fake driver refuses images that start with "BAD".
  JITOptions j;
  j.diskCache = false;
  j.cubin = false;
  j.debug = [](const std::string &) {};
  CompileFn inner = f.compiler.fn();
  o.jit = std::make_shared<JIT>(
      j, [inner](const std::string &s, const std::string &n,
                 const CompileOptions &c, EmitStage e) {
        CompileResult r = inner(s, n, c, e);
        if (r.manifest.kernelName == "flash_fwd")
          r.ptx = "BAD" + r.ptx;
        return r;
      });
  auto a = Attention::plan(dev, f.params(dev, 64), o);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flash_fwd_ref");
  EXPECT_TRUE(contains(f.lines.at(0), "flash_fwd failed to load: "))
      << f.lines.at(0);
}

TEST(AttentionTest, InvalidParamsAreErrors) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 64);
  p.headDim = 0;
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(contains(a.error(), "head dim 0 is outside 1..256"));
  p.headDim = 64;
  AttentionOptions noJit = f.options();
  noJit.jit.reset();
  EXPECT_FALSE(Attention::plan(dev, p, noJit).ok());

  auto b = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(b.ok()) << b.error();
  AttentionParams other = p;
  other.seqlen = 999;
  Status s = b->run(other);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "differs from the plan's")) << s.message();
  other = p;
  other.o = 0;
  EXPECT_FALSE(b->run(other).ok());
}

TEST(AttentionTest, MissingLseGetsAScratchBuffer) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 64);
  p.lse = 0;
  int allocs = fake()->allocs;
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(fake()->allocs, allocs + 1);
  ASSERT_TRUE(a->run().ok());
  EXPECT_NE(fake()->params[4], 0u);
}

TEST(AttentionTest, GuardrailLaunchesItsChecks) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionOptions o = f.options();
  o.guardrail = true;
  auto a = Attention::plan(dev, f.params(dev, 64), o);
  ASSERT_TRUE(a.ok()) << a.error();
  // The fast kernel, the reference (for a rerun) and the two check kernels.
  std::set<std::string> kernels;
  for (const CompileOptions &c : f.compiler.calls)
    kernels.insert(c.kernel.empty() ? std::string("(file)") : c.kernel);
  EXPECT_TRUE(kernels.count("nonfinite_count"));
  EXPECT_TRUE(kernels.count("nonfinite_reduce"));
  EXPECT_EQ(f.compiler.calls.size(), 4u);

  int launches = fake()->launches, allocs = fake()->allocs;
  ASSERT_TRUE(a->run().ok());
  EXPECT_EQ(fake()->launches, launches + 3); // attention, count, reduce
  EXPECT_EQ(fake()->allocs, allocs);
  const GuardrailReport &g = a->lastReport().guardrail;
  EXPECT_TRUE(g.checked);
  EXPECT_FALSE(g.fired);
  EXPECT_EQ(g.str(), "guardrail: finite");

  // With the inputs: two more kernels for each of q, k and v.
  AttentionFixture f2;
  AttentionOptions o2 = f2.options(FallbackPolicy::Fail);
  o2.guardrail = true;
  o2.guardrailInputs = true;
  auto b = Attention::plan(dev, f2.params(dev, 64), o2);
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(f2.compiler.calls.size(), 3u); // Fail: no reference to rerun
  launches = fake()->launches;
  ASSERT_TRUE(b->run().ok());
  EXPECT_EQ(fake()->launches, launches + 9);
}

TEST(AttentionTest, ProfileSummarisesEventTimes) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionOptions o = f.options();
  o.profile = true;
  AttentionParams p = f.params(dev, 128, 1024);
  auto a = Attention::plan(dev, p, o);
  ASSERT_TRUE(a.ok()) << a.error();
  for (int i = 0; i < 70; ++i) // more than the ring of 64
    ASSERT_TRUE(a->run().ok());
  ProfileSummary s = a->profileSummary();
  EXPECT_EQ(s.calls, 70u);
  EXPECT_DOUBLE_EQ(s.meanUs, 1500.0); // the fake's 1.5 ms per event pair
  EXPECT_DOUBLE_EQ(s.p50Us, 1500.0);
  double flops = 4.0 * 6 * 1024.0 * 1024 * 128;
  EXPECT_NEAR(s.tflops, flops / 1.5e-3 / 1e12, 1e-9);
  EXPECT_TRUE(contains(s.str(), "attention profile: flash_fwd [bf16 bhsd "
                                "B=2 H=3 S=1024 D=128]: 70 calls"))
      << s.str();
}

TEST(AttentionTest, LocateRow) {
  AttentionParams p;
  p.batch = 2;
  p.heads = 3;
  p.seqlen = 5;
  int b, h, r;
  attention_detail::locateRow(p, (1 * 3 + 2) * 5 + 4, b, h, r); // [BH, S]
  EXPECT_EQ(b, 1);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(r, 4);
  p.layout = AttentionLayout::BSHD;
  attention_detail::locateRow(p, (1 * 5 + 4) * 3 + 2, b, h, r); // [B, S, H]
  EXPECT_EQ(b, 1);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(r, 4);
  EXPECT_EQ(attention_detail::paddedHeadDim(1), 16);
  EXPECT_EQ(attention_detail::paddedHeadDim(64), 64);
  EXPECT_EQ(attention_detail::paddedHeadDim(96), 128);
  EXPECT_EQ(attention_detail::paddedHeadDim(256), 256);
}

TEST(AttentionTest, KernelDirFromTheEnvironment) {
  ScopedEnv dir("TILEC_KERNEL_DIR", "/some/where");
  EXPECT_EQ(defaultKernelDir(), "/some/where");
}

} // namespace
