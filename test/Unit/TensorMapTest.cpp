//===- TensorMapTest.cpp - TMA tensor maps at launch ----------------------===//
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

namespace {

std::string hexPtr(DevicePtr p) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(p));
  return buf;
}

std::vector<KernelArg> tmaArgs(DevicePtr k, DevicePtr v) {
  std::vector<KernelArg> args = flashArgs();
  args[1] = KernelArg::pointer(k, "bf16");
  args[2] = KernelArg::pointer(v, "bf16");
  return args;
}

/// Captures the 128 bytes of the kernel parameters after the 7 user ones.
struct CaptureTensorMaps {
  CaptureTensorMaps() { fake()->tailParamsFrom = 7; }
  ~CaptureTensorMaps() {
    fake()->tailParamsFrom = 0;
    fake()->tensorMapEncodeFails = 0;
  }
};

std::uint64_t word(const unsigned char *bytes, int i) {
  std::uint64_t w;
  std::memcpy(&w, bytes + 8 * i, 8);
  return w;
}

} // namespace

TEST(Runtime, LaunchPassesTensorMapsAfterTheArguments) {
  FakeDriver driver;
  CaptureTensorMaps capture;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Expected<DeviceBuffer> kbuf = DeviceBuffer::allocate(*dev, 1000);
  Expected<DeviceBuffer> vbuf = DeviceBuffer::allocate(*dev, 4096);
  ASSERT_TRUE(kbuf && vbuf);
  DevicePtr k = kbuf->ptr(), v = vbuf->ptr() + 256; // v: inside an allocation
  Expected<Kernel> kernel = Kernel::load(*dev, tmaManifest(), kPTX);
  ASSERT_TRUE(kernel) << kernel.error();

  int launches = fake()->launches, encodes = fake()->tensorMapEncodes;
  ASSERT_TRUE(kernel->launch({4, 8, 1}, tmaArgs(k, v)).ok());
  EXPECT_EQ(fake()->launches, launches + 1);
  ASSERT_EQ(fake()->tensorMapEncodes, encodes + 2);

  // The user's 7 arguments, then the two maps.
  EXPECT_EQ(fake()->paramCount, 9);
  EXPECT_EQ(fake()->params[0], 0x1000u);
  EXPECT_EQ(fake()->params[1], k);
  EXPECT_EQ(fake()->params[2], v);
  EXPECT_EQ(std::uint32_t(fake()->params[5]), 1000u);
  EXPECT_EQ(fake()->params[7], k); // the fake map starts with the address
  EXPECT_EQ(fake()->params[8], v);

  // The bytes the driver encoded reached the launch, in manifest order.
  for (int i = 0; i < 2; ++i) {
    const unsigned char *map = fake()->tailParams[i];
    EXPECT_EQ(word(map, 0), i == 0 ? k : v) << i;
    EXPECT_EQ(word(map, 1), 0x7e450000u + unsigned(encodes + i)) << i;
    for (int b = 16; b < 128; ++b)
      ASSERT_EQ(map[b], 0xA5) << "map " << i << " byte " << b;
  }

  // k: 1000 bytes from the allocation's start, rows of 128 bytes:
  // (1000 - 128) / 128 + 1 = 7 whole rows.
  const FakeTensorMapCall &ck = fake()->tensorMapCalls[encodes % 8];
  EXPECT_EQ(ck.dataType, 1); // CU_TENSOR_MAP_DATA_TYPE_UINT16
  EXPECT_EQ(ck.rank, 2u);
  EXPECT_EQ(ck.address, k);
  EXPECT_EQ(ck.globalDim[0], 64u);
  EXPECT_EQ(ck.globalDim[1], 7u);
  EXPECT_EQ(ck.globalStrides[0], 128u);
  EXPECT_EQ(ck.boxDim[0], 64u);
  EXPECT_EQ(ck.boxDim[1], 64u);
  EXPECT_EQ(ck.elementStrides[0], 1u);
  EXPECT_EQ(ck.elementStrides[1], 1u);
  EXPECT_EQ(ck.interleave, 0);  // NONE
  EXPECT_EQ(ck.swizzle, 3);     // 128B
  EXPECT_EQ(ck.l2Promotion, 2); // L2_128B
  EXPECT_EQ(ck.oobFill, 0);     // NONE
  EXPECT_TRUE(ck.mapAligned);

  // v: 4096 - 256 = 3840 bytes from the pointer, a row needs 64 bytes and
  // rows are 192 apart: (3840 - 64) / 192 + 1 = 20 (row 19 ends at byte
  // 256 + 19*192 + 64 = 3968 of 4096; row 20 would end at 4160).
  const FakeTensorMapCall &cv = fake()->tensorMapCalls[(encodes + 1) % 8];
  EXPECT_EQ(cv.address, v);
  EXPECT_EQ(cv.globalDim[0], 32u);
  EXPECT_EQ(cv.globalDim[1], 20u);
  EXPECT_EQ(cv.globalStrides[0], 192u);
  EXPECT_EQ(cv.boxDim[0], 32u);
  EXPECT_EQ(cv.boxDim[1], 128u);
  EXPECT_EQ(cv.swizzle, 3);
  EXPECT_TRUE(cv.mapAligned);

  // k at an offset: 1000 - 384 = 616 bytes, (616 - 128) / 128 + 1 = 4.
  // Exactly one row (136 bytes left) still maps one row.
  ASSERT_TRUE(kernel->launch({1, 1, 1}, tmaArgs(k + 384, v)).ok());
  EXPECT_EQ(fake()->tensorMapCalls[(encodes + 2) % 8].address, k + 384);
  EXPECT_EQ(fake()->tensorMapCalls[(encodes + 2) % 8].globalDim[1], 4u);
  EXPECT_EQ(word(fake()->tailParams[0], 0), k + 384);
  ASSERT_TRUE(kernel->launch({1, 1, 1}, tmaArgs(k + 864, v)).ok());
  EXPECT_EQ(fake()->tensorMapCalls[(encodes + 4) % 8].globalDim[1], 1u);
  EXPECT_EQ(fake()->launches, launches + 3);

  // An empty grid encodes nothing and launches nothing.
  encodes = fake()->tensorMapEncodes;
  ASSERT_TRUE(kernel->launch({0, 8, 1}, tmaArgs(k, v)).ok());
  EXPECT_EQ(fake()->tensorMapEncodes, encodes);
  EXPECT_EQ(fake()->launches, launches + 3);

  // The maps are not arguments the user passes.
  std::vector<KernelArg> extra = tmaArgs(k, v);
  extra.push_back(KernelArg::pointer(0x9000, "i8"));
  Status s = kernel->launch({1, 1, 1}, extra);
  EXPECT_TRUE(contains(s.message(), "takes 7 arguments, got 8")) << s.message();
  EXPECT_EQ(fake()->launches, launches + 3);
}

TEST(Runtime, TensorMapOfARunTimeRowStride) {
  // k as rows of 8 * seqlen elements (a [B, S, H, D] tensor's H * D with
  // H = seqlen here), each map row the whole stride (rowElems 0).
  FakeDriver driver;
  CaptureTensorMaps capture;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Expected<DeviceBuffer> kbuf = DeviceBuffer::allocate(*dev, 4096);
  ASSERT_TRUE(kbuf);
  DevicePtr k = kbuf->ptr();
  Manifest m = flashManifest();
  m.tensorMaps = {{1, 2, 0, 8, 64, 64, {5}}};
  Expected<Kernel> kernel = Kernel::load(*dev, m, kPTX);
  ASSERT_TRUE(kernel) << kernel.error();
  std::vector<KernelArg> args = tmaArgs(k, k);
  args[5] = KernelArg::int32(16); // stride 128 elements, 256 bytes
  int encodes = fake()->tensorMapEncodes;
  Status ok = kernel->launch({1, 1, 1}, args);
  ASSERT_TRUE(ok.ok()) << ok.message();
  ASSERT_EQ(fake()->tensorMapEncodes, encodes + 1);
  const FakeTensorMapCall &c = fake()->tensorMapCalls[encodes % 8];
  EXPECT_EQ(c.globalDim[0], 128u);
  EXPECT_EQ(c.globalDim[1], 16u); // (4096 - 256) / 256 + 1
  EXPECT_EQ(c.globalStrides[0], 256u);
  EXPECT_EQ(c.boxDim[0], 64u);

  // Rows of 32 elements, shorter than a box: whole rows (rowElems 0) map
  // as they are; TMA reads the box's columns past them as zero.
  args[5] = KernelArg::int32(4);
  encodes = fake()->tensorMapEncodes;
  ok = kernel->launch({1, 1, 1}, args);
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(fake()->tensorMapCalls[encodes % 8].globalDim[0], 32u);
  args[5] = KernelArg::int32(-2);
  Status s = kernel->launch({1, 1, 1}, args);
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': row stride 8 x 'seqlen' = -2 is not a positive "
                         "stride below 2^40 elements");
  // A factor of 1: the product must be 16 bytes (8 elements) apart.
  m.tensorMaps = {{1, 2, 0, 1, 64, 64, {5}}};
  Expected<Kernel> byOne = Kernel::load(*dev, m, kPTX);
  ASSERT_TRUE(byOne) << byOne.error();
  args[5] = KernelArg::int32(12);
  s = byOne->launch({1, 1, 1}, args);
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': rows 12 elements of 2 bytes apart are not a "
                         "multiple of 16 bytes apart (TMA needs it)");
}

TEST(Runtime, TensorMapErrorsNameTheArgument) {
  FakeDriver driver;
  CaptureTensorMaps capture;
  Expected<Device> dev = Device::open();
  ASSERT_TRUE(dev);
  Expected<DeviceBuffer> kbuf = DeviceBuffer::allocate(*dev, 1000);
  Expected<DeviceBuffer> vbuf = DeviceBuffer::allocate(*dev, 4096);
  ASSERT_TRUE(kbuf && vbuf);
  DevicePtr k = kbuf->ptr(), v = vbuf->ptr();
  Expected<Kernel> kernel = Kernel::load(*dev, tmaManifest(), kPTX);
  ASSERT_TRUE(kernel) << kernel.error();
  int launches = fake()->launches;

  Status s = kernel->launch({1, 1, 1}, tmaArgs(k, v + 8));
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 2 "
                         "'v': pointer " +
                             hexPtr(v + 8) +
                             " is not 16-byte aligned (TMA needs it)");
  s = kernel->launch({1, 1, 1}, tmaArgs(0, v));
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': null pointer (TMA needs device memory)");

  // Not from cuMemAlloc; past the end of an allocation (the fake's memory
  // is rounded up to 1024 bytes there, the allocation is 1000).
  const char *notDevice = "launching 'flash_fwd': tensor map of argument 1 "
                          "'k': pointer ";
  const char *why = " is not device memory: cuMemGetAddressRange failed: "
                    "CUDA_ERROR_NOT_FOUND (named symbol not found)";
  s = kernel->launch({1, 1, 1}, tmaArgs(0x2000, v));
  EXPECT_EQ(s.message(), notDevice + hexPtr(0x2000) + why);
  s = kernel->launch({1, 1, 1}, tmaArgs(k + 1008, v));
  EXPECT_EQ(s.message(), notDevice + hexPtr(k + 1008) + why);

  // Less than one row (128 bytes) from the pointer to the allocation's end.
  s = kernel->launch({1, 1, 1}, tmaArgs(k + 880, v));
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': pointer " +
                             hexPtr(k + 880) +
                             " has 120 bytes of its allocation (" + hexPtr(k) +
                             ", 1000 bytes) from there, less than one row "
                             "(128 bytes)");

  // The driver's refusal, with what was asked.
  fake()->tensorMapEncodeFails = 1;
  s = kernel->launch({1, 1, 1}, tmaArgs(k, v));
  fake()->tensorMapEncodeFails = 0;
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': cuTensorMapEncodeTiled failed: "
                         "CUDA_ERROR_INVALID_VALUE (invalid argument) "
                         "(pointer " +
                             hexPtr(k) +
                             ", 64 x 7 elements of 2 bytes, rows 128 bytes "
                             "apart, box 64 x 64)");
  EXPECT_EQ(fake()->launches, launches); // none of them launched

  // Freed memory is no longer device memory.
  ASSERT_TRUE(kernel->launch({1, 1, 1}, tmaArgs(k, v)).ok());
  *vbuf = DeviceBuffer();
  s = kernel->launch({1, 1, 1}, tmaArgs(k, v));
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 2 "
                         "'v': pointer " +
                             hexPtr(v) + why);

  // A manifest built in code is checked too (fromJSON would refuse it).
  Manifest m = tmaManifest();
  m.tensorMaps[1].arg = 5; // seqlen: i32
  Expected<Kernel> bad = Kernel::load(*dev, m, kPTX);
  ASSERT_TRUE(bad) << bad.error();
  s = bad->launch({1, 1, 1}, tmaArgs(k, v));
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 5: "
                         "not a pointer argument, or an empty row");
}

