//===- Tma.h - pieces shared by the TMA lowerings -------------*- C++ -*-===//
//
// Shared by the lowering of tile.tma_copy / tile.tma_wait / tile.tma_release
// (TmaToGPU.cpp), of tile.tma_store (TmaStoreToGPU.cpp) and the layout of
// the slots in shared memory (TmaSlots.cpp): boxes move in slabs of one
// 128-byte swizzle row (64 16-bit or 128 8-bit elements), and one thread
// issues each copy through predicated inline PTX.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Conversion/TileToGPU/ThreadLayout.h"

namespace mlir::tile::lowering {

inline constexpr int64_t kSlabElems = 64; // 128-byte swizzle rows of 16-bit elements
/// Elements of one slab (a 128-byte swizzle row) of `elt`.
inline int64_t slabElemsOf(Type elt) { return 128 / byteSize(elt); }

/// Predicated inline PTX: `body` runs where the i32 `cond` is non-zero;
/// `cond` is operand $0.
void ptxIf(OpBuilder &b, Location loc, Value cond, ValueRange operands,
           StringRef body, StringRef constraints);

/// The shared-memory slot `slot` of a TMA op's kernel, or an error at `op`
/// (`what` names it) off sm_90a or where the kernel has no such slot.
FailureOr<TmaSlot *> slotOf(Operation *op, StringRef what, int64_t slot,
                            const LoweringState &state, KernelInfo &ki);

/// The x coordinate of slab `s` (64 columns) of a box: a constant, or with
/// a first column `col` (a box inside a longer row) an operand appended to
/// `ops` and named by its number in ptxIf's asm (its $0 is the predicate,
/// so ops[i] is $(i + 1)).
std::string slabColumn(OpBuilder &b, Location loc, Value col, int64_t s,
                       SmallVectorImpl<Value> &ops,
                       int64_t slabElems = kSlabElems);

/// After a copy into `buffer` (a stage: 128-byte swizzled rows in slabs)
/// of a box `tile` (contiguous along `innerDim`) the tile keeps its first
/// `valid` rows; where fewer, the warps zero the others in shared memory,
/// make that visible to the async proxy and meet at a barrier
/// (TmaZero.cpp). `valid` is the same in every thread.
void zeroRowsFrom(OpBuilder &b, Location loc, KernelInfo &ki, Value buffer,
                  Value valid, TileType tile, int64_t innerDim);
/// The same for the first `valid` columns (elements along a row) of every
/// row.
void zeroColumnsFrom(OpBuilder &b, Location loc, KernelInfo &ki, Value buffer,
                     Value valid, TileType tile, int64_t innerDim);

/// Warp groups that store their rows on their own: warpgroups (4 warps)
/// whose rows of `l` (`rows` in all) are one block each, rows / groups
/// apart (the wgmma accumulator layout of 8 or more warps); else 1 (every
/// warp of the program together).
int64_t storeGroups(LayoutAttr l, int64_t rows, int64_t warps);

/// The tile.tma_store lowering (TmaStoreToGPU.cpp).
void populateTmaStorePatterns(TypeConverter &tc, RewritePatternSet &p,
                              LoweringState &s);

} // namespace mlir::tile::lowering
