//===- TileDialect.h - the tile dialect ---------------------------*- C++ -*-===//
//
// Types, the layout attribute and the ops of the `tile` dialect.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/tile/TileDialect.h.inc"
#include "dialects/tile/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tile/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/tile/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/tile/TileOps.h.inc"

namespace mlir::tile {
/// Name of the unit attribute that marks a func.func as a tile kernel.
inline constexpr llvm::StringLiteral kKernelAttr = "tile.kernel";
/// Dictionary attribute with the compile-time parameters a kernel was built with.
inline constexpr llvm::StringLiteral kParamsAttr = "tile.params";
/// Unit attribute on a kernel made persistent (three more i32 parameters:
/// the logical grid) and on its loop over the logical programs
/// (tile-persistent).
inline constexpr llvm::StringLiteral kPersistentAttr = "tile.persistent";
/// Discardable `#llvm.loop_annotation` of a loop (tile-persistent: no LICM)
/// on its way to the latch branch's `!llvm.loop` (tile-loop-annotations).
inline constexpr llvm::StringLiteral kLoopAnnotationAttr = "llvm.loop_annotation";
/// Integer attribute on the module: warps per program.
inline constexpr llvm::StringLiteral kNumWarpsAttr = "tile.num_warps";

/// String attribute on the module: target GPU (sm_80, sm_90a).
inline constexpr llvm::StringLiteral kArchAttr = "tile.arch";

/// The element type of a tile, or the type itself for scalars.
Type getElementTypeOrSelf(Type t);

/// The compile-time parameter `name` of kernel `fn` (its `tile.params`) as
/// an integer (booleans as 0 or 1), or `dflt` where the kernel has none.
/// Passes read their knobs through it (TMA, TMA_STAGES, PINGPONG,
/// MIN_BLOCKS).
int64_t getKernelParam(Operation *fn, StringRef name, int64_t dflt);
} // namespace mlir::tile
