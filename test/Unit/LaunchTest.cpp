//===- LaunchTest.cpp - arguments and launches ----------------------------===//
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
// Arguments and launch
//===----------------------------------------------------------------------===//

TEST(Runtime, ArgumentCountIsChecked) {
  std::vector<KernelArg> args = flashArgs();
  args.pop_back();
  Status s = checkArguments(flashManifest(), args);
  EXPECT_EQ(s.message(),
            "kernel 'flash_fwd' takes 7 arguments, got 6 (signature: (q: "
            "ptr<bf16>, k: ptr<bf16>, v: ptr<bf16>, o: ptr<bf16>, lse: "
            "ptr<f32>, seqlen: i32, sm_scale: f32))");
  EXPECT_TRUE(checkArguments(flashManifest(), flashArgs()).ok());
}

TEST(Runtime, ArgumentTypesAreChecked) {
  std::vector<KernelArg> args = flashArgs();
  args[5] = KernelArg::float32(1000.f);
  EXPECT_EQ(checkArguments(flashManifest(), args).message(),
            "argument 5 'seqlen': expected i32, got f32");
  args = flashArgs();
  args[0] = KernelArg::pointer(0x1000, "f16");
  EXPECT_EQ(checkArguments(flashManifest(), args).message(),
            "argument 0 'q': expected ptr<bf16>, got ptr<f16>");
  args = flashArgs();
  args[6] = KernelArg::int64(1);
  EXPECT_EQ(checkArguments(flashManifest(), args).message(),
            "argument 6 'sm_scale': expected f32, got i64");
}

TEST(Runtime, MisalignedPointersAreRefusedBeforeALaunch) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Manifest m = flashManifest();
  for (KernelParam &p : m.params)
    if (p.type.rfind("ptr<", 0) == 0)
      p.align = 16;
  Expected<Kernel> k = Kernel::load(*dev, m, kPTX);
  ASSERT_TRUE(k) << k.error();
  int launches = fake()->launches;
  std::vector<KernelArg> args = flashArgs();
  args[0] = KernelArg::pointer(0x1002, "bf16"); // Q one bf16 into a buffer
  Status s = k->launch({8, 4, 1}, args);
  EXPECT_EQ(s.message(),
            "launching 'flash_fwd': argument 0 'q' (ptr<bf16>): pointer "
            "0x1002 is not 16-byte aligned; the kernel was compiled for "
            "16-byte aligned pointers (vector loads): pass an aligned "
            "allocation or copy the slice");
  EXPECT_EQ(fake()->launches, launches); // nothing reached the driver
  // The same kernel launches with aligned pointers afterwards; a manifest
  // without alignments (older ones) checks nothing.
  EXPECT_TRUE(k->launch({8, 4, 1}, flashArgs()).ok());
  EXPECT_EQ(fake()->launches, launches + 1);
  EXPECT_TRUE(checkArguments(flashManifest(), args).ok());
}

TEST(Runtime, LaunchPassesGridBlockAndArguments) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Manifest m = flashManifest();
  m.sharedMemoryBytes = 65536;
  Expected<Kernel> k = Kernel::load(*dev, m, kPTX);
  ASSERT_TRUE(k) << k.error();
  EXPECT_EQ(k->loadedFrom(), "ptx");

  int launches = fake()->launches, allocs = fake()->allocs;
  int encodes = fake()->tensorMapEncodes;
  ASSERT_TRUE(k->launch({8, 264, 1}, flashArgs()).ok());
  EXPECT_EQ(fake()->launches, launches + 1);
  EXPECT_EQ(fake()->paramCount, 7); // exactly the user's: no tensor maps
  EXPECT_EQ(fake()->allocs, allocs);
  EXPECT_EQ(fake()->tensorMapEncodes, encodes);
  EXPECT_EQ(fake()->grid[0], 8u);
  EXPECT_EQ(fake()->grid[1], 264u);
  EXPECT_EQ(fake()->block[0], 128u);
  EXPECT_EQ(fake()->block[1], 1u);
  EXPECT_EQ(fake()->sharedMem, 65536u);
  EXPECT_EQ(fake()->params[0], 0x1000u);
  EXPECT_EQ(fake()->params[4], 0x5000u);
  EXPECT_EQ(std::uint32_t(fake()->params[5]), 1000u);
  float scale;
  std::uint32_t bits = std::uint32_t(fake()->params[6]);
  std::memcpy(&scale, &bits, 4);
  EXPECT_EQ(scale, 0.125f);

  // An empty grid launches nothing; bad arguments launch nothing.
  ASSERT_TRUE(k->launch({0, 264, 1}, flashArgs()).ok());
  std::vector<KernelArg> bad = flashArgs();
  bad[5] = KernelArg::float32(1.f);
  Status s = k->launch({8, 264, 1}, bad);
  EXPECT_EQ(s.message(), "launching 'flash_fwd': argument 5 'seqlen': "
                         "expected i32, got f32");
  s = k->launch({1, 70000, 1}, flashArgs());
  // A manifest without "gridArgs" (an older tilec): y and z up to 65535;
  // GridSplitTest.cpp has the split launches of newer ones.
  EXPECT_TRUE(contains(s.message(), "exceeds the limits (2^31-1, 65535, "
                                    "65535); its manifest has no"))
      << s.message();
  EXPECT_EQ(fake()->launches, launches + 1);

  Kernel never;
  EXPECT_FALSE(never.launch({1, 1, 1}, {}).ok());
}

TEST(Runtime, PersistentLaunchStartsTheResidentPrograms) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Manifest m = flashManifest();
  m.persistent = true;
  m.sharedMemoryBytes = 4096;
  fake()->programsPerSM = 2;
  Expected<Kernel> k = Kernel::load(*dev, m, kPersistentPTX);
  fake()->programsPerSM = 0;
  ASSERT_TRUE(k) << k.error();
  EXPECT_EQ(fake()->occupancyBlockSize, 128);
  EXPECT_EQ(fake()->occupancyShared, 4096);
  EXPECT_EQ(k->residentPrograms(), 2u * 132u); // the fake has 132 SMs

  // 16 x 128 programs: 264 launched along x, the grid after the arguments.
  ASSERT_TRUE(k->launch({16, 128, 1}, flashArgs()).ok());
  EXPECT_EQ(fake()->grid[0], 264u);
  EXPECT_EQ(fake()->grid[1], 1u);
  EXPECT_EQ(fake()->grid[2], 1u);
  EXPECT_EQ(fake()->paramCount, 10);
  EXPECT_EQ(std::uint32_t(fake()->params[5]), 1000u);
  // Exactly 4 bytes each: reading 8 would take the next value (or, for the
  // last, bytes past the runtime's array: ASan's stack-buffer-overflow).
  EXPECT_EQ(fake()->params[5], 1000u);
  EXPECT_EQ(fake()->params[7], 16u);
  EXPECT_EQ(fake()->params[8], 128u);
  EXPECT_EQ(fake()->params[9], 1u);
  // A grid y over the hardware's 65535 (B * H = 70000): the resident
  // programs loop over it.
  ASSERT_TRUE(k->launch({2, 70000, 1}, flashArgs()).ok());
  EXPECT_EQ(fake()->grid[0], 264u);
  EXPECT_EQ(fake()->params[8], 70000u);
  // Fewer programs than fit: one each.
  ASSERT_TRUE(k->launch({3, 2, 5}, flashArgs()).ok());
  EXPECT_EQ(fake()->grid[0], 30u);
  EXPECT_EQ(fake()->params[9], 5u);
  // More than the kernel's i32 count allows.
  Status s = k->launch({(1u << 29) + 1, 2, 1}, flashArgs());
  EXPECT_TRUE(contains(s.message(), "more than a persistent kernel counts"))
      << s.message();

  // The occupancy query failing is an error of the load.
  fake()->programsPerSM = -1;
  Expected<Kernel> bad = Kernel::load(*dev, m, kPTX);
  fake()->programsPerSM = 0;
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.error(), "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
      << bad.error();
  // A kernel that is not persistent is launched as asked.
  Expected<Kernel> plain = Kernel::load(*dev, flashManifest(), kPTX);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->residentPrograms(), 0u);
  ASSERT_TRUE(plain->launch({16, 128, 1}, flashArgs()).ok());
  EXPECT_EQ(fake()->grid[0], 16u);
  EXPECT_EQ(fake()->paramCount, 7);
}

