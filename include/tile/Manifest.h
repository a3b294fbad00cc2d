//===- Manifest.h - the dossier that travels with a compiled kernel -*- C++ -*-===//
//
// Written by tilec next to the PTX (NAME.manifest.json) and checked by the
// runtime at launch. Plain C++ (no LLVM): the runtime links without LLVM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tile {

/// A kernel parameter: its name and type, spelled as in .tile source:
/// "ptr<bf16>", "ptr<f32>", "i32", "i64", "f32", "f16", "bf16", "bool".
struct KernelParam {
  std::string name;
  std::string type;
  bool operator==(const KernelParam &o) const {
    return name == o.name && type == o.type;
  }
};

struct Manifest {
  std::string kernelName;
  std::vector<KernelParam> params;
  std::map<std::string, std::string> constants; ///< compile-time values used
  int blockSize = 0;          ///< threads per program (x only)
  int sharedMemoryBytes = 0;  ///< dynamic shared memory per program
  std::string arch;           ///< sm_80 / sm_90a
  /// Global scratch memory per program, in bytes (0: none). When > 0 the
  /// kernel takes one hidden trailing u64 parameter, not listed in `params`:
  /// a 128-byte aligned device buffer of scratchBytesPerProgram bytes per
  /// program, program p = x + gx * (y + gy * z) owning bytes [p*N, (p+1)*N).
  /// Kernel::launch allocates and passes it; contents are not initialised.
  int scratchBytesPerProgram = 0;
  std::string tilecVersion;
  std::string llvmVersion;
  std::string cudaVersion;    ///< ptxas version when known, else "unknown"
  std::string sourceHash;     ///< hex FNV-1a 64 of the source text

  /// Pretty JSON, stable key order.
  std::string toJSON() const;
  /// Parses what toJSON wrote; on failure returns false and sets `error`.
  static bool fromJSON(const std::string &json, Manifest &out,
                       std::string &error);
  bool operator==(const Manifest &o) const;
};

/// 64-bit FNV-1a of `data`, as 16 hex digits.
std::string hashHex(const std::string &data);

} // namespace tile
