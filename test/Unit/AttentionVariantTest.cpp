//===- AttentionVariantTest.cpp - tile::Attention over flex_fwd -----------===//
//
// Against the fake driver and compiler (AttentionFixture.h): which kernel a
// variant plan compiles (flex_fwd.tile, or a generated instance for a score
// mod) with which -D values, the arguments and grid run() launches, the
// reference (flex_fwd under the conservative schedule) and the checks of
// the variant fields. The GPU test AttentionApiTest.cpp checks the numbers.
//
//===----------------------------------------------------------------------===//

#include "AttentionFixture.h"

using namespace tile;
using tiletest::AttentionFixture;
using tiletest::contains;
using tiletest::fake;
using tiletest::openDevice;

namespace {

/// GQA 6:2 with a causal sliding window, [B, S, H, D].
AttentionParams gqaWindow(AttentionFixture &f, const Device &dev) {
  AttentionParams p = f.params(dev, 128, 1000, AttentionLayout::BSHD);
  p.heads = 6;
  p.batch = 1; // the fixture's buffers hold 2 * 3 heads
  p.headsKv = 2;
  p.causal = true;
  p.windowLeft = 255;
  return p;
}

TEST(AttentionVariant, GqaWindowRunsFlexFwdWithItsDefines) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = gqaWindow(f, dev);
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flex_fwd");
  ASSERT_EQ(f.compiler.calls.size(), 1u);
  const CompileOptions &c = f.compiler.calls[0];
  EXPECT_EQ(c.arch, "sm_90a");
  EXPECT_EQ(c.kernel, "flex_fwd");
  EXPECT_EQ(c.defines.at("CAUSAL"), "true");
  EXPECT_EQ(c.defines.at("WINDOW_LEFT"), "255");
  EXPECT_EQ(c.defines.at("WINDOW_RIGHT"), "-1");
  EXPECT_EQ(c.defines.at("SINKS"), "false");
  EXPECT_EQ(c.defines.at("D"), "128");
  EXPECT_TRUE(c.defines.count("BM")); // from flash_fwd's table
  EXPECT_TRUE(contains(f.compiler.filenames[0], "/flex_fwd.tile"));
  EXPECT_TRUE(contains(f.lines[0], "attention: flex_fwd (table")) << f.lines[0];

  ASSERT_TRUE(a->run().ok());
  unsigned bm = std::stoul(a->kernel().manifest().constants.at("BM"));
  EXPECT_EQ(fake()->grid[0], (1000 + bm - 1) / bm);
  EXPECT_EQ(fake()->grid[1], 6u); // H
  EXPECT_EQ(fake()->grid[2], 1u); // B
  EXPECT_EQ(fake()->paramCount, 20);
  EXPECT_EQ(fake()->params[5], 1000u); // seqlen_q
  EXPECT_EQ(fake()->params[6], 1000u); // seqlen_k
  EXPECT_EQ(fake()->params[7], 6u);    // heads
  EXPECT_EQ(fake()->params[8], 2u);    // heads_kv
  // [B, S, H, D] strides in rows of D: q (H, 1, S*H), k (H_kv, 1, S*H_kv).
  EXPECT_EQ(fake()->params[9], 6u);
  EXPECT_EQ(fake()->params[10], 1u);
  EXPECT_EQ(fake()->params[11], 6000u);
  EXPECT_EQ(fake()->params[12], 2u);
  EXPECT_EQ(fake()->params[13], 1u);
  EXPECT_EQ(fake()->params[14], 2000u);
}

TEST(AttentionVariant, ScoreModsAreAGeneratedInstance) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 64, 300);
  p.softcap = 30;
  p.alibiSlopes = p.lse; // any device pointer
  p.seqlenK = 200;
  p.bottomRight = true;
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_EQ(f.compiler.sources.size(), 1u);
  const std::string &src = f.compiler.sources[0];
  EXPECT_TRUE(contains(src, "import \"flex_fwd.tile\";")) << src;
  EXPECT_TRUE(contains(src, "import \"mods.tile\";")) << src;
  EXPECT_TRUE(contains(src, "alibi(tanh_softcap(s, 3.000000000e+01), b, h,"))
      << src;
  EXPECT_TRUE(contains(src, "flex_fwd<SCORE_MOD = attention_score>")) << src;
  EXPECT_EQ(f.compiler.calls[0].kernel, "attention_variant");
  EXPECT_EQ(f.compiler.calls[0].defines.at("BOTTOM_RIGHT"), "true");
  // Named as a file in the kernel directory, so that its imports resolve.
  EXPECT_TRUE(contains(f.compiler.filenames[0], "/attention_variant.tile"));
  ASSERT_TRUE(a->run().ok());
  EXPECT_EQ(fake()->params[5], 300u);
  EXPECT_EQ(fake()->params[6], 200u);
  EXPECT_EQ(fake()->params[9], 1u);   // [B*H, S, D]: q_row
  EXPECT_EQ(fake()->params[10], 300u); // q_head = S_q
  EXPECT_EQ(fake()->params[13], 200u); // k_head = S_k

  // A run must keep the variant and its pointers' presence.
  AttentionParams other = p;
  other.softcap = 20;
  EXPECT_TRUE(contains(a->run(other).message(), "variant")) << a->run(other).message();
  other = p;
  other.alibiSlopes = 0;
  EXPECT_TRUE(contains(a->run(other).message(), "alibiSlopes"));
}

TEST(AttentionVariant, TheReferenceIsFlexFwdUnderTheConservativeSchedule) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 80, 500); // D = 80: not in the table
  p.headsKv = 1;                              // MQA
  auto a = Attention::plan(dev, p, f.options());
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->kernelName(), "flex_fwd_ref");
  EXPECT_TRUE(a->usesReference());
  EXPECT_TRUE(contains(f.lines.back(), "attention: fallback flex_fwd_ref: head dim 80"))
      << f.lines.back();
  const CompileOptions &c = f.compiler.calls.back();
  EXPECT_EQ(c.arch, "sm_80");
  EXPECT_EQ(c.defines.at("BM"), "64");
  EXPECT_EQ(c.schedule.numWarps, 4);
  ASSERT_TRUE(a->run().ok());
  EXPECT_EQ(fake()->grid[0], (500u + 63) / 64);
  EXPECT_EQ(fake()->grid[1], 3u);
  EXPECT_EQ(fake()->grid[2], 2u);
  EXPECT_EQ(fake()->params[8], 1u); // heads_kv
}

TEST(AttentionVariant, TheGuardrailCountsKAndVByTheirOwnShape) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = gqaWindow(f, dev); // B = 1, H = 6, H_kv = 2
  p.seqlenK = 700;                       // fewer keys than queries
  p.bottomRight = true;
  AttentionOptions o = f.options(FallbackPolicy::Fail);
  o.guardrail = true;
  o.guardrailInputs = true;
  auto a = Attention::plan(dev, p, o);
  ASSERT_TRUE(a.ok()) << a.error();
  int first = fake()->launches;
  ASSERT_TRUE(a->run().ok());
  // The kernel, then a count and a reduce for each of o, q, k and v.
  ASSERT_EQ(fake()->launches, first + 9);
  auto rowsOfCount = [&](int i) { // nonfinite_count(x, rows, d, partial)
    return fake()->launchLog[(first + 1 + 2 * i) % 8].params[1] & 0xFFFFFFFFu;
  };
  EXPECT_EQ(rowsOfCount(0), 6u * 1000); // o: B*H*S
  EXPECT_EQ(rowsOfCount(1), 6u * 1000); // q
  EXPECT_EQ(rowsOfCount(2), 2u * 700);  // k: B*H_kv*S_k
  EXPECT_EQ(rowsOfCount(3), 2u * 700);  // v
  EXPECT_FALSE(a->lastReport().guardrail.fired);
}

TEST(AttentionVariant, InvalidVariantsAreRefused) {
  AttentionFixture f;
  Device dev = openDevice();
  AttentionParams p = f.params(dev, 64, 100);
  auto refused = [&](AttentionParams q) {
    auto a = Attention::plan(dev, q, f.options());
    return a.ok() ? std::string("planned") : a.error();
  };
  AttentionParams q = p;
  q.headsKv = 2; // 3 heads
  EXPECT_EQ(refused(q), "attention: heads_kv 2 must divide heads 3 (GQA groups)");
  q = p;
  q.causal = true;
  q.windowRight = 5;
  EXPECT_TRUE(contains(refused(q), "causal is window_right = 0"));
  q = p;
  q.windowLeft = -2;
  EXPECT_TRUE(contains(refused(q), "window (-2, -1)"));
  q = p;
  q.softcap = -1;
  EXPECT_TRUE(contains(refused(q), "softcap -1"));
  q = f.params(dev, 8, 100);
  q.headsKv = 1;
  EXPECT_TRUE(contains(refused(q), "head dim 8 is below 9")) << refused(q);
}

TEST(AttentionVariant, VisibleProductsCountTheWindow) {
  AttentionParams p;
  p.seqlen = 8;
  p.causal = true;
  p.windowLeft = 2; // rows see 1, 2, 3, 3, ... keys
  EXPECT_EQ(attention_detail::visibleProducts(p), 1 + 2 + 3 * 6);
  p = AttentionParams();
  p.seqlen = 4;
  p.seqlenK = 6;
  p.causal = true;
  p.bottomRight = true; // diag 2: rows see 3, 4, 5, 6 keys
  EXPECT_EQ(attention_detail::visibleProducts(p), 3 + 4 + 5 + 6);
}

} // namespace
