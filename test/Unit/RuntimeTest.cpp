//===- RuntimeTest.cpp - runtime error paths, devices, modules ------------===//
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
// No driver, no GPU
//===----------------------------------------------------------------------===//

TEST(Runtime, NoDriverIsAClearError) {
  ScopedEnv env("TILEC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  Expected<Device> dev = Device::open();
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().rfind(
                "no CUDA driver (/nonexistent/libcuda.so.1 not found): ", 0),
            0u)
      << dev.error();
  Status s = initDriver();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "no CUDA driver")) << s.message();
}

TEST(Runtime, DefaultDriverPath) {
  ScopedEnv env("TILEC_CUDA_DRIVER", nullptr);
  EXPECT_EQ(driverPath(), "libcuda.so.1");
  Expected<Device> dev = Device::open();
  if (!dev) { // a machine without a GPU: the message says which of the two
    EXPECT_TRUE(
        dev.error().rfind("no CUDA driver (libcuda.so.1 not found)", 0) == 0 ||
        dev.error().rfind("no GPU", 0) == 0)
        << dev.error();
  }
}

TEST(Runtime, CuInitFailureMeansNoGPU) {
  ASSERT_NE(fake(), nullptr);
  FakeDriver driver("noinit");
  Expected<Device> dev = Device::open();
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error(), "no GPU: cuInit failed: CUDA_ERROR_NO_DEVICE (no "
                         "CUDA-capable device is detected)");
}

TEST(Runtime, ZeroDevicesMeansNoGPU) {
  FakeDriver driver("nodevices");
  Expected<Device> dev = Device::open();
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error(), "no GPU: the CUDA driver reports 0 devices");
}

TEST(Runtime, BadOrdinal) {
  FakeDriver driver;
  Expected<Device> dev = Device::open(3);
  ASSERT_FALSE(dev);
  EXPECT_TRUE(contains(dev.error(), "reports 1 device(s)")) << dev.error();
}

//===----------------------------------------------------------------------===//
// Device, buffers, contexts
//===----------------------------------------------------------------------===//

TEST(Runtime, DeviceProperties) {
  {
    FakeDriver driver;
    Expected<Device> dev = Device::open();
    ASSERT_TRUE(dev) << dev.error();
    EXPECT_EQ(dev->name(), "Fake GPU");
    EXPECT_EQ(dev->computeCapabilityMajor(), 9);
    EXPECT_EQ(dev->smCount(), 132);
    EXPECT_EQ(dev->maxSharedMemoryOptin(), 232448);
    EXPECT_EQ(dev->archString(), "sm_90a");
    EXPECT_TRUE(dev->isSupported());
    EXPECT_EQ(dev->description(), "Fake GPU (cc 9.0, 132 SMs, driver 12.4)");
  }
  FakeDriver driver("sm80");
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev) << dev.error();
  EXPECT_EQ(dev->archString(), "sm_80");
}

TEST(Runtime, BuffersCopyFillAndFree) {
  FakeDriver driver;
  int allocs = fake()->allocs, frees = fake()->frees;
  int retains = fake()->retains, releases = fake()->releases;
  {
    Expected<Device> dev = Device::open();
    ASSERT_TRUE(dev) << dev.error();
    Expected<DeviceBuffer> buf = DeviceBuffer::allocate(*dev, 64);
    ASSERT_TRUE(buf) << buf.error();
    std::vector<float> in(16), out(16, 0.f);
    for (int i = 0; i < 16; ++i)
      in[i] = float(i) * 0.5f;
    ASSERT_TRUE(buf->upload(in).ok());
    ASSERT_TRUE(buf->download(out).ok());
    EXPECT_EQ(in, out);
    ASSERT_TRUE(buf->fill(0xFF).ok());
    ASSERT_TRUE(buf->download(out).ok());
    EXPECT_TRUE(std::isnan(out[3]));

    Status s = buf->copyFromHost(in.data(), 32, 40);
    EXPECT_EQ(s.message(), "copy to device: 32 bytes at offset 40 exceed the "
                           "buffer's 64 bytes");
    Expected<DeviceBuffer> empty = DeviceBuffer::allocate(*dev, 0);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->ptr(), 0u);
    EXPECT_TRUE(empty->copyFromHost(nullptr, 0).ok());
    EXPECT_TRUE(empty->fill(0).ok());

    DeviceBuffer moved = buf.take(); // the context outlives the Device
    dev = Status::error("dropped");
    EXPECT_TRUE(moved.download(out).ok());
  }
  EXPECT_EQ(fake()->allocs - allocs, 1);
  EXPECT_EQ(fake()->frees - frees, 1);
  EXPECT_EQ(fake()->retains - retains, fake()->releases - releases);
}

TEST(Runtime, EventTimer) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Expected<EventTimer> t = EventTimer::create(*dev);
  ASSERT_TRUE(t) << t.error();
  ASSERT_TRUE(t->start().ok());
  ASSERT_TRUE(t->stop().ok());
  Expected<float> ms = t->elapsedMs();
  ASSERT_TRUE(ms) << ms.error();
  EXPECT_FLOAT_EQ(*ms, 1.5f);
}

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

TEST(Runtime, BadPTXShowsTheDriverLog) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Expected<Module> mod = Module::loadPTX(*dev, "BAD ptx");
  ASSERT_FALSE(mod);
  EXPECT_TRUE(contains(mod.error(),
                       "loading PTX: cuModuleLoadDataEx failed: "
                       "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"))
      << mod.error();
  EXPECT_TRUE(contains(mod.error(), "driver JIT log:\nptxas application ptx "
                                    "input, line 1; error   : fake ptxas "
                                    "error"))
      << mod.error();

  Expected<Kernel> k = Kernel::load(*dev, flashManifest(), "BAD ptx");
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().rfind("kernel 'flash_fwd': loading PTX", 0), 0u)
      << k.error();
  EXPECT_FALSE(Module::loadPTX(*dev, ""));
}

TEST(Runtime, MissingKernelInModule) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Manifest m = flashManifest();
  m.kernelName = "flash_bwd";
  Expected<Kernel> k = Kernel::load(*dev, m, kPTX);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().rfind("kernel 'flash_bwd' not found in the module: "
                            "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND",
                            0),
            0u)
      << k.error();
}

TEST(Runtime, SharedMemoryLimit) {
  FakeDriver driver;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Manifest m = flashManifest();
  m.sharedMemoryBytes = 300000;
  Expected<Kernel> k = Kernel::load(*dev, m, kPTX);
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), "kernel 'flash_fwd' needs 300000 bytes of "
                                  "shared memory, device Fake GPU allows "
                                  "232448"))
      << k.error();

  fake()->maxDynamicShared = -1;
  m.sharedMemoryBytes = 40000; // below 48 KiB: no attribute
  ASSERT_TRUE(Kernel::load(*dev, m, kPTX));
  EXPECT_EQ(fake()->maxDynamicShared, -1);
  m.sharedMemoryBytes = 100000;
  Expected<Kernel> big = Kernel::load(*dev, m, kPTX);
  ASSERT_TRUE(big) << big.error();
  EXPECT_EQ(fake()->maxDynamicShared, 100000);

  fake()->staticShared = 200000; // static + dynamic is what counts
  k = Kernel::load(*dev, m, kPTX);
  fake()->staticShared = 0;
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), "needs 300000 bytes")) << k.error();
}

TEST(Runtime, ArchMismatchIsExplained) {
  FakeDriver driver("sm80");
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Expected<Kernel> k = Kernel::load(*dev, flashManifest(), kPTX); // sm_90a
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), "built for sm_90a, which needs a GPU of "
                                  "compute capability 9.0 exactly"))
      << k.error();
  EXPECT_TRUE(contains(k.error(), "-arch=sm_80")) << k.error();
  Manifest m = flashManifest();
  m.arch = "sm_80";
  EXPECT_TRUE(Kernel::load(*dev, m, kPTX));
  m.blockSize = 0;
  k = Kernel::load(*dev, m, kPTX);
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.error(), "block size 0 is outside 1..1024"));
}

//===----------------------------------------------------------------------===//
// fp16 / bf16
//===----------------------------------------------------------------------===//

TEST(Runtime, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.f), 0x7c00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.f, -11)), 0x3c00); // tie → even
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(std::ldexp(1.f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.f, -25)), 0x0000); // tie → even (0)
  EXPECT_EQ(floatToHalf(std::ldexp(3.f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(std::ldexp(1023.5f, -24)), 0x0400); // into normals
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  for (unsigned h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
      continue; // NaN
    ASSERT_EQ(floatToHalf(halfToFloat(std::uint16_t(h))), h) << h;
  }
}

TEST(Runtime, BFloat16ConversionRoundsToNearestEven) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.f, -8)), 0x3f80); // tie
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * std::ldexp(1.f, -8)), 0x3f82);
  EXPECT_EQ(floatToBFloat16(-INFINITY), 0xff80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(NAN))));
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
  for (unsigned b = 0; b < 0x10000; ++b) {
    if ((b & 0x7f80) == 0x7f80 && (b & 0x7f))
      continue;
    ASSERT_EQ(floatToBFloat16(bfloat16ToFloat(std::uint16_t(b))), b) << b;
  }
}
