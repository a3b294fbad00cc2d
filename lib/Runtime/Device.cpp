//===- Device.cpp - open a GPU and read what tilec needs to know about it -===//

#include "CudaApi.h"

namespace tile {

using namespace detail;

Expected<Device> Device::open(int ordinal) {
  Status status;
  const CudaApi *api = getCudaApi(status);
  if (!api)
    return status;

  int count = 0;
  if (Status s = api->check(api->cuDeviceGetCount(&count), "cuDeviceGetCount");
      !s.ok())
    return Status::error("no GPU: " + s.message());
  if (count == 0)
    return Status::error("no GPU: the CUDA driver reports 0 devices");
  if (ordinal < 0 || ordinal >= count)
    return Status::error("no GPU " + std::to_string(ordinal) +
                         ": the driver reports " + std::to_string(count) +
                         " device(s)");

  CUdevice dev = 0;
  if (Status s = api->check(api->cuDeviceGet(&dev, ordinal), "cuDeviceGet");
      !s.ok())
    return s;

  Device d;
  d.ordinal_ = ordinal;
  char name[256] = {0};
  if (Status s = api->check(api->cuDeviceGetName(name, sizeof(name) - 1, dev),
                            "cuDeviceGetName");
      !s.ok())
    return s;
  d.name_ = name;

  struct {
    int *out;
    int attr;
  } attrs[] = {
      {&d.ccMajor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {&d.ccMinor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {&d.smCount_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {&d.maxSharedOptin_,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
  };
  for (auto &a : attrs)
    if (Status s = api->check(api->cuDeviceGetAttribute(a.out, a.attr, dev),
                              "cuDeviceGetAttribute");
        !s.ok())
      return s;
  if (Status s = api->check(api->cuDriverGetVersion(&d.driverVersion_),
                            "cuDriverGetVersion");
      !s.ok())
    return s;

  auto ctx = std::make_shared<Context>();
  ctx->api = api;
  ctx->device = dev;
  CUcontext raw = nullptr;
  if (Status s = api->check(api->cuDevicePrimaryCtxRetain(&raw, dev),
                            "cuDevicePrimaryCtxRetain");
      !s.ok())
    return s;
  ctx->context = raw;
  d.ctx_ = std::move(ctx);
  if (Status s = d.makeCurrent(); !s.ok())
    return s;
  return d;
}

std::string Device::archString() const {
  if (ccMajor_ == 9 && ccMinor_ == 0)
    return "sm_90a";
  return "sm_80";
}

std::string Device::description() const {
  return name_ + " (cc " + std::to_string(ccMajor_) + "." +
         std::to_string(ccMinor_) + ", " + std::to_string(smCount_) +
         " SMs, driver " + std::to_string(driverVersion_ / 1000) + "." +
         std::to_string(driverVersion_ % 1000 / 10) + ")";
}

Status Device::makeCurrent() const { return ctx_->makeCurrent(); }

Status Device::synchronize() const {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  return ctx_->api->check(ctx_->api->cuCtxSynchronize(), "cuCtxSynchronize");
}

} // namespace tile
