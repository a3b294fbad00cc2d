//===- ConfigTable.h - per-shape configurations of a kernel -------*- C++ -*-===//
//
// A kernel's tuned configurations as data: one JSON file per kernel and
// arch (examples/attention/configs/flash_fwd.sm_90a.json), read by the JIT
// hosts, the benchmark (which writes it with --tune) and the GPU tests.
//
//   {"kernel": "flash_fwd", "arch": "sm_90a",
//    "keys": ["T", "D", "CAUSAL"], "size": "seqlen",
//    "default": {"defines": {"BM": 64, "BN": 64}, "schedule": {}},
//    "entries": [{"match": {"T": "bf16", "D": 64, "CAUSAL": false},
//                 "seqlen": 2048,
//                 "defines": {"BM": 128, "BN": 128},
//                 "schedule": {"num_warps": 8, "producer": true}}]}
//
// lookup() takes the entries whose "match" equals the launch's keys and,
// among them, the one with the largest size at or below the launch's (else
// the smallest); without a match, "default". A "schedule" lists only the
// fields that differ from tile::Schedule's defaults.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Schedule.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tile {

/// Compile-time parameters and schedule of one launch configuration.
struct KernelConfig {
  std::map<std::string, std::string> defines;
  Schedule schedule;
  /// Where it came from: "default" or "entry N (T=bf16 D=64 ... seqlen=2048)".
  std::string origin;
};

class ConfigTable {
public:
  /// Parses a table; false with `error` ("FILE: line L, column C: ..." or
  /// "FILE: entries[3].schedule: unknown schedule field 'x'") on failure.
  static bool parse(const std::string &text, const std::string &name,
                    ConfigTable &out, std::string &error);
  static bool load(const std::string &path, ConfigTable &out,
                   std::string &error);
  /// The entry for a launch from the table at `path` where that file
  /// exists; where it does not, the kernel's own defines and the default
  /// schedule (origin "no table"). False with `error` when it exists and
  /// does not parse.
  static bool lookupIfPresent(const std::string &path,
                              const std::map<std::string, std::string> &keys,
                              int64_t size, KernelConfig &out,
                              std::string &error);

  /// The configuration for a launch: `keys` holds the value of every name
  /// in keys() (as text: "bf16", "64", "true"), `size` the launch's size.
  KernelConfig lookup(const std::map<std::string, std::string> &keys,
                      int64_t size) const;

  const std::string &kernel() const { return kernel_; }
  const std::string &arch() const { return arch_; }
  const std::vector<std::string> &keys() const { return keys_; }
  /// Every distinct configuration of the table, default first (for tests
  /// that run each one).
  std::vector<KernelConfig> distinct() const;

  struct Entry {
    std::map<std::string, std::string> match;
    int64_t size = 0;
    KernelConfig config;
  };
  const std::vector<Entry> &entries() const { return entries_; }

private:
  std::string kernel_, arch_, sizeName_;
  std::vector<std::string> keys_;
  KernelConfig default_;
  std::vector<Entry> entries_;
};

/// Applies a JSON object of schedule fields ({"num_warps": 8, ...}) to `s`;
/// false with `error` on an unknown field or a bad value.
bool parseScheduleJSON(const std::string &text, Schedule &s,
                       std::string &error);

} // namespace tile
