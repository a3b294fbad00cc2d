//===- Launch.cpp - typed launch arguments, launch, scratch, timing -------===//

#include "CudaApi.h"

#include <algorithm>
#include <cstdint>

namespace tile {

using namespace detail;

KernelArg KernelArg::pointer(DevicePtr p, std::string elementType) {
  KernelArg a;
  a.kind = Kind::Pointer;
  a.elementType = std::move(elementType);
  a.value.ptr = p;
  return a;
}

KernelArg KernelArg::int32(std::int32_t v) {
  KernelArg a;
  a.kind = Kind::I32;
  a.value.i32 = v;
  return a;
}

KernelArg KernelArg::int64(std::int64_t v) {
  KernelArg a;
  a.kind = Kind::I64;
  a.value.i64 = v;
  return a;
}

KernelArg KernelArg::float32(float v) {
  KernelArg a;
  a.kind = Kind::F32;
  a.value.f32 = v;
  return a;
}

std::string KernelArg::typeName() const {
  switch (kind) {
  case Kind::Pointer:
    return "ptr<" + elementType + ">";
  case Kind::I32:
    return "i32";
  case Kind::I64:
    return "i64";
  case Kind::F32:
    return "f32";
  }
  return "?";
}

Status checkArguments(const Manifest &manifest,
                      const std::vector<KernelArg> &args) {
  const auto &params = manifest.params;
  if (args.size() != params.size()) {
    std::string sig;
    for (const KernelParam &p : params)
      sig += (sig.empty() ? "" : ", ") + p.name + ": " + p.type;
    return Status::error("kernel '" + manifest.kernelName + "' takes " +
                         std::to_string(params.size()) + " argument" +
                         (params.size() == 1 ? "" : "s") + ", got " +
                         std::to_string(args.size()) + " (signature: (" + sig +
                         "))");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string got = args[i].typeName();
    if (got != params[i].type)
      return Status::error("argument " + std::to_string(i) + " '" +
                           params[i].name + "': expected " + params[i].type +
                           ", got " + got);
  }
  return Status();
}

Status Kernel::launch(std::array<unsigned, 3> grid,
                      const std::vector<KernelArg> &args, Stream stream) const {
  if (!function_)
    return Status::error("launch of a kernel that was never loaded");
  if (Status s = checkArguments(manifest_, args); !s.ok())
    return s.withContext("launching '" + manifest_.kernelName + "'");
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return Status(); // nothing to do: an empty problem is not an error
  if (grid[1] > 65535 || grid[2] > 65535 || grid[0] > 0x7fffffffu)
    return Status::error("launching '" + manifest_.kernelName + "': grid (" +
                         std::to_string(grid[0]) + ", " +
                         std::to_string(grid[1]) + ", " +
                         std::to_string(grid[2]) +
                         ") exceeds the limits (2^31-1, 65535, 65535)");

  const CudaApi &api = *ctx_->api;
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;

  // The hidden scratch pointer goes after the user's arguments.
  DevicePtr scratch = 0;
  if (scratch_) {
    Expected<DevicePtr> p =
        scratch_->get(stream, std::uint64_t(grid[0]) * grid[1] * grid[2]);
    if (!p)
      return p.status().withContext("launching '" + manifest_.kernelName + "'");
    scratch = *p;
  }

  // kernelParams ends with a nullptr: the driver reads only as many entries
  // as the kernel declares, and the terminator lets a fake driver count them.
  std::vector<void *> params;
  params.reserve(args.size() + 2);
  for (const KernelArg &a : args)
    params.push_back(const_cast<void *>(static_cast<const void *>(&a.value)));
  if (scratch_)
    params.push_back(&scratch);
  params.push_back(nullptr);

  CUresult r = api.cuLaunchKernel(
      static_cast<CUfunction>(function_), grid[0], grid[1], grid[2],
      unsigned(manifest_.blockSize), 1, 1,
      unsigned(manifest_.sharedMemoryBytes), static_cast<CUstream>(stream),
      params.size() == 1 ? nullptr : params.data(), nullptr);
  return api.check(r, "cuLaunchKernel")
      .withContext("launching '" + manifest_.kernelName + "'");
}

//===----------------------------------------------------------------------===//
// Scratch
//===----------------------------------------------------------------------===//

Expected<DevicePtr> Scratch::get(Stream stream, std::uint64_t programs) {
  std::uint64_t need = 0;
  if (__builtin_mul_overflow(std::uint64_t(bytesPerProgram), programs, &need) ||
      need > std::uint64_t(SIZE_MAX))
    return Status::error("global scratch of " +
                         std::to_string(bytesPerProgram) +
                         " bytes for each of " + std::to_string(programs) +
                         " programs overflows");
  std::lock_guard<std::mutex> lock(mutex);
  auto it = current.find(stream);
  Buffer old = it == current.end() ? Buffer() : it->second;
  if (old.bytes >= need)
    return DevicePtr(old.ptr);
  // Grow to at least twice the old size: the buffers kept then add up to
  // less than the current one.
  std::size_t bytes = std::max<std::size_t>(std::size_t(need), 2 * old.bytes);
  CUdeviceptr p = 0;
  CUresult r = ctx->api->cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS && bytes > need) { // doubling was too greedy
    bytes = std::size_t(need);
    r = ctx->api->cuMemAlloc(&p, bytes);
  }
  if (Status s = ctx->api->check(r, "cuMemAlloc"); !s.ok())
    return s.withContext("allocating " + std::to_string(bytes) +
                         " bytes of global scratch (" +
                         std::to_string(bytesPerProgram) + " per program, " +
                         std::to_string(programs) + " programs)");
  // The old buffer may still be in use by an earlier launch on this stream:
  // keep it until the destructor (see CudaApi.h).
  if (old.ptr)
    retired.push_back(old.ptr);
  current[stream] = Buffer{p, bytes};
  return DevicePtr(p);
}

Scratch::~Scratch() {
  if (current.empty())
    return;
  (void)ctx->makeCurrent();
  (void)ctx->api->cuCtxSynchronize(); // launches may still use the buffers
  for (const auto &entry : current)
    if (entry.second.ptr)
      (void)ctx->api->cuMemFree(entry.second.ptr);
  for (CUdeviceptr p : retired)
    (void)ctx->api->cuMemFree(p);
}

//===----------------------------------------------------------------------===//
// EventTimer
//===----------------------------------------------------------------------===//

EventTimer &EventTimer::operator=(EventTimer &&other) noexcept {
  if (this != &other) {
    release();
    ctx_ = std::move(other.ctx_);
    start_ = other.start_;
    stop_ = other.stop_;
    other.start_ = other.stop_ = nullptr;
  }
  return *this;
}

EventTimer::~EventTimer() { release(); }

void EventTimer::release() {
  if (ctx_) {
    (void)ctx_->makeCurrent();
    if (start_)
      (void)ctx_->api->cuEventDestroy(static_cast<CUevent>(start_));
    if (stop_)
      (void)ctx_->api->cuEventDestroy(static_cast<CUevent>(stop_));
  }
  start_ = stop_ = nullptr;
  ctx_.reset();
}

Expected<EventTimer> EventTimer::create(const Device &device) {
  EventTimer t;
  t.ctx_ = device.context();
  const CudaApi &api = *t.ctx_->api;
  if (Status s = t.ctx_->makeCurrent(); !s.ok())
    return s;
  CUevent a = nullptr, b = nullptr;
  if (Status s = api.check(api.cuEventCreate(&a, 0), "cuEventCreate"); !s.ok())
    return s;
  t.start_ = a;
  if (Status s = api.check(api.cuEventCreate(&b, 0), "cuEventCreate"); !s.ok())
    return s;
  t.stop_ = b;
  return t;
}

Status EventTimer::start(Stream stream) {
  if (!ctx_)
    return Status::error("EventTimer used before create()");
  return ctx_->api->check(
      ctx_->api->cuEventRecord(static_cast<CUevent>(start_),
                               static_cast<CUstream>(stream)),
      "cuEventRecord");
}

Status EventTimer::stop(Stream stream) {
  if (!ctx_)
    return Status::error("EventTimer used before create()");
  return ctx_->api->check(
      ctx_->api->cuEventRecord(static_cast<CUevent>(stop_),
                               static_cast<CUstream>(stream)),
      "cuEventRecord");
}

Expected<float> EventTimer::elapsedMs() {
  if (!ctx_)
    return Status::error("EventTimer used before create()");
  const CudaApi &api = *ctx_->api;
  if (Status s = api.check(api.cuEventSynchronize(static_cast<CUevent>(stop_)),
                           "cuEventSynchronize");
      !s.ok())
    return s;
  float ms = 0;
  if (Status s =
          api.check(api.cuEventElapsedTime(&ms, static_cast<CUevent>(start_),
                                           static_cast<CUevent>(stop_)),
                    "cuEventElapsedTime");
      !s.ok())
    return s;
  return ms;
}

} // namespace tile
