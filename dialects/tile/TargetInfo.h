//===- TargetInfo.h - hardware facts of the targets tilec compiles for -*- C++ -*-===//
//
// One place for the limits passes and checks size things against (CUDA
// Programming Guide, "Compute capabilities" table, and the H100 tuning
// guide). Transforms budget their rings with them, the lowering picks
// register budgets, and the compiler refuses a kernel that cannot fit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::tile {

struct TargetInfo {
  const char *arch;
  int64_t sharedPerSM;        ///< bytes of shared memory per SM
  int64_t sharedPerBlock;     ///< bytes one CTA may opt in to
  int64_t sharedReservedPerBlock; ///< bytes the system keeps per CTA
  int64_t registersPerSM;     ///< 32-bit registers per SM
  int64_t maxRegistersPerThread;
  int64_t maxThreadsPerBlock;
  bool hasTma;                ///< cp.async.bulk.tensor, mbarrier tx counts
  bool hasWgmma;              ///< warpgroup MMA (sm_90a)
};

/// The facts of `arch` ("sm_80", "sm_90a"); sm_80's for an unknown name.
inline const TargetInfo &targetInfo(llvm::StringRef arch) {
  static const TargetInfo sm80{"sm_80", 164 * 1024, 163 * 1024, 1024,
                               65536,   255,        1024,       false, false};
  static const TargetInfo sm90a{"sm_90a", 228 * 1024, 227 * 1024, 1024,
                                65536,    255,        1024,       true, true};
  return arch == "sm_90a" ? sm90a : sm80;
}

} // namespace mlir::tile
