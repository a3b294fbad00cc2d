//===- TileLayout.h - building and querying #tile.layout ---------*- C++ -*-===//
//
// A layout maps (reg, lane, warp) bit indices to tile coordinates linearly
// over GF(2) (see LayoutAttr). Shapes are powers of two. The layouts used by
// the compiler are built here:
//   * accumulator: the mma.sync m16n8 C fragment, warps stacked along dim 0,
//     repeated over the rest of the tile (the default for every 2-D tile);
//     for K % 16 == 0 it is also the mma.sync A-operand (m16k16) layout;
//   * blocked (16 bytes per thread along a contiguous dimension) for loads;
//   * slices (a dimension removed) and expansions (a size-1 dimension added).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/tile/TileDialect.h"

namespace mlir::tile {

using Basis = SmallVector<int64_t, 2>;

/// Builds a layout from explicit bases.
LayoutAttr makeLayout(MLIRContext *ctx, unsigned rank, ArrayRef<Basis> regs,
                      ArrayRef<Basis> lanes, ArrayRef<Basis> warps);

/// True when every dimension is a power of two.
bool isPowerOfTwoShape(ArrayRef<int64_t> shape);

/// mma.sync accumulator layout (1-D: the rows of a [M, 1] accumulator); for
/// an M x K tile with K % 16 == 0 also the A-operand layout.
LayoutAttr getAccumulatorLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                int64_t numWarps);
/// Coalesced layout for global memory: each thread holds `vec` consecutive
/// elements along `dim`, consecutive lanes hold consecutive vectors along
/// `dim`, warps split the other dimension.
LayoutAttr getBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                            int64_t numWarps, unsigned dim, int64_t vec);
/// How many leading register bases of `l` are 1, 2, 4, … along `dim`.
int64_t leadingRegsAlong(LayoutAttr l, unsigned dim);
/// The accumulator layout for tiles of fewer than 16 rows per warp: warps
/// take 16-row slices while there are rows, then split the columns in
/// blocks of a multiple of 8 (each warp computes its own columns of an
/// mma.sync product, reading the whole A operand).
/// The A operand of an 8-bit (fp8) tensor-core product, M x K with
/// K % 32 == 0: the m16k32 fragment (a0..a3: row g, columns 4t..4t+3;
/// a4..a7: row g + 8; a8..a15: columns + 16), warps on 16-row blocks as in
/// getAccumulatorLayout. wgmma k32 and mma.sync m16n8k32 read it.
LayoutAttr getFp8DotALayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                            int64_t numWarps);

LayoutAttr getSplitColumnsLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                 int64_t numWarps);
/// The default layout of a tile of this shape: the accumulator layout, or
/// getSplitColumnsLayout where rows are too few for the warps.
LayoutAttr getDefaultLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                            int64_t numWarps);

/// Removes dimension `dim` (reg bases that become zero are dropped; lane and
/// warp bases that become zero mean replication).
LayoutAttr sliceLayout(LayoutAttr l, unsigned dim);
/// Inserts a dimension of size 1 at `axis`.
LayoutAttr expandLayout(LayoutAttr l, unsigned axis);
/// Swaps the two dimensions of a 2-D layout.
LayoutAttr transposeLayout(LayoutAttr l);
/// The layout a broadcast operand must have so that broadcasting to `dst`
/// (from `srcShape`) is a pure register copy.
LayoutAttr broadcastSourceLayout(LayoutAttr dst, ArrayRef<int64_t> srcShape);

/// Tile coordinates contributed by the register index `reg`.
SmallVector<int64_t> regCoords(LayoutAttr l, int64_t reg);
/// Basis `i` of a kind ("regs", "lanes", "warps") as a vector.
Basis basisAt(ArrayRef<int64_t> flat, unsigned rank, unsigned i);

/// True when the two layouts put every element on the same lanes and warps,
/// so converting between them only moves registers.
bool sameThreadMapping(LayoutAttr a, LayoutAttr b);

/// For a register-only conversion from `src` to `dst` (lanes/warps equal),
/// the source register each destination register reads; nullopt when some
/// destination element is not held by the same thread in `src`.
std::optional<SmallVector<int64_t>> registerPermutation(LayoutAttr src,
                                                        LayoutAttr dst);
/// `l` changed only inside warps so that each thread's first registers hold
/// `vec` consecutive elements along `dim`: lane bases among 1, 2, ..., vec/2
/// along `dim` trade places with register bases (the smallest further along
/// `dim` first), then those registers come first. Null when `l` lacks one
/// of them or a lane holding one is replicated.
LayoutAttr vectorizeAlong(LayoutAttr l, unsigned dim, int64_t vec);
/// The (register bit, lane bit) exchanges, in order, that give `src` the
/// lanes of `dst`, each lane basis of `dst` being a register basis of the
/// layout so far; nullopt when the two differ otherwise (ranks, warps, bit
/// counts, a replicated lane). `after` is `src` once exchanged: a register
/// permutation away from `dst`.
std::optional<SmallVector<std::pair<unsigned, unsigned>>>
laneSwaps(LayoutAttr src, LayoutAttr dst, LayoutAttr &after);
} // namespace mlir::tile
