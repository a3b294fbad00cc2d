//===- VariantsDevice.cpp - one variant case's buffers on the GPU ---------===//

#include "VariantsDevice.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tile;

namespace tilegpu {

Layout makeLayout(bool bshd, int batch, int heads, int seqlen, int pad) {
  Layout l;
  long s = long(seqlen) + pad;
  if (bshd) {
    l.row = heads;
    l.head = 1;
    l.batch = s * heads;
  } else {
    l.row = 1;
    l.head = s;
    l.batch = long(heads) * s;
  }
  l.rows = long(batch) * l.batch;
  return l;
}

std::vector<std::uint8_t> toLayout(DType t, const std::vector<float> &logical,
                                   const Layout &layout, int batch, int heads,
                                   int seqlen, int d) {
  const std::size_t eb = dtypeBytes(t);
  std::vector<std::uint8_t> out(std::size_t(layout.rows + kGuardRows) * d * eb,
                                0xFF);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < seqlen; ++i) {
        const float *src =
            &logical[((std::size_t(b) * heads + h) * seqlen + i) * d];
        std::uint8_t *dst = &out[std::size_t(layout.at(b, h, i)) * d * eb];
        for (int c = 0; c < d; ++c) {
          if (t == DType::F32) {
            std::memcpy(dst + c * 4, &src[c], 4);
            continue;
          }
          std::uint16_t x = t == DType::F16 ? tile::floatToHalf(src[c])
                                            : tile::floatToBFloat16(src[c]);
          std::memcpy(dst + c * 2, &x, 2);
        }
      }
  return out;
}

namespace {

Status alloc(const Device &dev, std::size_t bytes, DeviceBuffer &out) {
  Expected<DeviceBuffer> b = DeviceBuffer::allocate(dev, bytes);
  if (!b)
    return b.status();
  out = b.take();
  return Status();
}

/// `host` (at least one element's room: a real pointer even when unused).
template <typename T>
Status put(const Device &dev, const std::vector<T> &host, DeviceBuffer &out) {
  if (Status s = alloc(dev, std::max<std::size_t>(host.size(), 64) * sizeof(T),
                       out);
      !s.ok())
    return s;
  if (Status s = out.fill(0xFF); !s.ok())
    return s;
  return host.empty() ? Status() : out.upload(host);
}

} // namespace

Status DeviceVariant::upload(const Device &dev, const VariantCase &c,
                             const VariantData &data, const BlockMask *mask) {
  case_ = &c;
  sparse_ = mask != nullptr;
  qLayout = makeLayout(c.bshd, c.batch, c.heads, c.sq, c.pad);
  kLayout = makeLayout(c.bshd, c.batch, c.headsKv, c.sk, c.pad);
  const std::size_t eb = dtypeBytes(c.dtype);
  struct {
    DeviceBuffer *buf;
    const std::vector<float> *host;
    const Layout *layout;
    int heads, seqlen;
  } tensors[] = {{&q_, &data.q, &qLayout, c.heads, c.sq},
                 {&k_, &data.k, &kLayout, c.headsKv, c.sk},
                 {&v_, &data.v, &kLayout, c.headsKv, c.sk}};
  for (auto &t : tensors) {
    std::vector<std::uint8_t> bytes = toLayout(
        c.dtype, *t.host, *t.layout, c.batch, t.heads, t.seqlen, c.d);
    if (Status s = alloc(dev, bytes.size(), *t.buf); !s.ok())
      return s;
    if (Status s = t.buf->upload(bytes); !s.ok())
      return s;
  }
  if (Status s =
          alloc(dev, std::size_t(qLayout.rows + kGuardRows) * c.d * eb, o_);
      !s.ok())
    return s;
  if (Status s = alloc(dev,
                       (std::size_t(c.batch) * c.heads * c.sq + kGuardRows) * 4,
                       lse_);
      !s.ok())
    return s;
  for (Status s : {put(dev, c.sinks, sinks_), put(dev, c.auxF, auxF_),
                   put(dev, c.auxI, auxI_)})
    if (!s.ok())
      return s;
  if (mask) {
    maskBatch_ = mask->maskBatch;
    maskHeads_ = mask->maskHeads;
    maxBlocks_ = mask->maxBlocks;
    for (Status s : {put(dev, mask->kvNum, kvNum_), put(dev, mask->kvIdx, kvIdx_),
                     put(dev, mask->fullNum, fullNum_),
                     put(dev, mask->fullIdx, fullIdx_)})
      if (!s.ok())
        return s;
  }
  return Status();
}

std::vector<KernelArg> DeviceVariant::arguments() const {
  const VariantCase &c = *case_;
  const char *t = dtypeName(c.dtype);
  std::vector<KernelArg> a = {
      KernelArg::pointer(q_, t),
      KernelArg::pointer(k_, t),
      KernelArg::pointer(v_, t),
      KernelArg::pointer(o_, t),
      KernelArg::pointer(lse_, "f32"),
      KernelArg::int32(c.sq),
      KernelArg::int32(c.sk),
      KernelArg::int32(c.heads),
      KernelArg::int32(c.headsKv),
      KernelArg::int32(std::int32_t(qLayout.row)),
      KernelArg::int32(std::int32_t(qLayout.head)),
      KernelArg::int32(std::int32_t(qLayout.batch)),
      KernelArg::int32(std::int32_t(kLayout.row)),
      KernelArg::int32(std::int32_t(kLayout.head)),
      KernelArg::int32(std::int32_t(kLayout.batch)),
      KernelArg::float32(c.scale()),
      KernelArg::pointer(sinks_, "f32")};
  if (sparse_) {
    a.push_back(KernelArg::pointer(kvNum_, "i32"));
    a.push_back(KernelArg::pointer(kvIdx_, "i32"));
    a.push_back(KernelArg::pointer(fullNum_, "i32"));
    a.push_back(KernelArg::pointer(fullIdx_, "i32"));
    a.push_back(KernelArg::int32(maskBatch_));
    a.push_back(KernelArg::int32(maskHeads_));
    a.push_back(KernelArg::int32(maxBlocks_));
  }
  a.push_back(KernelArg::pointer(auxF_, "f32"));
  a.push_back(KernelArg::pointer(auxI_, "i32"));
  a.push_back(KernelArg::int32(c.auxN));
  return a;
}

std::array<unsigned, 3> DeviceVariant::grid(int bm) const {
  const VariantCase &c = *case_;
  return {unsigned((c.sq + bm - 1) / bm), unsigned(c.heads), unsigned(c.batch)};
}

Status DeviceVariant::launchWithHeadsKv(const Kernel &kernel, int bm,
                                        int headsKv) {
  std::vector<KernelArg> args = arguments();
  args[8] = KernelArg::int32(headsKv); // heads_kv (see arguments())
  return kernel.launch(grid(bm), args);
}

Status DeviceVariant::launchWithScale(const Kernel &kernel, int bm,
                                      float smScale) {
  std::vector<KernelArg> args = arguments();
  args[15] = KernelArg::float32(smScale); // sm_scale (see arguments())
  return kernel.launch(grid(bm), args);
}

Status DeviceVariant::run(const Device &dev, const Kernel &kernel, int bm,
                          std::vector<std::uint8_t> &o,
                          std::vector<std::uint8_t> &lse) {
  if (Status s = o_.fill(0xFF); !s.ok())
    return s;
  if (Status s = lse_.fill(0xFF); !s.ok())
    return s;
  if (Status s = kernel.launch(grid(bm), arguments()); !s.ok())
    return s;
  if (Status s = dev.synchronize(); !s.ok())
    return s.withContext("after the launch");
  o.resize(o_.size());
  lse.resize(lse_.size());
  if (Status s = o_.copyToHost(o.data(), o.size()); !s.ok())
    return s;
  return lse_.copyToHost(lse.data(), lse.size());
}

} // namespace tilegpu
