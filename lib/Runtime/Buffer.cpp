//===- Buffer.cpp - device memory with RAII free --------------------------===//

#include "CudaApi.h"

namespace tile {

using namespace detail;

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    ctx_ = std::move(other.ctx_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (ctx_ && ptr_) {
    (void)ctx_->makeCurrent();
    (void)ctx_->api->cuMemFree(ptr_);
  }
  ptr_ = 0;
  bytes_ = 0;
  ctx_.reset();
}

Expected<DeviceBuffer> DeviceBuffer::allocate(const Device &device,
                                              std::size_t bytes) {
  DeviceBuffer b;
  b.ctx_ = device.context();
  if (bytes == 0)
    return b;
  if (Status s = b.ctx_->makeCurrent(); !s.ok())
    return s;
  CUdeviceptr p = 0;
  if (Status s =
          b.ctx_->api->check(b.ctx_->api->cuMemAlloc(&p, bytes), "cuMemAlloc");
      !s.ok())
    return s.withContext("allocating " + std::to_string(bytes) + " bytes");
  b.ptr_ = p;
  b.bytes_ = bytes;
  return b;
}

Status DeviceBuffer::checkRange(std::size_t bytes, std::size_t offset,
                                const char *what) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    return Status::error(std::string(what) + ": " + std::to_string(bytes) +
                         " bytes at offset " + std::to_string(offset) +
                         " exceed the buffer's " + std::to_string(bytes_) +
                         " bytes");
  if (bytes && !ctx_)
    return Status::error(std::string(what) + ": buffer was never allocated");
  return Status();
}

Status DeviceBuffer::copyFromHost(const void *src, std::size_t bytes,
                                  std::size_t offset) {
  if (Status s = checkRange(bytes, offset, "copy to device"); !s.ok())
    return s;
  if (bytes == 0)
    return Status();
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;
  return ctx_->api->check(ctx_->api->cuMemcpyHtoD(ptr_ + offset, src, bytes),
                          "cuMemcpyHtoD");
}

Status DeviceBuffer::copyToHost(void *dst, std::size_t bytes,
                                std::size_t offset) const {
  if (Status s = checkRange(bytes, offset, "copy to host"); !s.ok())
    return s;
  if (bytes == 0)
    return Status();
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;
  return ctx_->api->check(ctx_->api->cuMemcpyDtoH(dst, ptr_ + offset, bytes),
                          "cuMemcpyDtoH");
}

Status DeviceBuffer::fill(std::uint8_t value) {
  if (bytes_ == 0)
    return Status();
  if (Status s = ctx_->makeCurrent(); !s.ok())
    return s;
  return ctx_->api->check(ctx_->api->cuMemsetD8(ptr_, value, bytes_),
                          "cuMemsetD8");
}

} // namespace tile
