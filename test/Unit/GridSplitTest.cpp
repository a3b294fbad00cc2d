//===- GridSplitTest.cpp - grids over 65535 along y/z: split launches -----===//
//
// The runtime runs a grid over the hardware's 65535 programs along y or z
// as several launches, passing each its start (offset_y/z) and the whole
// grid's size (size_y/z) as the manifest's gridArgs say. Against the fake
// driver (FakeCuda.h: launchLog records each launch's grid and params).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestUtil.h"
#include "tile/Manifest.h"
#include "tile/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

using namespace tile;
using tiletest::contains;
using tiletest::fake;
using tiletest::fakePath;
using tiletest::ScopedEnv;

namespace {

/// flash_fwd's parameters (7) and `gridArgs` (u32 each, declared in the
/// PTX so that the fake reads 4 bytes of each, as the driver does).
Manifest manifest(std::vector<std::string> gridArgs, bool known = true) {
  Manifest m;
  m.kernelName = "k";
  m.params = {{"q", "ptr<bf16>"}, {"k", "ptr<bf16>"},  {"v", "ptr<bf16>"},
              {"o", "ptr<bf16>"}, {"lse", "ptr<f32>"}, {"seqlen", "i32"},
              {"sm_scale", "f32"}};
  m.blockSize = 128;
  m.arch = "sm_90a";
  m.gridArgs = std::move(gridArgs);
  m.gridArgsKnown = known;
  return m;
}

std::string ptx(std::size_t gridArgs) {
  std::string s = "//\n.version 8.0\n.target sm_80\n.visible .entry k(\n";
  for (int i = 0; i < 5; ++i)
    s += "\t.param .u64 .ptr .global .align 16 k_param_" + std::to_string(i) +
         ",\n";
  s += "\t.param .u32 k_param_5,\n\t.param .f32 k_param_6";
  for (std::size_t i = 0; i < gridArgs; ++i)
    s += ",\n\t.param .u32 k_param_" + std::to_string(7 + i);
  return s + "\n)\n{\n ret;\n}\n";
}

std::vector<KernelArg> args() {
  return {KernelArg::pointer(0x1000, "bf16"), KernelArg::pointer(0x2000, "bf16"),
          KernelArg::pointer(0x3000, "bf16"), KernelArg::pointer(0x4000, "bf16"),
          KernelArg::pointer(0x5000, "f32"),  KernelArg::int32(1000),
          KernelArg::float32(0.125f)};
}

/// Launch `i` counted from `first` (fake()->launches before the call).
const FakeLaunch &launch(int first, int i) {
  return fake()->launchLog[(first + i) % 8];
}

struct GridSplit : ::testing::Test {
  ScopedEnv driver{"TILEC_CUDA_DRIVER", fakePath()};
  ScopedEnv mode{"FAKECUDA_MODE", nullptr};
  void SetUp() override { ASSERT_NE(fake(), nullptr); }
  Kernel load(const Manifest &m) {
    Expected<Device> dev = Device::open();
    EXPECT_TRUE(dev) << dev.error();
    Expected<Kernel> k = Kernel::load(*dev, m, ptx(m.gridArgs.size()));
    EXPECT_TRUE(k) << k.error();
    return k ? k.take() : Kernel();
  }
};

} // namespace

TEST_F(GridSplit, SmallGridIsOneLaunchWithZeroOffsets) {
  Kernel k = load(manifest({"offset_y", "size_y"}));
  int first = fake()->launches;
  ASSERT_TRUE(k.launch({4, 300, 1}, args()).ok());
  ASSERT_EQ(fake()->launches, first + 1);
  const FakeLaunch &l = launch(first, 0);
  EXPECT_EQ(l.grid[0], 4u);
  EXPECT_EQ(l.grid[1], 300u);
  EXPECT_EQ(l.paramCount, 9);
  EXPECT_EQ(l.params[5], 1000u); // the user's arguments come first
  EXPECT_EQ(l.params[7], 0u);    // offset_y
  EXPECT_EQ(l.params[8], 300u);  // size_y
}

TEST_F(GridSplit, GridYOver65535RunsAsLaunchesWithOffsets) {
  // B * H = 70000 on grid y: 65535 + 4465 programs.
  Kernel k = load(manifest({"offset_y", "size_y"}));
  int first = fake()->launches;
  ASSERT_TRUE(k.launch({3, 70000, 1}, args()).ok());
  ASSERT_EQ(fake()->launches, first + 2);
  const FakeLaunch &a = launch(first, 0), &b = launch(first, 1);
  EXPECT_EQ(a.grid[0], 3u);
  EXPECT_EQ(a.grid[1], 65535u);
  EXPECT_EQ(a.grid[2], 1u);
  EXPECT_EQ(a.params[7], 0u);
  EXPECT_EQ(a.params[8], 70000u);
  EXPECT_EQ(b.grid[0], 3u);
  EXPECT_EQ(b.grid[1], 70000u - 65535u);
  EXPECT_EQ(b.params[7], 65535u);
  EXPECT_EQ(b.params[8], 70000u);
}

TEST_F(GridSplit, GridYAndZSplitZMajor) {
  // 2 chunks along y times 3 along z; the kernel reads y's offset and z's
  // offset and size (the order tile-grid-offsets appends them in).
  Kernel k = load(manifest({"offset_y", "offset_z", "size_z"}));
  int first = fake()->launches;
  ASSERT_TRUE(k.launch({1, 70000, 131071}, args()).ok());
  ASSERT_EQ(fake()->launches, first + 6);
  const unsigned ys[] = {0, 65535}, zs[] = {0, 65535, 131070};
  for (int i = 0; i < 6; ++i) {
    const FakeLaunch &l = launch(first, i);
    unsigned y0 = ys[i % 2], z0 = zs[i / 2];
    EXPECT_EQ(l.grid[1], y0 ? 4465u : 65535u) << i;
    EXPECT_EQ(l.grid[2], z0 == 131070 ? 1u : 65535u) << i;
    EXPECT_EQ(l.params[7], y0) << i;
    EXPECT_EQ(l.params[8], z0) << i;
    EXPECT_EQ(l.params[9], 131071u) << i;
  }
}

TEST_F(GridSplit, KernelThatReadsNoAxisSplitsWithoutParameters) {
  Kernel k = load(manifest({}));
  int first = fake()->launches;
  ASSERT_TRUE(k.launch({2, 1, 70000}, args()).ok());
  ASSERT_EQ(fake()->launches, first + 2);
  EXPECT_EQ(launch(first, 0).grid[2], 65535u);
  EXPECT_EQ(launch(first, 1).grid[2], 4465u);
  EXPECT_EQ(launch(first, 1).paramCount, 7);
}

TEST_F(GridSplit, OlderManifestIsRefusedClearly) {
  Kernel k = load(manifest({}, /*known=*/false));
  int first = fake()->launches;
  Status s = k.launch({1, 70000, 1}, args());
  EXPECT_TRUE(contains(s.message(), "exceeds the limits (2^31-1, 65535, 65535)"))
      << s.message();
  EXPECT_TRUE(contains(s.message(), "no \"gridArgs\"")) << s.message();
  EXPECT_EQ(fake()->launches, first);
  // Within the limits it launches as before, with no extra parameters.
  ASSERT_TRUE(k.launch({1, 65535, 65535}, args()).ok());
  EXPECT_EQ(fake()->launches, first + 1);
  EXPECT_EQ(launch(first, 0).paramCount, 7);
}

TEST(GridSplitManifest, RoundTripAndSchema) {
  Manifest m = manifest({"offset_y", "size_y", "offset_z"}), back;
  m.tilecVersion = m.llvmVersion = m.cudaVersion = m.sourceHash = "x";
  std::string error;
  ASSERT_TRUE(Manifest::fromJSON(m.toJSON(), back, error)) << error;
  EXPECT_TRUE(back.gridArgsKnown);
  EXPECT_EQ(back.gridArgs, m.gridArgs);
  EXPECT_TRUE(back == m);

  // Known and empty is written (a kernel that reads neither axis) ...
  m.gridArgs.clear();
  EXPECT_TRUE(contains(m.toJSON(), "\"gridArgs\": []")) << m.toJSON();
  ASSERT_TRUE(Manifest::fromJSON(m.toJSON(), back, error)) << error;
  EXPECT_TRUE(back.gridArgsKnown);
  // ... and unknown (an older manifest) is not.
  m.gridArgsKnown = false;
  EXPECT_FALSE(contains(m.toJSON(), "gridArgs")) << m.toJSON();
  ASSERT_TRUE(Manifest::fromJSON(m.toJSON(), back, error)) << error;
  EXPECT_FALSE(back.gridArgsKnown);

  auto bad = [&](const std::string &list) {
    m.gridArgsKnown = true;
    std::string json = m.toJSON();
    std::size_t at = json.find("\"gridArgs\": []");
    json.replace(at, 14, "\"gridArgs\": " + list);
    Manifest out;
    std::string why;
    EXPECT_FALSE(Manifest::fromJSON(json, out, why)) << json;
    return why;
  };
  EXPECT_TRUE(contains(bad("[\"offset_x\"]"), "\"offset_x\" is none of"));
  EXPECT_TRUE(contains(bad("[\"size_y\", \"size_y\"]"), "listed twice"));
  EXPECT_TRUE(contains(bad("7"), "\"gridArgs\" must be an array"));
}
