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
#include "tile/Schedule.h"

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
/// Dictionary attribute with the compile-time parameters a kernel was built
/// with (recorded for the manifest; no pass reads it).
inline constexpr llvm::StringLiteral kParamsAttr = "tile.params";
/// The kernel's #tile.schedule (how it runs); absent: the defaults.
inline constexpr llvm::StringLiteral kScheduleAttr = "tile.schedule";
/// Unit attribute on a kernel made persistent (three more i32 parameters:
/// the logical grid) and on its loop over the logical programs
/// (tile-persistent).
inline constexpr llvm::StringLiteral kPersistentAttr = "tile.persistent";
/// Discardable `#llvm.loop_annotation` of a loop (tile-persistent: no LICM)
/// on its way to the latch branch's `!llvm.loop` (tile-loop-annotations).
inline constexpr llvm::StringLiteral kLoopAnnotationAttr = "llvm.loop_annotation";

/// String attribute on the module: target GPU (sm_80, sm_90a).
inline constexpr llvm::StringLiteral kArchAttr = "tile.arch";

/// The element type of a tile, or the type itself for scalars.
Type getElementTypeOrSelf(Type t);

/// fp8 element types (f8E4M3FN, f8E5M2): their .tile names are "f8e4m3"
/// and "f8e5m2" (empty for other types).
bool isFp8(Type t);
llvm::StringRef fp8Name(Type t);

/// The schedule of the kernel that holds `op` (its `tile.schedule`), or the
/// default schedule where there is none. Passes read their knobs here.
ScheduleAttr getSchedule(Operation *op);
/// The attribute of a schedule, and back.
ScheduleAttr toAttr(MLIRContext *ctx, const ::tile::Schedule &s);
::tile::Schedule fromAttr(ScheduleAttr a);
} // namespace mlir::tile
