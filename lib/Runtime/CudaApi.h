//===- CudaApi.h - the CUDA driver entry points tilec uses ---- -*- C++ -*-===//
//
// The few driver types and functions the runtime needs, declared here so that
// tilec builds without cuda.h (tinygrad-style). Values match cuda.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Runtime.h"

#include <cstddef>
#include <map>
#include <mutex>
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

/// The hidden per-program global scratch of a kernel whose manifest has
/// scratchBytesPerProgram > 0, shared by the copies of one Kernel.
///
/// One buffer per stream: launches on one stream run in order and may share
/// it; launches on different streams may overlap and must not. A buffer only
/// grows (to at least twice its old size, so the ones kept add up to less
/// than the current one), and a replaced buffer is kept, not freed, until
/// the Scratch goes: an earlier launch on that stream may still be using it,
/// and freeing it safely would need a synchronisation on every growth.
/// The destructor synchronises the context and then frees everything.
/// (A stream destroyed with work pending whose handle is then reused by a
/// new stream would share that work's buffer; destroy streams after their
/// work is done.)
struct Scratch {
  Scratch(std::shared_ptr<Context> ctx, std::size_t bytesPerProgram)
      : ctx(std::move(ctx)), bytesPerProgram(bytesPerProgram) {}
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch();

  /// A buffer of at least bytesPerProgram * programs bytes for `stream`
  /// (cuMemAlloc: 256-byte aligned). The context must be current.
  Expected<DevicePtr> get(Stream stream, std::uint64_t programs);

  std::shared_ptr<Context> ctx;
  std::size_t bytesPerProgram;

private:
  struct Buffer {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  std::mutex mutex;
  std::map<Stream, Buffer> current;
  std::vector<CUdeviceptr> retired;
};

} // namespace tile::detail
