//===- WgmmaOperands.h - wgmma operands in swizzled shared memory -*- C++ -*-===//
//
// The 128-byte swizzled shared-memory layout wgmma's matrix descriptors
// name (WgmmaOperands.cpp): how B is stored there and how a descriptor
// points into it (or into a TMA slot, which the copies fill in the same
// layout).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Conversion/TileToGPU/ThreadLayout.h"

namespace mlir::tile::lowering {

inline constexpr int64_t kSwizzleBytes = 128; // one swizzle row
inline constexpr int64_t kAtomBytes = 1024;   // 8 swizzle rows; slab alignment

/// wgmma matrix descriptor of the swizzled operand at shared address `base`
/// (i32) + `off` bytes (a multiple of 16), leading byte offset `lbo`.
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value base, int64_t off,
                      int64_t lbo);

/// Stores `bv` (layout `lb`, element `elt`) to a new shared buffer in the
/// swizzled slabs: `kMajor` when dimension 0 (K) is contiguous, `outerSize`
/// the extent of the other dimension. Returns the buffer's 1024-byte
/// aligned address once every thread's stores are visible to wgmma.
Value storeSwizzled(ConversionPatternRewriter &rw, Location loc, KernelInfo &ki,
                    Type elt, LayoutAttr lb, Value bv, bool kMajor,
                    int64_t outerSize, int64_t numElems);

} // namespace mlir::tile::lowering
