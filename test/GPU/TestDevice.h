//===- TestDevice.h - the GPU a GPU test runs on, or why it skips -*- C++ -*-===//
//
// Shared by the tile-gpu-* executables. Without a CUDA driver or GPU, or
// with a GPU the test cannot use, a test prints "no GPU: skipped (why)" and
// exits with kSkipExit; ctest reports it as skipped (cmake/TilecTesting.cmake).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Runtime.h"

#include <cstdio>
#include <optional>
#include <string>

namespace tilegpu {

inline constexpr int kSkipExit = 77;

/// GPU 0, or nothing after printing why the test skips: no driver or GPU,
/// one older than sm_80, or (when `needArch` is given) another arch.
inline std::optional<tile::Device> openTestDevice(const std::string &needArch = "") {
  tile::Expected<tile::Device> dev = tile::Device::open();
  if (!dev) {
    std::printf("no GPU: skipped (%s)\n", dev.error().c_str());
    return std::nullopt;
  }
  if (!dev->isSupported()) {
    std::printf("no GPU: skipped (%s: tilec needs compute capability 8.0 or "
                "newer)\n",
                dev->description().c_str());
    return std::nullopt;
  }
  if (!needArch.empty() && dev->archString() != needArch) {
    std::printf("no GPU: skipped (%s: the test needs %s)\n",
                dev->description().c_str(), needArch.c_str());
    return std::nullopt;
  }
  return *dev;
}

} // namespace tilegpu
