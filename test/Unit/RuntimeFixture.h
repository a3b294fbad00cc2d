//===- RuntimeFixture.h - the fake driver and a flash_fwd manifest -*- C++ -*-===//
//
// Shared by the runtime's unit tests (RuntimeTest.cpp, LaunchTest.cpp,
// TensorMapTest.cpp, BundleTest.cpp): FAKECUDA_PATH (a compile definition)
// is libtile-fakecuda.so; see FakeCuda.h for its behaviour. No GPU needed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Runtime.h"
#include "FakeCuda.h"
#include "TestUtil.h"

namespace tiletest {
using namespace tile;

/// Uses the fake driver ($TILEC_FAKECUDA_PATH for a bundle unpacked
/// elsewhere, else the build tree's), in `mode`, for one test.
struct FakeDriver {
  ScopedEnv driver{"TILEC_CUDA_DRIVER", fakePath()};
  ScopedEnv mode;
  explicit FakeDriver(const char *m = nullptr) : mode("FAKECUDA_MODE", m) {}
};

inline Manifest flashManifest() {
  Manifest m;
  m.kernelName = "flash_fwd";
  m.params = {{"q", "ptr<bf16>"}, {"k", "ptr<bf16>"},  {"v", "ptr<bf16>"},
              {"o", "ptr<bf16>"}, {"lse", "ptr<f32>"}, {"seqlen", "i32"},
              {"sm_scale", "f32"}};
  m.blockSize = 128;
  m.arch = "sm_90a";
  return m;
}

inline std::vector<KernelArg> flashArgs() {
  return {
      KernelArg::pointer(0x1000, "bf16"), KernelArg::pointer(0x2000, "bf16"),
      KernelArg::pointer(0x3000, "bf16"), KernelArg::pointer(0x4000, "bf16"),
      KernelArg::pointer(0x5000, "f32"),  KernelArg::int32(1000),
      KernelArg::float32(0.125f)};
}

inline const char *kPTX = "//\n.version 8.0\n.target sm_80\n.visible .entry "
                   "flash_fwd(\n)\n{\n ret;\n}\n";

/// flash_fwd made persistent, with its parameters declared as the compiler
/// writes them: the fake driver reads each kernelParams entry for as many
/// bytes as declared (the grid: three 4-byte values after the user's).
inline const char *kPersistentPTX =
    "//\n.version 8.0\n.target sm_80\n.visible .entry flash_fwd(\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_0,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_1,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_2,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_3,\n"
    "\t.param .u64 .ptr .global .align 16 flash_fwd_param_4,\n"
    "\t.param .u32 flash_fwd_param_5,\n\t.param .f32 flash_fwd_param_6,\n"
    "\t.param .u32 flash_fwd_param_7,\n\t.param .u32 flash_fwd_param_8,\n"
    "\t.param .u32 flash_fwd_param_9\n)\n{\n ret;\n}\n";

/// flashManifest() with TMA maps of k (rows of 64 bf16, 128 bytes) and of v
/// (rows of 32 bf16, 192 bytes apart).
inline Manifest tmaManifest() {
  Manifest m = flashManifest();
  m.tensorMaps = {{1, 2, 64, 64, 64, 64}, {2, 2, 32, 96, 32, 128}};
  return m;
}

} // namespace tiletest
