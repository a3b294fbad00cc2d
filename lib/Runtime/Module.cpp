//===- Module.cpp - load PTX / cubin, find kernels, check shared memory ---===//
//
// Post-condition of Kernel::load: the function exists, its shared memory fits
// the device, the dynamic shared memory attribute is set when above the
// 48 KiB default. (Tensor maps are encoded at each launch: Launch.cpp.)
//
//===----------------------------------------------------------------------===//

#include "CudaApi.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace tile {

using namespace detail;

namespace {
constexpr std::size_t kLogBytes = 64 * 1024;

std::string trimLog(const std::vector<char> &log) {
  std::string s(log.data());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}
/// PTX/cubin for sm_XY runs on cc ≥ X.Y; sm_XYa only on cc X.Y exactly.
Status checkArch(const std::string &arch, const Device &device) {
  int major = device.computeCapabilityMajor();
  int minor = device.computeCapabilityMinor();
  unsigned num = 0;
  char suffix = 0;
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0 ||
      std::sscanf(arch.c_str() + 3, "%u%c", &num, &suffix) < 1)
    return Status(); // unknown spelling: let the driver decide
  int needMajor = int(num / 10), needMinor = int(num % 10);
  bool archSpecific = suffix == 'a';
  bool fits = archSpecific ? (major == needMajor && minor == needMinor)
                           : (major > needMajor ||
                              (major == needMajor && minor >= needMinor));
  if (fits)
    return Status();
  return Status::error("built for " + arch +
                       ", which needs a GPU of compute "
                       "capability " +
                       std::to_string(needMajor) + "." +
                       std::to_string(needMinor) +
                       (archSpecific ? " exactly" : " or newer") +
                       "; device is " + device.description() +
                       " (recompile with -arch=" + device.archString() + ")");
}
} // namespace

Module &Module::operator=(Module &&other) noexcept {
  if (this != &other) {
    release();
    ctx_ = std::move(other.ctx_);
    module_ = other.module_;
    infoLog_ = std::move(other.infoLog_);
    other.module_ = nullptr;
  }
  return *this;
}

Module::~Module() { release(); }

void Module::release() {
  if (ctx_ && module_) {
    (void)ctx_->makeCurrent();
    (void)ctx_->api->cuModuleUnload(static_cast<CUmodule>(module_));
  }
  module_ = nullptr;
  ctx_.reset();
}

Expected<Module> Module::loadImage(const Device &device, const void *image,
                                   const char *what) {
  Module m;
  m.ctx_ = device.context();
  const CudaApi &api = *m.ctx_->api;
  if (Status s = m.ctx_->makeCurrent(); !s.ok())
    return s;

  std::vector<char> errorLog(kLogBytes, 0), infoLog(kLogBytes, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_LOG_VERBOSE};
  void *values[] = {
      errorLog.data(), reinterpret_cast<void *>(std::uintptr_t(kLogBytes - 1)),
      infoLog.data(), reinterpret_cast<void *>(std::uintptr_t(kLogBytes - 1)),
      reinterpret_cast<void *>(std::uintptr_t(1))};
  CUmodule mod = nullptr;
  CUresult r = api.cuModuleLoadDataEx(&mod, image, 5, options, values);
  errorLog.back() = 0;
  infoLog.back() = 0;
  if (r != CUDA_SUCCESS) {
    std::string msg = std::string("loading ") + what +
                      ": cuModuleLoadDataEx failed: " + api.describe(r);
    std::string log = trimLog(errorLog);
    if (log.empty())
      log = trimLog(infoLog);
    msg += log.empty() ? "\n(the driver wrote no JIT log)"
                       : "\ndriver JIT log:\n" + log;
    return Status::error(msg);
  }
  m.module_ = mod;
  m.infoLog_ = trimLog(infoLog);
  return m;
}

Expected<Module> Module::loadPTX(const Device &device, const std::string &ptx) {
  if (ptx.empty())
    return Status::error("loading PTX: the PTX text is empty");
  return loadImage(device, ptx.c_str(), "PTX"); // c_str: NUL-terminated
}

Expected<Module> Module::loadCubin(const Device &device,
                                   const std::string &cubin) {
  if (cubin.empty())
    return Status::error("loading cubin: the cubin is empty");
  return loadImage(device, cubin.data(), "cubin");
}

Expected<void *> Module::function(const std::string &name) const {
  if (!module_)
    return Status::error("no module loaded");
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;
  CUfunction fn = nullptr;
  CUresult r = ctx_->api->cuModuleGetFunction(
      &fn, static_cast<CUmodule>(module_), name.c_str());
  if (r != CUDA_SUCCESS)
    return Status::error("kernel '" + name + "' not found in the module: " +
                         ctx_->api->check(r, "cuModuleGetFunction").message());
  return static_cast<void *>(fn);
}

Expected<Kernel> Kernel::load(const Device &device, const Manifest &manifest,
                              const std::string &ptx,
                              const std::string &cubin) {
  const std::string &name = manifest.kernelName;
  if (name.empty())
    return Status::error("manifest has no kernel name");
  if (manifest.blockSize <= 0 || manifest.blockSize > 1024)
    return Status::error("kernel '" + name + "': block size " +
                         std::to_string(manifest.blockSize) +
                         " is outside 1..1024");

  if (Status s = checkArch(manifest.arch, device); !s.ok())
    return s.withContext("kernel '" + name + "'");

  Kernel k;
  k.manifest_ = manifest;
  k.ctx_ = device.context();
  // A cubin from a ptxas newer than the driver does not load: fall back to
  // the PTX then, and report both failures if that fails too.
  bool useCubin = !cubin.empty() && manifest.arch == device.archString();
  std::string cubinError;
  Expected<Module> mod = Status::error("not loaded");
  if (useCubin) {
    mod = Module::loadCubin(device, cubin);
    if (!mod && !ptx.empty()) {
      cubinError = mod.error();
      useCubin = false;
    }
  }
  if (!useCubin)
    mod = Module::loadPTX(device, ptx);
  if (!mod)
    return Status::error("kernel '" + name + "': " + mod.error() +
                         (cubinError.empty() ? ""
                                             : "\n(after the cubin failed: " +
                                                   cubinError + ")"));
  k.loadedFrom_ = useCubin ? "cubin" : "ptx";
  k.module_ = std::make_shared<Module>(mod.take());

  Expected<void *> fn = k.module_->function(name);
  if (!fn)
    return fn.status();
  k.function_ = *fn;

  const CudaApi &api = *k.ctx_->api;
  CUfunction cf = static_cast<CUfunction>(k.function_);
  int staticShared = 0;
  if (Status s =
          api.check(api.cuFuncGetAttribute(
                        &staticShared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cf),
                    "cuFuncGetAttribute");
      !s.ok())
    return s;
  long needed = long(manifest.sharedMemoryBytes) + staticShared;
  long allowed =
      std::max(device.maxSharedMemoryOptin(), kDefaultSharedMemoryBytes);
  if (needed > allowed)
    return Status::error(
        "kernel '" + name + "' needs " + std::to_string(needed) +
        " bytes of shared memory, device " + device.name() + " allows " +
        std::to_string(allowed) + " (use smaller BM/BN or fewer stages)");
  if (manifest.sharedMemoryBytes > kDefaultSharedMemoryBytes ||
      needed > kDefaultSharedMemoryBytes) {
    if (Status s =
            api.check(api.cuFuncSetAttribute(
                          cf, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                          manifest.sharedMemoryBytes),
                      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
        !s.ok())
      return s.withContext("kernel '" + name + "'");
  }
  if (manifest.persistent) {
    // How many programs run at once: a persistent launch starts that many.
    if (!api.cuOccupancyMaxActiveBlocksPerMultiprocessor)
      return Status::error("kernel '" + name + "' is persistent, but the CUDA "
                           "driver " + api.path + " lacks "
                           "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    int perSM = 0;
    if (Status s = api.check(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                                 &perSM, cf, manifest.blockSize,
                                 std::size_t(manifest.sharedMemoryBytes)),
                             "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        !s.ok())
      return s.withContext("kernel '" + name + "'");
    if (perSM <= 0 || device.smCount() <= 0)
      return Status::error("kernel '" + name + "': no program fits on an SM of " +
                           device.name() + " (" + std::to_string(perSM) +
                           " per SM)");
    k.resident_ = unsigned(perSM) * unsigned(device.smCount());
  }
  return k;
}

Expected<unsigned> Kernel::programsPerSM() const {
  if (!function_)
    return Status::error("programsPerSM of a kernel that was never loaded");
  const CudaApi &api = *ctx_->api;
  if (!api.cuOccupancyMaxActiveBlocksPerMultiprocessor)
    return Status::error("the CUDA driver " + api.path + " lacks "
                         "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;
  int perSM = 0;
  if (Status s = api.check(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                               &perSM, static_cast<CUfunction>(function_),
                               manifest_.blockSize,
                               std::size_t(manifest_.sharedMemoryBytes)),
                           "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      !s.ok())
    return s.withContext("kernel '" + manifest_.kernelName + "'");
  return unsigned(std::max(perSM, 1));
}

} // namespace tile
