//===- WarpSpecialize.h - pieces of tile-warp-specialize -----*- C++ -*-===//
//
// Shared by tile-warp-specialize (WarpSpecialize.cpp), the slice of the
// kernel's body its producer region re-creates (ProducerSlice.cpp) and the
// tile.tma_release ops it places in the consumer region
// (StageReleases.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::tile::wspec {

/// What the producer region re-creates from the body: `keep` holds the
/// copies, the scalar ops it clones and the loops and ifs it rebuilds;
/// `needed` the values (results, iter_args) it must compute.
class Slice {
public:
  explicit Slice(Operation *fn) : fn(fn) {}

  /// Adds `copy` and everything it needs; the op the producer could not
  /// run, if any.
  Operation *add(TmaCopyOp copy);

  bool kept(Operation *op) const { return keep.contains(op); }
  bool isNeeded(Value v) const { return needed.contains(v); }

private:
  void need(Value v);

  /// Loops and ifs around `op` run in the producer too.
  void keepAncestors(Operation *op);
  void visit(Value v);

  Operation *fn;
  DenseSet<Operation *> keep;
  DenseSet<Value> needed;
  SmallVector<Value> work;
  Operation *bad = nullptr;
};

/// Re-creates the kept ops of `src` at `b` (see Slice).
void emit(const Slice &s, Block &src, OpBuilder &b, IRMapping &map);

/// Each wait of a ring stage (slots of more than one stage, `stages` by
/// slot) in `consumer` gets a tile.tma_release of the stage where the dot
/// that reads it is complete.
LogicalResult placeReleases(Block *consumer,
                            const DenseMap<int64_t, int64_t> &stages);

} // namespace mlir::tile::wspec
