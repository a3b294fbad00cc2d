//===- CudaApi.cpp - dlopen the CUDA driver and resolve its entry points --===//
//
// Post-condition of getCudaApi(): every function pointer of CudaApi is set
// (cuTensorMapEncodeTiled: when the driver has it, CUDA 12+) and
// cuInit(0) succeeded, or a Status says why not ("no CUDA driver …",
// "no GPU …", "… lacks cuXxx").
//
//===----------------------------------------------------------------------===//

#include "CudaApi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace tile {
namespace detail {

namespace {

/// Resolves the first of `names` that the library exports.
template <typename Fn>
bool resolve(void *handle, Fn &slot, std::initializer_list<const char *> names,
             std::string &missing) {
  for (const char *name : names) {
    if (void *sym = dlsym(handle, name)) {
      slot = reinterpret_cast<Fn>(sym);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

bool resolveAll(CudaApi &api, std::string &missing) {
  void *h = api.handle;
#define TILE_RESOLVE(field, ...)                                               \
  if (!resolve(h, api.field, {__VA_ARGS__}, missing))                          \
    return false;
  TILE_RESOLVE(cuInit, "cuInit");
  TILE_RESOLVE(cuDriverGetVersion, "cuDriverGetVersion");
  TILE_RESOLVE(cuDeviceGet, "cuDeviceGet");
  TILE_RESOLVE(cuDeviceGetCount, "cuDeviceGetCount");
  TILE_RESOLVE(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  TILE_RESOLVE(cuDeviceGetName, "cuDeviceGetName");
  TILE_RESOLVE(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  TILE_RESOLVE(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
               "cuDevicePrimaryCtxRelease");
  TILE_RESOLVE(cuCtxSetCurrent, "cuCtxSetCurrent");
  TILE_RESOLVE(cuCtxSynchronize, "cuCtxSynchronize");
  TILE_RESOLVE(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  TILE_RESOLVE(cuModuleUnload, "cuModuleUnload");
  TILE_RESOLVE(cuModuleGetFunction, "cuModuleGetFunction");
  TILE_RESOLVE(cuFuncGetAttribute, "cuFuncGetAttribute");
  TILE_RESOLVE(cuFuncSetAttribute, "cuFuncSetAttribute");
  TILE_RESOLVE(cuLaunchKernel, "cuLaunchKernel");
  TILE_RESOLVE(cuMemAlloc, "cuMemAlloc_v2");
  TILE_RESOLVE(cuMemFree, "cuMemFree_v2");
  TILE_RESOLVE(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  TILE_RESOLVE(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  TILE_RESOLVE(cuMemsetD8, "cuMemsetD8_v2");
  TILE_RESOLVE(cuMemGetAddressRange, "cuMemGetAddressRange_v2");
  TILE_RESOLVE(cuEventCreate, "cuEventCreate");
  TILE_RESOLVE(cuEventRecord, "cuEventRecord");
  TILE_RESOLVE(cuEventSynchronize, "cuEventSynchronize");
  TILE_RESOLVE(cuEventElapsedTime, "cuEventElapsedTime_v2",
               "cuEventElapsedTime");
  TILE_RESOLVE(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  TILE_RESOLVE(cuGetErrorName, "cuGetErrorName");
  TILE_RESOLVE(cuGetErrorString, "cuGetErrorString");
#undef TILE_RESOLVE
  // CUDA 12+ only, and only kernels with tensor maps need it: an older driver
  // still runs the others (Kernel::launch reports it missing).
  std::string optional;
  if (!resolve(h, api.cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"},
               optional))
    api.cuTensorMapEncodeTiled = nullptr;
  // Only persistent kernels need it (Kernel::load reports it missing).
  if (!resolve(h, api.cuOccupancyMaxActiveBlocksPerMultiprocessor,
               {"cuOccupancyMaxActiveBlocksPerMultiprocessor"}, optional))
    api.cuOccupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  return true;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<CudaApi>> byPath;
};

Registry &registry() {
  static Registry *r = new Registry(); // never destroyed: outlives statics
  return *r;
}

} // namespace

std::string CudaApi::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUDA error " + std::to_string(result);
  std::string out = name;
  if (cuGetErrorString(result, &text) == CUDA_SUCCESS && text)
    out += std::string(" (") + text + ")";
  return out;
}

Status CudaApi::check(CUresult result, const char *call) const {
  if (result == CUDA_SUCCESS)
    return Status();
  return Status::error(std::string(call) + " failed: " + describe(result));
}

const CudaApi *getCudaApi(Status &status) {
  std::string path = driverPath();
  Registry &reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);

  auto it = reg.byPath.find(path);
  if (it == reg.byPath.end()) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      status = Status::error("no CUDA driver (" + path +
                             " not found): " + (why ? why : "dlopen failed") +
                             "; tilec needs an NVIDIA GPU and its driver to "
                             "launch kernels");
      return nullptr;
    }
    auto api = std::make_unique<CudaApi>();
    api->handle = handle;
    api->path = path;
    std::string missing;
    if (!resolveAll(*api, missing)) {
      dlclose(handle);
      status = Status::error("CUDA driver " + path + " lacks " + missing +
                             " (driver too old?)");
      return nullptr;
    }
    it = reg.byPath.emplace(path, std::move(api)).first;
  }

  // cuInit is cheap once the driver is up; calling it on every open keeps a
  // failure (no device, driver/GPU mismatch) visible to each caller.
  CudaApi &api = *it->second;
  Status init = api.check(api.cuInit(0), "cuInit");
  if (!init.ok()) {
    status = Status::error("no GPU: " + init.message());
    return nullptr;
  }
  status = Status();
  return &api;
}

Context::~Context() {
  if (api && context)
    (void)api->cuDevicePrimaryCtxRelease(device);
}

} // namespace detail

std::string driverPath() {
  const char *env = std::getenv("TILEC_CUDA_DRIVER");
  return (env && *env) ? std::string(env) : std::string("libcuda.so.1");
}

Status initDriver() {
  Status status;
  (void)detail::getCudaApi(status);
  return status;
}

} // namespace tile
