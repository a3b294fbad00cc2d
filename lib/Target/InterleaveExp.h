//===- InterleaveExp.h - softmax chains interleaved in the PTX ----*- C++ -*-===//
#pragma once

#include <string>

namespace tile::target {

/// Reorders the straight-line softmax chains of `ptx` (fma, ex2, add, 16-bit
/// packs) so that they interleave per element, where the kernel does fewer
/// than 192 multiply-adds per thread per `ex2` (InterleaveExp.cpp). Returns
/// whether it applied.
bool interleaveExpChains(std::string &ptx);

} // namespace tile::target
