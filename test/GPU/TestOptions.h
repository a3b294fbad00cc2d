//===- TestOptions.h - the command line the stand-alone GPU tests share -*- C++ -*-===//
//
//   TEST [--seed N] [--only NAME] [--quick] [--tile PATH] [--schedule F=V,...]
//
// --seed reruns a failure's inputs (the seed is printed at the start),
// --only keeps the cases whose name contains NAME, --quick runs the small
// shapes (compute-sanitizer steps of run-gpu.sh), --tile names the kernel
// source of tests that compile one, --schedule sets schedule fields over
// the config tables' (tests that take it: a schedule the tables do not
// use yet, e.g. tile-gpu-bwd --schedule producer=true).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace tilegpu {

struct TestOptions {
  std::string tilePath; ///< --tile (only where `withTile`)
  std::string only;     ///< --only: a part of a case name
  std::string schedule; ///< --schedule (only where `withSchedule`)
  unsigned long long seed = 0;
  bool quick = false;
};

/// Parses the options into `o` (tilePath holds the default); prints a
/// usage line with `example` (a case name) and returns false on anything
/// else. Without --seed, a fresh seed.
inline bool parseTestOptions(int argc, char **argv, TestOptions &o,
                             bool withTile, const char *example,
                             bool withSchedule = false) {
  bool seeded = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
      seeded = true;
    } else if (withTile && a == "--tile" && i + 1 < argc) {
      o.tilePath = argv[++i];
    } else if (withSchedule && a == "--schedule" && i + 1 < argc) {
      o.schedule = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      o.only = argv[++i];
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seed N]%s [--only NAME] [--quick]%s\n"
                   "NAME: part of a case name, e.g. %s\n",
                   argv[0], withTile ? " [--tile PATH]" : "",
                   withSchedule ? " [--schedule FIELD=VALUE,...]" : "", example);
      return false;
    }
  }
  if (!seeded)
    o.seed = std::random_device()() ^
             std::uint64_t(
                 std::chrono::steady_clock::now().time_since_epoch().count());
  return true;
}

} // namespace tilegpu
