//===- FakeCuda.h - what the fake driver records -------------- -*- C++ -*-===//
//
// libtile-fakecuda.so implements the cu* entry points the runtime resolves,
// backed by host memory, with canned failures chosen by $FAKECUDA_MODE:
//   noinit      cuInit → CUDA_ERROR_NO_DEVICE
//   nodevices   cuDeviceGetCount → 0
//   sm80        a compute capability 8.0 device (default: 9.0)
//   sm75, sm100 compute capability 7.5 and 10.0 devices
// A PTX or cubin image that starts with "BAD" fails to load with
// CUDA_ERROR_INVALID_PTX and a log naming "fake ptxas error".
// A cubin image is any image that starts with "FAKECUBIN" (lastImageKind);
// a real one (a 64-bit ELF from ptxas) loads too, and its functions are
// found by name in its bytes.
// cuMemAlloc returns 256-byte aligned host memory (like the real driver's
// alignment) and fails on 0 bytes with CUDA_ERROR_INVALID_VALUE.
// cuMemGetAddressRange_v2 answers for addresses inside a live cuMemAlloc
// allocation (base and requested size), else CUDA_ERROR_NOT_FOUND (what the
// real driver answers).
// cuTensorMapEncodeTiled records its arguments in tensorMapCalls (the last
// 8) and writes the map as: opaque[0] = the global address, opaque[1] =
// 0x7e450000 + the call's number (tensorMapEncodes after it), the rest
// 0xA5 bytes; it fails with CUDA_ERROR_INVALID_VALUE when
// tensorMapEncodeFails is set.
// cuOccupancyMaxActiveBlocksPerMultiprocessor reports programsPerSM
// (1 when 0; -1: fails with CUDA_ERROR_INVALID_VALUE) and records the block
// size and shared memory it was asked about.
// cuLaunchKernel counts kernelParams up to the nullptr the runtime ends it
// with (the real driver reads as many as the kernel declares) and records
// each entry: as many bytes as the loaded PTX's first .entry declares for
// that parameter (.u32: 4, .u64: 8, .b8 x[128]: 128), else 8 bytes into
// params and, from index tailParamsFrom on (a tensor map passed by value),
// 128 bytes into tailParams (up to 4); launchLog keeps the grid and params
// of the last 8 launches.
//
//===----------------------------------------------------------------------===//
#pragma once

/// The arguments of one cuTensorMapEncodeTiled call (rank ≤ 2 recorded).
struct FakeTensorMapCall {
  int dataType;
  unsigned rank;
  unsigned long long address;
  unsigned long long globalDim[2];
  unsigned long long globalStrides[1];
  unsigned boxDim[2];
  unsigned elementStrides[2];
  int interleave, swizzle, l2Promotion, oobFill;
  bool mapAligned; ///< the CUtensorMap pointer was 64-byte aligned
};

/// One cuLaunchKernel call: its grid and first (≤ 16) parameters.
struct FakeLaunch {
  unsigned grid[3];
  int paramCount;
  unsigned long long params[16];
};

struct FakeCudaState {
  int retains, releases;
  int modulesLoaded, modulesUnloaded;
  int allocs, frees;
  char lastImageKind[8]; ///< "ptx" or "cubin"
  int launches;
  unsigned grid[3], block[3], sharedMem;
  int paramCount;                ///< kernelParams entries of the last launch
  unsigned long long params[16]; ///< first ≤ 8 bytes of each (up to 16)
  int maxDynamicShared;          ///< last cuFuncSetAttribute value
  int staticShared;              ///< what cuFuncGetAttribute reports
  unsigned long long lastAllocPtr, lastAllocBytes; ///< last cuMemAlloc
  int ctxSyncs;                                    ///< cuCtxSynchronize calls
  int liveAllocs;                      ///< cuMemAlloc allocations not yet freed
  int tensorMapEncodes;                ///< cuTensorMapEncodeTiled calls
  FakeTensorMapCall tensorMapCalls[8]; ///< [i % 8]: the i-th call
  int tensorMapEncodeFails;            ///< set: the next calls fail
  int tailParamsFrom;                  ///< set by the test; 0: capture none
  unsigned char tailParams[4][128];    ///< bytes of params[tailParamsFrom + i]
  int programsPerSM;                   ///< set by the test (see above)
  int occupancyBlockSize, occupancyShared; ///< the last occupancy query
  FakeLaunch launchLog[8];             ///< [i % 8]: launch i (launches before it)
  int failLaunch; ///< set by the test: launch number failLaunch (counting
                  ///< from 1, as `launches`) returns an error, launching nothing
};

extern "C" FakeCudaState *fakecuda_state();

#ifdef FAKECUDA_PATH
#include <cstdlib>
#include <dlfcn.h>

namespace tiletest {
/// The fake driver library: $TILEC_FAKECUDA_PATH, else the build's.
inline const char *fakePath() {
  const char *env = std::getenv("TILEC_FAKECUDA_PATH");
  return env && *env ? env : FAKECUDA_PATH;
}

/// The fake driver's state (the library the runtime loads, opened once).
inline FakeCudaState *fake() {
  static FakeCudaState *state = [] {
    void *h = dlopen(fakePath(), RTLD_NOW);
    auto fn = reinterpret_cast<FakeCudaState *(*)()>(
        h ? dlsym(h, "fakecuda_state") : nullptr);
    return fn ? fn() : nullptr;
  }();
  return state;
}
} // namespace tiletest
#endif
