//===- Passes.h - tile transform passes ---------------------------*- C++ -*-===//
#pragma once

#include "dialects/tile/TileDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tile {
#define GEN_PASS_DECL
#include "lib/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Transforms/Passes.h.inc"

/// tile-assign-layouts' first step (Fp8Dots.cpp): every fp8 dot that will
/// not be sm_90a wgmma k32 gets f16 operands (exact); -remarks says why. An
/// error where such a dot reads a TMA slot.
LogicalResult widenFp8Dots(func::FuncOp fn, int64_t warps);

/// The warp count of a kernel (its schedule's num_warps, default 4).
int64_t getNumWarps(Operation *kernelOrModule);

/// Unit attribute on the module (tilec -remarks): tile-tma-loads emits a
/// remark at each dot operand load in a loop it leaves a load, saying why.
constexpr llvm::StringLiteral kRemarksAttr = "tile.remarks";

/// Set by tile-split-masked-loops on the loop of the masked last iterations
/// (tail) or, in a loop counting down, first ones (head): a block or two,
/// which passes that pay a prologue and an epilogue for a faster steady
/// state skip (tile-overlap-dots).
constexpr llvm::StringLiteral kMaskedTailAttr = "tile.masked_tail";
constexpr llvm::StringLiteral kMaskedHeadAttr = "tile.masked_head";

/// Whether `v` is one of the logical grid's sizes (x, y, z) that
/// tile-persistent appends to a persistent kernel's parameters. Inside its
/// loop over programs each is >= 1 (a grid with a size 0 runs no program).
bool isLogicalGridSize(Value v);

/// The slot a TMA copy writes, for a tile.tma_copy or the scf.if that
/// tile-tma-loads puts around one (no results, no else: a persistent
/// kernel's ring copies where its condition holds); none for other ops.
std::optional<int64_t> tmaCopySlot(Operation *op);

/// True when tile value `v` can be recomputed in another layout at little
/// cost (tile-remove-layout-conversions then does so): its producers, up to
/// `depth` levels, are constants, iota, splat, elementwise (non-memory) ops,
/// expand_dims or broadcast, looking through tile.convert_layout. Scalars
/// are always.
bool isCheapToRecompute(Value v, int depth);

/// True when the pass option `option` (else the module's `tile.arch`) names
/// sm_90a, the target of the TMA and asynchronous-wgmma passes.
bool targetsSm90a(ModuleOp module, StringRef option);

/// Off sm_90a (targetsSm90a false): a warning at each kernel whose schedule
/// turns on the opt-in `field` (`on` reads it), "schedule <field> = true
/// has no effect on <target>: <why>".
void warnOptInNeedsSm90a(ModuleOp module, StringRef option, StringRef field,
                         function_ref<bool(ScheduleAttr)> on,
                         StringRef why);

/// Stores per thread from which tile-assign-layouts makes a 2-D store wide
/// (16 bytes per thread); tile-tma-loads leaves such stores alone.
inline constexpr int64_t kWideStoreMinAccesses = 32;
} // namespace mlir::tile
