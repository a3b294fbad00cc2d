//===- CudaApi.h - the CUDA driver entry points tilec uses ---- -*- C++ -*-===//
//
// The few driver types and functions the runtime needs, declared here so that
// tilec builds without cuda.h (tinygrad-style). Values match cuda.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tile::detail {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using cuuint32_t = std::uint32_t;
using cuuint64_t = std::uint64_t;

/// CUtensorMap: 128 opaque bytes, 64-byte aligned (a kernel parameter of
/// this type is passed by value).
struct alignas(64) CUtensorMap {
  cuuint64_t opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");

enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_NOT_READY = 600,
};

enum : int { // CUdevice_attribute
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum : int { // CUfunction_attribute
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum : int { // CUjit_option
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

enum : int { // CUtensorMapDataType
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
};

enum : int { // CUtensorMapInterleave
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
};

enum : int { // CUtensorMapSwizzle
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};

enum : int { // CUtensorMapL2promotion
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};

enum : int { // CUtensorMapFloatOOBfill
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
};

/// The L2 promotion of the tensor maps Kernel::launch encodes: one place to
/// tune it (bench/attention_fwd.py's TMA_L2_PROMOTION must match).
constexpr int kTensorMapL2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;

/// Shared memory a block gets without opting in.
constexpr int kDefaultSharedMemoryBytes = 48 * 1024;

/// Function pointers resolved from the driver library.
struct CudaApi {
  void *handle = nullptr;
  std::string path;

  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, std::size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, std::size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, std::size_t);
  CUresult (*cuMemGetAddressRange)(CUdeviceptr *, std::size_t *, CUdeviceptr);
  /// nullptr when the driver is older than CUDA 12.
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *, int, cuuint32_t, void *,
                                     const cuuint64_t *, const cuuint64_t *,
                                     const cuuint32_t *, const cuuint32_t *,
                                     int, int, int, int);
  /// nullptr when the driver lacks it (then persistent kernels do not load).
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
                                                          int, std::size_t);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);

  /// "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)".
  std::string describe(CUresult result) const;
  /// Success, or "<call> failed: <describe(result)>".
  Status check(CUresult result, const char *call) const;
};

/// The driver at driverPath(), loaded once per path, cuInit(0) called each
/// time. Returns nullptr with `status` set on failure.
const CudaApi *getCudaApi(Status &status);

/// A retained primary context. Everything made on a device holds one, so the
/// context outlives its buffers, modules and kernels.
struct Context {
  const CudaApi *api = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  ~Context();
  Status makeCurrent() const {
    return api->check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }
};

} // namespace tile::detail
