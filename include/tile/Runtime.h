//===- Runtime.h - load and launch kernels (CUDA driver) ------ -*- C++ -*-===//
//
// A thin, exception-free layer over the CUDA driver API. libcuda.so.1 is
// opened with dlopen on first use (env TILEC_CUDA_DRIVER overrides the path),
// so programs linked against this library start, and fail with a clear
// message, on machines without a GPU. No LLVM, no cuda.h.
//
// Every call that can fail returns a Status or an Expected<T>; a failing
// driver call reads "cuXxx failed: CUDA_ERROR_… (description)".
//
//   tile::Expected<tile::Device> dev = tile::Device::open();
//   if (!dev) { fprintf(stderr, "%s\n", dev.error().c_str()); return 1; }
//   auto kernel = tile::loadBundle(*dev, "out/flash_fwd");
//   kernel->launch({grid_x, bh, 1},
//                  {tile::KernelArg::pointer(q, "bf16"), …});
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Manifest.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tile {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Success, or an error message. Default-constructed: success.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return !failed_; }
  const std::string &message() const { return message_; }
  /// Prefixes the message ("while loading 'x': …"); no-op on success.
  Status withContext(const std::string &context) const {
    return ok() ? *this : error(context + ": " + message_);
  }

private:
  bool failed_ = false;
  std::string message_;
};

/// A value or an error message. Converts to true when it holds a value.
template <typename T> class [[nodiscard]] Expected {
public:
  // T&& (not T by value), so that `return local;` moves on every C++17
  // compiler, move-only T included.
  Expected(T &&value) : value_(std::move(value)) {}
  Expected(const T &value) : value_(value) {}
  /// From a failed Status (a successful one is a programming error and is
  /// turned into an error too, so that it cannot be mistaken for a value).
  Expected(Status status)
      : error_(status.ok() ? "internal error: Expected built from success"
                           : status.message()) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }
  const std::string &error() const { return error_; }
  Status status() const { return ok() ? Status() : Status::error(error_); }

private:
  std::optional<T> value_;
  std::string error_;
};

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Opaque driver handles (mirrors cuda.h without including it).
using DevicePtr = std::uint64_t; ///< CUdeviceptr
using Stream = void *;           ///< CUstream; nullptr is the default stream

namespace detail {
struct CudaApi;
struct Context; // a retained primary context, shared by everything made on it
} // namespace detail

/// Loads the driver (once per path) and calls cuInit. Errors: "no CUDA driver
/// (libcuda.so.1 not found): …" or "no GPU: …".
Status initDriver();

/// The path of the driver library this process uses: $TILEC_CUDA_DRIVER or
/// "libcuda.so.1".
std::string driverPath();

/// A GPU with its primary context retained (released when the last Device,
/// DeviceBuffer, Module or Kernel made from it is gone).
class Device {
public:
  /// Opens device `ordinal`. Errors: no driver, no GPU, bad ordinal.
  static Expected<Device> open(int ordinal = 0);

  int ordinal() const { return ordinal_; }
  const std::string &name() const { return name_; }
  int computeCapabilityMajor() const { return ccMajor_; }
  int computeCapabilityMinor() const { return ccMinor_; }
  int smCount() const { return smCount_; }
  /// Largest shared memory one block may opt into, in bytes.
  int maxSharedMemoryOptin() const { return maxSharedOptin_; }
  /// cuDriverGetVersion, e.g. 12040.
  int driverVersion() const { return driverVersion_; }
  /// Target arch for tilec: "sm_90a" for cc 9.0, "sm_80" for cc 8.x and as
  /// the fallback for newer GPUs (which run sm_80 PTX through the driver JIT).
  std::string archString() const;
  /// tilec kernels need compute capability 8.0 or newer.
  bool isSupported() const { return ccMajor_ >= 8; }
  /// "NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs, driver 12.4)".
  std::string description() const;

  /// Makes this device's context current on the calling thread.
  Status makeCurrent() const;
  /// cuCtxSynchronize.
  Status synchronize() const;

  const std::shared_ptr<detail::Context> &context() const { return ctx_; }

private:
  Device() = default;
  std::shared_ptr<detail::Context> ctx_;
  int ordinal_ = 0;
  std::string name_;
  int ccMajor_ = 0, ccMinor_ = 0, smCount_ = 0, maxSharedOptin_ = 0;
  int driverVersion_ = 0;
};

/// Device memory, freed on destruction. A zero-byte buffer holds no
/// allocation (ptr() == 0) and all its copies are no-ops.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  static Expected<DeviceBuffer> allocate(const Device &device,
                                         std::size_t bytes);

  DevicePtr ptr() const { return ptr_; }
  std::size_t size() const { return bytes_; }

  /// Copies `bytes` from host memory to offset `offset` of this buffer.
  Status copyFromHost(const void *src, std::size_t bytes,
                      std::size_t offset = 0);
  /// Copies `bytes` from offset `offset` of this buffer to host memory.
  Status copyToHost(void *dst, std::size_t bytes, std::size_t offset = 0) const;
  /// Sets every byte of the buffer to `value` (e.g. 0xFF: NaN poison).
  Status fill(std::uint8_t value);

  template <typename T> Status upload(const std::vector<T> &host) {
    return copyFromHost(host.data(), host.size() * sizeof(T));
  }
  template <typename T> Status download(std::vector<T> &host) const {
    return copyToHost(host.data(), host.size() * sizeof(T));
  }

private:
  Status checkRange(std::size_t bytes, std::size_t offset,
                    const char *what) const;
  void release();
  std::shared_ptr<detail::Context> ctx_;
  DevicePtr ptr_ = 0;
  std::size_t bytes_ = 0;
};

/// A loaded CUmodule (PTX or cubin), unloaded on destruction.
class Module {
public:
  Module() = default;
  Module(Module &&other) noexcept { *this = std::move(other); }
  Module &operator=(Module &&other) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module();

  /// Loads PTX text; the driver compiles it. On failure the error carries
  /// the driver's JIT log.
  static Expected<Module> loadPTX(const Device &device, const std::string &ptx);
  /// Loads a cubin image (must match the device's arch).
  static Expected<Module> loadCubin(const Device &device,
                                    const std::string &cubin);

  /// The kernel named `name` (CUfunction, as an opaque handle).
  Expected<void *> function(const std::string &name) const;
  /// The driver's info log of the load (may be empty).
  const std::string &infoLog() const { return infoLog_; }

private:
  static Expected<Module> loadImage(const Device &device, const void *image,
                                    const char *what);
  void release();
  std::shared_ptr<detail::Context> ctx_;
  void *module_ = nullptr;
  std::string infoLog_;
};

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

/// One launch argument: a device pointer tagged with its element type, or a
/// scalar. The tag is checked against the manifest before every launch.
struct KernelArg {
  enum class Kind { Pointer, I32, I64, F32, U32, U64 };
  Kind kind = Kind::I32;
  std::string elementType; ///< pointers only: "bf16", "f16", "f32", …
  union {
    DevicePtr ptr;
    std::int32_t i32;
    std::int64_t i64;
    float f32;
    std::uint32_t u32;
    std::uint64_t u64;
  } value{};

  static KernelArg pointer(DevicePtr p, std::string elementType);
  static KernelArg pointer(const DeviceBuffer &b, std::string elementType) {
    return pointer(b.ptr(), std::move(elementType));
  }
  static KernelArg int32(std::int32_t v);
  static KernelArg int64(std::int64_t v);
  static KernelArg float32(float v);
  static KernelArg uint32(std::uint32_t v);
  static KernelArg uint64(std::uint64_t v);

  /// As spelled in a manifest: "ptr<bf16>", "i32", "i64", "f32", "u32", "u64".
  std::string typeName() const;
};

/// Checks `args` against `manifest.params`: count, then each type. Errors:
/// "kernel 'k' takes 7 arguments, got 6",
/// "argument 5 'seqlen': expected i32, got f32" (0-based position); then
/// pointer alignment and the manifest's requirements (require(...) in the
/// kernel: "kernel 'k' requires heads % heads_kv == 0 (k.tile:60:3), which
/// heads = 6, heads_kv = 4 do not meet").
Status checkArguments(const Manifest &manifest,
                      const std::vector<KernelArg> &args);

/// A launchable kernel: a module, its function and its manifest.
class Kernel {
public:
  Kernel() = default;

  /// Loads a kernel from PTX and/or cubin. The cubin is used when it is
  /// non-empty and `manifest.arch` matches the device; otherwise the PTX.
  /// Checks the shared memory the manifest needs against the device and
  /// sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES above 48 KiB.
  static Expected<Kernel> load(const Device &device, const Manifest &manifest,
                               const std::string &ptx,
                               const std::string &cubin = std::string());

  /// Launches on `grid` with block (manifest.blockSize, 1, 1) and
  /// manifest.sharedMemoryBytes of dynamic shared memory, after
  /// checkArguments. A grid with a zero dimension launches nothing and
  /// succeeds. Asynchronous: errors of the kernel itself surface at the
  /// next synchronising call.
  ///
  /// `args` are only the manifest's params, tensor maps or not: for each of
  /// manifest.tensorMaps the launch encodes a TMA tensor map
  /// (cuTensorMapEncodeTiled) of the pointer argument it names, covering
  /// every whole row of the allocation from that pointer on, and passes it
  /// by value after the user's arguments. Errors: the pointer is null or not
  /// 16-byte aligned, is not device memory (cuMemGetAddressRange), holds less
  /// than one row, or the driver rejects the map.
  ///
  /// A persistent kernel (manifest.persistent) is launched with
  /// min(programs of `grid`, residentPrograms()) programs along x, and gets
  /// `grid` itself (three u32) after the user's arguments, before the maps:
  /// its programs loop over `grid`'s programs (at most 2^30 of them).
  ///
  /// Any other kernel whose manifest has "gridArgs" runs a grid over 65535
  /// along y or z as several launches of at most 65535 each (z-major, in
  /// stream order), passing each launch where it starts and the whole
  /// grid's size as its gridArgs (after the persistent grid, before the
  /// maps): the kernel's program ids and num_programs are those of `grid`.
  /// A manifest without the key (an older tilec) limits y and z to 65535.
  Status launch(std::array<unsigned, 3> grid,
                const std::vector<KernelArg> &args,
                Stream stream = nullptr) const;

  const Manifest &manifest() const { return manifest_; }
  /// "cubin" or "ptx": what was loaded.
  const std::string &loadedFrom() const { return loadedFrom_; }
  /// Programs of this kernel the device runs at once (SMs times programs
  /// per SM by the driver's occupancy calculator); set for persistent
  /// kernels only, else 0.
  unsigned residentPrograms() const { return resident_; }
  /// Programs of this kernel one SM runs at once (the driver's occupancy
  /// calculator, for its block size and shared memory); at least 1.
  Expected<unsigned> programsPerSM() const;
  const Module &module() const { return *module_; }

private:
  std::shared_ptr<Module> module_;
  std::shared_ptr<detail::Context> ctx_;
  void *function_ = nullptr;
  Manifest manifest_;
  std::string loadedFrom_;
  unsigned resident_ = 0;
};

/// Times GPU work with a pair of CUDA events.
class EventTimer {
public:
  EventTimer() = default;
  EventTimer(EventTimer &&other) noexcept { *this = std::move(other); }
  EventTimer &operator=(EventTimer &&other) noexcept;
  EventTimer(const EventTimer &) = delete;
  EventTimer &operator=(const EventTimer &) = delete;
  ~EventTimer();

  static Expected<EventTimer> create(const Device &device);
  Status start(Stream stream = nullptr);
  Status stop(Stream stream = nullptr);
  /// Waits for the stop event; milliseconds between start and stop.
  Expected<float> elapsedMs();

private:
  void release();
  std::shared_ptr<detail::Context> ctx_;
  void *start_ = nullptr, *stop_ = nullptr;
};

//===----------------------------------------------------------------------===//
// AOT bundles: PREFIX.manifest.json + PREFIX.ptx [+ PREFIX.cubin]
//===----------------------------------------------------------------------===//

/// Writes a bundle (what `tilec -o PREFIX` produces). The cubin is written
/// only when non-empty.
Status writeBundle(const std::string &prefix, const Manifest &manifest,
                   const std::string &ptx, const std::string &cubin);

/// Reads PREFIX.manifest.json and PREFIX.cubin (when present and built for
/// the device's arch) or else PREFIX.ptx, and loads the kernel.
Expected<Kernel> loadBundle(const Device &device, const std::string &prefix);

//===----------------------------------------------------------------------===//
// Host helpers
//===----------------------------------------------------------------------===//

/// IEEE binary16 and bfloat16 conversions, round to nearest even (NaN kept
/// NaN, overflow to inf).
std::uint16_t floatToHalf(float f);
float halfToFloat(std::uint16_t h);
std::uint16_t floatToBFloat16(float f);
float bfloat16ToFloat(std::uint16_t b);

/// Whole file as bytes; false with `error` set on failure.
bool readFile(const std::string &path, std::string &out, std::string &error);
/// Writes atomically: to a temporary name in the same folder, then rename.
Status writeFileAtomic(const std::string &path, const std::string &data);

} // namespace tile
