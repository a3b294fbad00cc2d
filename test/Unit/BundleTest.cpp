//===- BundleTest.cpp - AOT bundles ---------------------------------------===//
//
// Against the fake driver (RuntimeFixture.h); no GPU needed.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>

using namespace tile;
using namespace tiletest; // RuntimeFixture.h, TestUtil.h, FakeCuda.h

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

TEST(Runtime, BundlePrefersMatchingCubin) {
  FakeDriver driver; // cc 9.0: sm_90a
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  std::string prefix = dir.path() + "/flash_fwd";
  Manifest m = tmaManifest(); // the tensor maps travel with the bundle
  ASSERT_TRUE(writeBundle(prefix, m, kPTX, "FAKECUBIN flash_fwd").ok());

  Expected<Kernel> k = loadBundle(*dev, prefix);
  ASSERT_TRUE(k) << k.error();
  EXPECT_EQ(k->loadedFrom(), "cubin");
  EXPECT_STREQ(fake()->lastImageKind, "cubin");
  EXPECT_EQ(k->manifest(), m);

  // A cubin the driver rejects (e.g. from a newer ptxas): fall back to PTX.
  ASSERT_TRUE(writeBundle(prefix, m, kPTX, "BAD cubin").ok());
  k = loadBundle(*dev, prefix);
  ASSERT_TRUE(k) << k.error();
  EXPECT_EQ(k->loadedFrom(), "ptx");
  k = Kernel::load(*dev, m, "BAD ptx", "BAD cubin");
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), "loading PTX")) << k.error();
  EXPECT_TRUE(contains(k.error(), "(after the cubin failed: loading cubin"))
      << k.error();

  m.arch = "sm_80"; // cubin for another arch: fall back to the PTX
  ASSERT_TRUE(writeBundle(prefix, m, kPTX, "FAKECUBIN flash_fwd").ok());
  k = loadBundle(*dev, prefix);
  ASSERT_TRUE(k) << k.error();
  EXPECT_EQ(k->loadedFrom(), "ptx");
}

TEST(Runtime, BundleErrors) {
  FakeDriver driver;
  TempDir dir;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  std::string prefix = dir.path() + "/k";
  Expected<Kernel> k = loadBundle(*dev, prefix);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error(), "loading bundle '" + prefix + "': cannot read '" +
                           prefix +
                           ".manifest.json': No such file or directory");

  std::ofstream(prefix + ".manifest.json") << "{\"kernelName\": ";
  k = loadBundle(*dev, prefix);
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), ".manifest.json: malformed manifest JSON: "
                                  "line 1, column 16"))
      << k.error();

  ASSERT_TRUE(writeBundle(prefix, flashManifest(), "BAD", "").ok());
  k = loadBundle(*dev, prefix);
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), "fake ptxas error")) << k.error();
}

