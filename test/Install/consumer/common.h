// Shared by jit_main.cpp and aot_main.cpp: run `add` on the GPU and check it.
#pragma once

#include "tile/Runtime.h"

#include <cstdio>
#include <vector>

/// Launches out = x + y (n elements) and compares with the host; 0 passed,
/// 1 failed.
inline int runAdd(const tile::Device &dev, const tile::Kernel &kernel) {
  const int n = 1000;
  const unsigned block = 256; // add.tile's BLOCK
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1.0f - i;
  }
  auto dx = tile::DeviceBuffer::allocate(dev, n * sizeof(float));
  auto dy = tile::DeviceBuffer::allocate(dev, n * sizeof(float));
  auto dout = tile::DeviceBuffer::allocate(dev, n * sizeof(float));
  if (!dx || !dy || !dout) {
    std::fprintf(stderr, "allocate: %s\n",
                 (!dx ? dx : !dy ? dy : dout).error().c_str());
    return 1;
  }
  tile::Status s = dx->upload(x);
  if (s.ok())
    s = dy->upload(y);
  if (s.ok())
    s = kernel.launch({(n + block - 1) / block, 1, 1},
                      {tile::KernelArg::pointer(*dx, "f32"),
                       tile::KernelArg::pointer(*dy, "f32"),
                       tile::KernelArg::pointer(*dout, "f32"),
                       tile::KernelArg::int32(n)});
  if (s.ok())
    s = dev.synchronize();
  if (s.ok())
    s = dout->download(out);
  if (!s.ok()) {
    std::fprintf(stderr, "launch: %s\n", s.message().c_str());
    return 1;
  }
  for (int i = 0; i < n; ++i)
    if (out[i] != x[i] + y[i]) {
      std::fprintf(stderr, "FAIL: out[%d] = %g, expected %g\n", i, out[i],
                   x[i] + y[i]);
      return 1;
    }
  std::printf("PASS: add on %s (%s)\n", dev.description().c_str(),
              kernel.loadedFrom().c_str());
  return 0;
}
