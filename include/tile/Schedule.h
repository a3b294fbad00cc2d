//===- Schedule.h - how a kernel runs, apart from what it computes -*- C++ -*-===//
//
// A .tile kernel states its math; the schedule says how the hardware runs
// it: warps, pipeline depth, which memory paths (TMA loads, TMA stores) are
// tried, warpgroup roles (ping-pong, a producer warpgroup), persistence,
// programs per CTA, and the order in which programs take their grid ids.
// It reaches the passes as the kernel's `#tile.schedule` attribute
// (docs/schedule.md); no pass reads a kernel parameter by name.
//
// Plain C++ (no LLVM): the runtime, the JIT and hosts use it as they are.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace tile {

struct Schedule {
  // Threads.
  int64_t numWarps = 4;    ///< warps of one program (power of two, 1..32)
  int64_t minBlocks = 0;   ///< CTAs per SM to fit (.minnctapersm); 0: no hint
  // Memory pipeline.
  int64_t numStages = 3;   ///< depth of each TMA ring (sm_90a; 2..4)
  bool tma = true;         ///< loads of dot operands by TMA into rings (sm_90a)
  bool tmaA = false;       ///< also a dot's A operand that is loop-invariant
  bool tmaStore = true;    ///< stores of whole rows by TMA (sm_90a)
  /// A prefetched gather's index loads (page ids) one iteration further
  /// ahead, carried in registers, so the gather does not wait for them.
  bool indexAhead = false;
  /// Loop loads of mma.sync dots' B operands (dots that stay off wgmma:
  /// sm_80, or M < 64) by cp.async into a shared-memory ring of
  /// numStages stages instead of register prefetch.
  bool cpAsync = false;
  // Warpgroup roles.
  bool pingpong = true;    ///< two consumer warpgroups take turns (8 warps)
  bool producer = false;   ///< a producer warpgroup issues the TMA copies
  // Programs.
  bool persistent = false; ///< resident CTAs loop over the logical programs
  int64_t ctaPrograms = 1; ///< programs per CTA sharing the producer (1..8)
  /// Program order: the programs of the launch take grid ids in groups of
  /// about `l2Group` programs spanning whole rows of grid x (consecutive y,
  /// x outer), so the data of a group's y values stays in L2. 0: row order.
  int64_t l2Group = 0;
  bool reverseX = false;   ///< program_id(0) counts down in launch order

  /// "" when valid, else the first problem ("num_warps must be ...").
  std::string validate() const;
  /// Every field as `name=value` pairs, comma separated, in one fixed order
  /// (the JIT cache key and the manifest use it).
  std::string str() const;
  /// Sets one field from its name (`num_warps`, `tma_a`, ...) and text
  /// value (integers; booleans as true/false/1/0). "" on success, else why.
  std::string set(const std::string &name, const std::string &value);
  /// Applies `name=value,name=value` (as str() writes); "" or why.
  std::string parse(const std::string &pairs);

  bool operator==(const Schedule &o) const { return str() == o.str(); }
  bool operator!=(const Schedule &o) const { return !(*this == o); }
};

/// The field names, in str()'s order, comma separated (for help and errors).
const char *scheduleFieldNames();

} // namespace tile
