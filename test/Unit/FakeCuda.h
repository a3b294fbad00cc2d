//===- FakeCuda.h - what the fake driver records -------------- -*- C++ -*-===//
//
// libtile-fakecuda.so implements the cu* entry points the runtime resolves,
// backed by host memory, with canned failures chosen by $FAKECUDA_MODE:
//   noinit      cuInit → CUDA_ERROR_NO_DEVICE
//   nodevices   cuDeviceGetCount → 0
//   sm80        a compute capability 8.0 device (default: 9.0)
// A PTX or cubin image that starts with "BAD" fails to load with
// CUDA_ERROR_INVALID_PTX and a log naming "fake ptxas error".
// A cubin image is any image that starts with "FAKECUBIN".
// cuMemAlloc returns 256-byte aligned host memory (like the real driver's
// alignment) and fails on 0 bytes with CUDA_ERROR_INVALID_VALUE.
// cuLaunchKernel counts kernelParams up to the nullptr the runtime ends it
// with (the real driver reads as many as the kernel declares).
//
//===----------------------------------------------------------------------===//
#pragma once

struct FakeCudaState {
  int retains, releases;
  int modulesLoaded, modulesUnloaded;
  int allocs, frees;
  char lastImageKind[8]; ///< "ptx" or "cubin"
  int launches;
  unsigned grid[3], block[3], sharedMem;
  int paramCount;                ///< kernelParams entries of the last launch
  unsigned long long params[16]; ///< first 8 bytes of each (up to 16)
  int maxDynamicShared;          ///< last cuFuncSetAttribute value
  int staticShared;              ///< what cuFuncGetAttribute reports
  unsigned long long lastAllocPtr, lastAllocBytes; ///< last cuMemAlloc
  int ctxSyncs;                                    ///< cuCtxSynchronize calls
};

extern "C" FakeCudaState *fakecuda_state();
