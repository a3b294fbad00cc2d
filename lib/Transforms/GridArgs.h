//===- GridArgs.h - the launch parameters of grids over 65535 ---*- C++ -*-===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace mlir::tile {
/// Array of strings on a kernel (tile-grid-offsets, kept on its gpu.func):
/// the launch parameters it takes for grids over 65535 along y or z, in
/// order, among "offset_y", "size_y", "offset_z", "size_z" (empty: it reads
/// neither axis). The manifest's "gridArgs".
inline constexpr llvm::StringLiteral kGridArgsAttr = "tile.grid_args";
} // namespace mlir::tile
