//===- SourceKernel.h - a kernel of a test's own .tile source -*- C++ -*-===//
//
// GPU tests that carry their kernels as a string (tile-gpu-philox,
// tile-gpu-atomic) compile one kernel of it for the device's arch and load
// it; an error names the step and the kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/JIT.h"

#include <string>

namespace tilegpu {

inline tile::Expected<tile::Kernel>
loadSourceKernel(tile::JIT &jit, const tile::Device &dev,
                 const std::string &source, const std::string &file,
                 const std::string &name, const tile::Schedule &schedule = {}) {
  tile::Expected<tile::CompiledKernelRef> c =
      jit.compileSource(source, file, {}, name, dev.archString(), schedule);
  if (!c)
    return tile::Status::error("compile " + name + ": " + c.error());
  tile::Expected<tile::Kernel> k = jit.load(dev, **c);
  if (!k)
    return tile::Status::error("load " + name + ": " + k.error());
  return k;
}

} // namespace tilegpu
