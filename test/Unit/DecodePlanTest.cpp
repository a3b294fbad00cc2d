//===- DecodePlanTest.cpp - tile::Decode's checks, on the fake driver -----===//
//
// The scale a plan or a run takes must be finite and >= 0 (0: 1/sqrt(D)):
// decode.tile requires sm_scale > 0 at launch, and the host API refuses a
// bad one first, with the forward's wording. The kernels come from the
// fake compiler of AttentionFixture.h (decode.tile's and
// decode_combine.tile's parameter lists), so a run launches on the fake
// driver.
//
//===----------------------------------------------------------------------===//
#include "AttentionFixture.h"

#include "tile/Decode.h"

#include <limits>
#include <optional>

using namespace tile;
using namespace tiletest;

namespace {

/// One split over 4 pages of 16 keys, 2 KV heads of one query head each.
DecodeParams shape(int batch, int headDim) {
  DecodeParams p;
  p.batch = batch;
  p.kvHeads = 2;
  p.headDim = headDim;
  p.maxBlocks = 4;
  p.splits = 1;
  return p;
}

/// The fake driver (132 SMs), its device and plan options with the fake
/// compiler's JIT.
class DecodePlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(fake());
    dev.emplace(Device::open());
    ASSERT_TRUE(dev->ok()) << dev->error();
    opts = DecodeOptions{f.options().jit, kernelDir()};
  }
  AttentionFixture f;
  std::optional<Expected<Device>> dev;
  DecodeOptions opts;
};

/// Fake-driver buffers (64 KiB each) for every pointer a run reads.
void allocate(AttentionFixture &f, const Device &dev, DecodeParams &p) {
  for (DevicePtr *ptr :
       {&p.q, &p.kCache, &p.vCache, &p.seqLens, &p.o, &p.blockTable}) {
    auto b = DeviceBuffer::allocate(dev, 1 << 16);
    ASSERT_TRUE(b.ok()) << b.error();
    *ptr = b->ptr();
    f.buffers.push_back(b.take());
  }
}

TEST_F(DecodePlanTest, ScaleMustBeFiniteAndNotNegative) {
  DecodeParams p = shape(2, 128);
  for (float bad : {-0.125f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    DecodeParams q = p;
    q.scale = bad;
    auto d = Decode::plan(**dev, q, opts);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(contains(d.error(), "must be finite and >= 0")) << d.error();
  }
  // A good plan; runs with a bad scale are refused before any launch.
  auto d = Decode::plan(**dev, p, opts);
  ASSERT_TRUE(d.ok()) << d.error();
  allocate(f, **dev, p);
  int before = fake()->launches;
  DecodeParams q = p;
  q.scale = -1.0f;
  Status s = d->run(q);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "scale -1 must be finite")) << s.message();
  EXPECT_EQ(fake()->launches, before);
  q.scale = 0.5f;
  ASSERT_TRUE(d->run(q).ok());
  EXPECT_EQ(fake()->launches, before + 1); // one split: no combine
}

TEST_F(DecodePlanTest, AnyBatchRunsAndTooManyRowsAreRefused) {
  // The grid is (batch, kvHeads, splits): batch = 70000 is one launch along
  // x. Only the query rows (the combine's i32 row numbers) are bounded.
  DecodeParams p = shape(70000, 64);
  auto d = Decode::plan(**dev, p, opts);
  ASSERT_TRUE(d.ok()) << d.error();
  allocate(f, **dev, p);
  int before = fake()->launches;
  Status s = d->run(p);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(fake()->launches, before + 1);
  EXPECT_EQ(fake()->grid[0], 70000u);
  EXPECT_EQ(fake()->grid[1], 2u);

  DecodeParams big = p;
  big.batch = 1 << 20;
  big.kvHeads = 64;
  big.group = 32; // 2^31 query rows
  std::size_t calls = f.compiler.calls.size();
  auto refused = Decode::plan(**dev, big, opts);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(contains(refused.error(), "2147483648 query rows exceed 2^31 - 1"))
      << refused.error();
  EXPECT_EQ(f.compiler.calls.size(), calls); // refused before compiling
}

TEST_F(DecodePlanTest, PlanLineSaysHowTheSplitsWereChosen) {
  // The fake driver has 132 SMs; two decode programs fit on each.
  fake()->programsPerSM = 2;
  auto expectPlan = [&](const DecodeParams &p, int splits, const char *why) {
    auto d = Decode::plan(**dev, p, opts);
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_EQ(d->splits(), splits);
    EXPECT_TRUE(contains(d->planLine(), why)) << d->planLine();
  };
  DecodeParams p = shape(1, 128);
  p.kvHeads = 8;
  p.splits = 0;
  p.pageSize = 0;
  p.maxBlocks = 65536; // contiguous: maxBlocks keys
  expectPlan(p, 16,
             "contiguous nhd, 16 splits (one program per SM: 8 programs, 132 "
             "SMs)");
  // Keys per block from configs/decode.<arch>.json's default.
  expectPlan(p, 16, "; BN=128 (default)");
  p.maxBlocks = 3; // 3 key blocks: at most 3 splits
  expectPlan(p, 1, "1 split (one program per SM");
  p.maxBlocks = 300;
  expectPlan(p, 3, "3 splits (one program per SM");
  p.pageSize = 16;
  p.maxBlocks = 4096; // 64k keys in pages of 16
  expectPlan(p, 29, "29 splits (FlashDecoding's waves: 8 programs, 264 slots)");
  p.splits = 3;
  expectPlan(p, 3, "3 splits (DecodeParams::splits)");
  fake()->programsPerSM = 0;
}

} // namespace
