//===- LoopSlice.h - a loop load's address computation, at another iv -*- C++ -*-===//
//
// Shared by tile-pipeline-loads (register prefetch) and tile-async-copies
// (cp.async rings): both issue a loop body's load for a later iteration,
// which means recomputing its pointer and mask with the induction variable
// set ahead. The slice is the body's ops that compute them; it may hold
// loads (a gather's indices: page ids from a block table), which are
// cloned masked to the loop's range like the load itself, so no address
// outside the loop's range is read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tile {

/// The ops of `loop`'s body that compute the operands of `op`, in program
/// order; failure when they depend on a loop-carried value or on an op with
/// side effects (other than a tile.load) or regions.
FailureOr<SmallVector<Operation *>> addressSlice(scf::ForOp loop, Operation *op);

/// Clones `slice` with the induction variable `oldIv` set to `iv` into `b`
/// (recorded in `map`); a load in the slice is masked with `iv < ub`.
/// Returns that i1 (created at most once, here or on the first use).
Value cloneSliceAt(OpBuilder &b, scf::ForOp loop, ArrayRef<Operation *> slice,
                   Value oldIv, Value iv, IRMapping &map);

/// `load` with the operands `map` gives, masked with the scalar `inRange`.
Value maskedLoad(OpBuilder &b, LoadOp load, IRMapping &map, Value inRange);

/// A tile of `shape` i1 equal to the scalar `cond`, and-ed with `mask`
/// when given.
Value andSplat(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value cond,
               Value mask);

} // namespace mlir::tile
