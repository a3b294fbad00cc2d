//===- Profile.cpp - NVTX ranges and per-call event timings ---------------===//
//
// NVTX: libnvToolsExt.so.1 (or $TILEC_NVTX_LIBRARY) opened with dlopen on
// the first range; nvtxRangePushA / nvtxRangePop resolved from it. Absent:
// every call is a no-op. Under Nsight Systems the library forwards the
// ranges to the profiler's injection library.
//
// Timings: a ring of CUDA event pairs around the attention launch. run()
// only records events; a slot's time is read when the ring comes back to
// it (that call finished long ago, so the wait is short) and in summary().
//
//===----------------------------------------------------------------------===//
#include "lib/Attention/AttentionImpl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <numeric>

using namespace tile;
using namespace tile::attention_detail;

namespace {

struct NvtxApi {
  int (*push)(const char *) = nullptr;
  int (*pop)() = nullptr;
};

const NvtxApi &nvtx() {
  static NvtxApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *env = std::getenv("TILEC_NVTX_LIBRARY");
    for (const char *name :
         {env, "libnvToolsExt.so.1", "libnvToolsExt.so"}) {
      if (!name || !*name)
        continue;
      void *h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!h)
        continue;
      auto push = reinterpret_cast<int (*)(const char *)>(
          ::dlsym(h, "nvtxRangePushA"));
      auto pop = reinterpret_cast<int (*)()>(::dlsym(h, "nvtxRangePop"));
      if (push && pop) {
        api.push = push;
        api.pop = pop;
        return;
      }
      ::dlclose(h);
    }
  });
  return api;
}

constexpr std::size_t kRing = 64;

} // namespace

void tile::attention_detail::nvtxPush(const std::string &name) {
  if (const NvtxApi &a = nvtx(); a.push)
    a.push(name.c_str());
}

void tile::attention_detail::nvtxPop() {
  if (const NvtxApi &a = nvtx(); a.pop)
    a.pop();
}

Status Profiler::init(const Device &device, std::string kernel,
                      double flopsPerCall) {
  kernel_ = std::move(kernel);
  flops_ = flopsPerCall;
  std::vector<EventTimer> ring;
  for (std::size_t i = 0; i < kRing; ++i) {
    auto t = EventTimer::create(device);
    if (!t)
      return t.status();
    ring.push_back(t.take());
  }
  ring_ = std::move(ring);
  pending_.assign(kRing, false);
  return Status();
}

Status Profiler::harvest(std::size_t slot) {
  if (!pending_[slot])
    return Status();
  pending_[slot] = false;
  auto ms = ring_[slot].elapsedMs();
  if (!ms)
    return ms.status();
  ms_.push_back(*ms);
  return Status();
}

Status Profiler::begin(Stream stream) {
  if (Status s = harvest(next_); !s.ok())
    return s;
  return ring_[next_].start(stream);
}

Status Profiler::end(Stream stream) {
  Status s = ring_[next_].stop(stream);
  pending_[next_] = s.ok();
  next_ = (next_ + 1) % ring_.size();
  return s;
}

ProfileSummary Profiler::summary() {
  ProfileSummary s;
  s.kernel = kernel_;
  for (std::size_t i = 0; i < ring_.size(); ++i)
    (void)harvest(i); // a failed read drops that call
  if (ms_.empty())
    return s;
  std::vector<float> sorted = ms_;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) {
    std::size_t i = std::size_t(q * double(sorted.size() - 1) + 0.5);
    return 1e3 * double(sorted[std::min(i, sorted.size() - 1)]);
  };
  s.calls = unsigned(sorted.size());
  s.meanUs = 1e3 * std::accumulate(sorted.begin(), sorted.end(), 0.0) /
             double(sorted.size());
  s.p50Us = at(0.5);
  s.p99Us = at(0.99);
  s.tflops = s.meanUs > 0 ? flops_ / (s.meanUs * 1e-6) / 1e12 : 0;
  return s;
}

std::string ProfileSummary::str() const {
  return fmt::format("attention profile: {}: {} calls, mean {:.1f} us, p50 "
                     "{:.1f} us, p99 {:.1f} us, {:.1f} TFLOP/s",
                     kernel, calls, meanUs, p50Us, p99Us, tflops);
}
