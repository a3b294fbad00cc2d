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
  /// Pointers: the byte alignment the code was compiled for (the compiler
  /// assumes it, e.g. for 16-byte vector loads); the launcher refuses a
  /// pointer that is not a multiple of it. 0: none recorded.
  int align = 0;
  bool operator==(const KernelParam &o) const {
    return name == o.name && type == o.type && align == o.align;
  }
};

/// A TMA tensor map the launcher encodes at each launch and passes by value
/// (a 128-byte CUtensorMap, 64-byte aligned) after the user's arguments, in
/// Manifest::tensorMaps order. 2-D, row-major: rows of `rowElems` elements,
/// `rowStride` elements apart, starting at the pointer argument `arg`.
/// With `strideArgs` the row stride is `rowStride` times the product of
/// those integer arguments (a layout such as [B, S, H, D], rows H*D apart);
/// `rowElems` 0 means rows as long as the stride (boxes that start at a
/// column inside the row: a head of [B, S, H, D]). The
/// number of rows is not in the manifest: the launcher maps every whole row
/// the allocation holds from the pointer on (TMA zero-fills rows past them,
/// so the kernel never reads outside the allocation).
struct TensorMapParam {
  int arg = 0;       ///< index in `params` of the pointer it maps
  int elemBytes = 2; ///< element size in bytes (2: f16/bf16)
  int rowElems = 0;  ///< elements of a row (global dim 0)
  int rowStride = 0; ///< elements between consecutive rows
  int boxElems = 0;  ///< box size along a row
  int boxRows = 0;   ///< box size across rows
  /// Integer arguments (indices in `params`) the row stride is a multiple
  /// of; empty: `rowStride` is the stride.
  std::vector<int> strideArgs;
  bool operator==(const TensorMapParam &o) const;
};

/// A precondition the kernel states with `require(c)`: `expr` is `c` over
/// the scalar arguments, in the prefix form of lib/Runtime/Requires.cpp;
/// the launcher refuses a launch whose arguments make it false. `text` is
/// `c` as source ("heads % heads_kv == 0"), `loc` its file:line:col.
struct Requirement {
  std::string expr, text, loc;
  bool operator==(const Requirement &o) const {
    return expr == o.expr && text == o.text && loc == o.loc;
  }
};

/// Checks that `expr` is a well-formed requirement over `params` (argument
/// indices in range, integer arguments); else returns false and sets
/// `error`.
bool validRequirement(const std::string &expr,
                      const std::vector<KernelParam> &params,
                      std::string &error);

struct Manifest {
  std::string kernelName;
  std::vector<KernelParam> params;
  std::map<std::string, std::string> constants; ///< compile-time values used
  int blockSize = 0;          ///< threads per program (x only)
  int sharedMemoryBytes = 0;  ///< dynamic shared memory per program
  std::string arch;           ///< sm_80 / sm_90a
  using TensorMapParam = tile::TensorMapParam;
  /// Encoded by the launcher, passed after `params` in this order; empty for
  /// a kernel without TMA loads (and for manifests older than the key).
  std::vector<TensorMapParam> tensorMaps;
  /// persistent kernels (key written only when true): the kernel takes the
  /// logical grid as three more u32 parameters (x, y, z) after `params` and
  /// before the tensor maps, and the launcher starts only as many programs
  /// (along x) as are resident at once; each loops over the logical grid.
  bool persistent = false;
  /// Launch parameters for grids over 65535 along y or z, passed after the
  /// persistent grid (if any) and before the tensor maps, in this order:
  /// "offset_y"/"offset_z" (i32: where this launch starts along the axis;
  /// the kernel's program_id adds it) and "size_y"/"size_z" (i32: the whole
  /// grid's size, the kernel's num_programs). gridArgsKnown: the manifest
  /// has the key (tilec since it was added): an axis not listed is not read
  /// by the kernel, so the launcher may split any grid into launches of at
  /// most 65535 along y and z. Without it (older manifests) grids over
  /// 65535 there are refused.
  std::vector<std::string> gridArgs;
  bool gridArgsKnown = false;
  /// The kernel's require(...) conditions on its scalar arguments (key
  /// "requires", written when there are some).
  std::vector<Requirement> requirements;
  /// The schedule the kernel was compiled with (tile::Schedule::str()).
  std::string schedule;
  std::string tilecVersion;
  std::string llvmVersion;
  std::string cudaVersion;    ///< version of the ptxas that made the cubin, else "unknown"
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
