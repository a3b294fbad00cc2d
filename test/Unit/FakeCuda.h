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
  int paramCount;                ///< set by the test before a launch
  unsigned long long params[16]; ///< first 8 bytes of each parameter
  int maxDynamicShared;          ///< last cuFuncSetAttribute value
  int staticShared;              ///< what cuFuncGetAttribute reports
};

extern "C" FakeCudaState *fakecuda_state();
