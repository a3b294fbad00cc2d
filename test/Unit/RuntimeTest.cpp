//===- RuntimeTest.cpp - runtime error paths, against a fake driver -------===//
//
// FAKECUDA_PATH (a compile definition) is libtile-fakecuda.so; see FakeCuda.h
// for its behaviour. No GPU needed.
//
//===----------------------------------------------------------------------===//

#include <cstdlib>
#include "tile/Runtime.h"
#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>

using namespace tile;
using tiletest::contains;
using tiletest::fake;
using tiletest::fakePath;
using tiletest::ScopedEnv;
using tiletest::TempDir;

namespace {

/// The fake driver: $TILEC_FAKECUDA_PATH (a bundle unpacked elsewhere) or
/// the build tree's.
/// Uses the fake driver, in `mode`, for one test.
struct FakeDriver {
  ScopedEnv driver{"TILEC_CUDA_DRIVER", fakePath()};
  ScopedEnv mode;
  explicit FakeDriver(const char *m = nullptr) : mode("FAKECUDA_MODE", m) {}
};

Manifest flashManifest() {
  Manifest m;
  m.kernelName = "flash_fwd";
  m.params = {{"q", "ptr<bf16>"}, {"k", "ptr<bf16>"},  {"v", "ptr<bf16>"},
              {"o", "ptr<bf16>"}, {"lse", "ptr<f32>"}, {"seqlen", "i32"},
              {"sm_scale", "f32"}};
  m.blockSize = 128;
  m.arch = "sm_90a";
  return m;
}

std::vector<KernelArg> flashArgs() {
  return {
      KernelArg::pointer(0x1000, "bf16"), KernelArg::pointer(0x2000, "bf16"),
      KernelArg::pointer(0x3000, "bf16"), KernelArg::pointer(0x4000, "bf16"),
      KernelArg::pointer(0x5000, "f32"),  KernelArg::int32(1000),
      KernelArg::float32(0.125f)};
}

const char *kPTX = "//\n.version 8.0\n.target sm_80\n.visible .entry "
                   "flash_fwd(\n)\n{\n ret;\n}\n";

/// flash_fwd made persistent, with its parameters declared as the compiler
/// writes them: the fake driver reads each kernelParams entry for as many
/// bytes as declared (the grid: three 4-byte values after the user's).
const char *kPersistentPTX =
    "//\n.version 8.0\n.target sm_80\n.visible .entry flash_fwd(\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_0,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_1,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_2,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_3,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_4,\n"
    "\t.param .u32 flash_fwd_param_5,\n\t.param .f32 flash_fwd_param_6,\n"
    "\t.param .u32 flash_fwd_param_7,\n\t.param .u32 flash_fwd_param_8,\n"
    "\t.param .u32 flash_fwd_param_9\n)\n{\n ret;\n}\n";

} // namespace

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

namespace {

std::string hexPtr(DevicePtr p) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(p));
  return buf;
}

/// flashManifest() with TMA maps of k (rows of 64 bf16, 128 bytes) and of v
/// (rows of 32 bf16, 192 bytes apart).
Manifest tmaManifest() {
  Manifest m = flashManifest();
  m.tensorMaps = {{1, 2, 64, 64, 64, 64}, {2, 2, 32, 96, 32, 128}};
  return m;
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

  args[5] = KernelArg::int32(4); // rows of 32 elements: shorter than a box
  Status s = kernel->launch({1, 1, 1}, args);
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': rows 32 elements apart are shorter than its "
                         "box (64 elements)");
  args[5] = KernelArg::int32(-2);
  s = kernel->launch({1, 1, 1}, args);
  EXPECT_EQ(s.message(), "launching 'flash_fwd': tensor map of argument 1 "
                         "'k': row stride 8 x 'seqlen' = -2 is not a positive "
                         "stride below 2^40 elements");
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
