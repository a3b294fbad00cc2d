//===- Timer.cpp - GPU time between two CUDA events -----------------------===//

#include "CudaApi.h"

namespace tile {

using namespace detail;

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
