//===- StageClock.h - wall time of compile stages (--time-stages) -*- C++ -*-===//
#pragma once

#include "tile/Compiler.h"

#include <chrono>
#include <vector>

namespace tile {

/// Appends the wall time since the previous mark to `out` (when set).
class StageClock {
public:
  explicit StageClock(std::vector<StageTime> *out) : out(out) {}
  void mark(const char *stage) {
    if (!out)
      return;
    auto now = std::chrono::steady_clock::now();
    out->push_back(
        {stage, std::chrono::duration<double, std::milli>(now - last).count()});
    last = now;
  }

private:
  std::vector<StageTime> *out;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

} // namespace tile
