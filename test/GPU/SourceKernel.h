//===- SourceKernel.h - a kernel of a test's own .tile source -*- C++ -*-===//
//
// GPU tests that carry their kernels as a string (tile-gpu-philox,
// tile-gpu-atomic, tile-gpu-fp8) compile one kernel of it for the device's
// arch (or another one the device runs: sm_80 PTX on an H100) and load it;
// an error names the step and the kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/JIT.h"

#include <cstdio>
#include <string>

namespace tilegpu {

/// The device and JIT of such a test, and whether every check so far
/// passed (fail prints the failure and records it).
struct SourceTest {
  const tile::Device &dev;
  tile::JIT &jit;
  bool ok = true;
  bool fail(const std::string &what) {
    std::printf("FAIL: %s\n", what.c_str());
    ok = false;
    return false;
  }
};

inline tile::Expected<tile::Kernel>
loadSourceKernel(tile::JIT &jit, const tile::Device &dev,
                 const std::string &source, const std::string &file,
                 const std::string &name, const tile::Schedule &schedule = {},
                 const tile::Defines &defines = {}, std::string arch = "") {
  if (arch.empty())
    arch = dev.archString();
  tile::Expected<tile::CompiledKernelRef> c =
      jit.compileSource(source, file, defines, name, arch, schedule);
  if (!c)
    return tile::Status::error("compile " + name + " for " + arch + ": " +
                               c.error());
  tile::Expected<tile::Kernel> k = jit.load(dev, **c);
  if (!k)
    return tile::Status::error("load " + name + ": " + k.error());
  return k;
}

} // namespace tilegpu
