//===- CtaMembers.h - values across the programs of a CTA -----*- C++ -*-===//
//
// With cta_programs = G > 1, tile-persistent gives each of a CTA's G
// programs its own program_id(0) through tile.cta_member (0 .. G - 1). The
// passes that make the G programs share one producer's TMA copies need the
// loop bounds and split points all of them agree on: these helpers tell
// whether a scalar depends on the member and build its extreme over the G
// programs (CtaMembers.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Transforms/Passes.h"

namespace mlir::tile::members {

/// True when `v` may differ between the programs of a CTA: computed from
/// tile.cta_member, or from a block argument that may (a value a loop
/// carries, an induction variable whose start does; not the kernel's
/// arguments or the loop over programs').
bool dependsOnMember(Value v);

/// `x` where it does not depend on tile.cta_member, else the smallest (or
/// `largest`) of its values over the CTA's `members` programs (its
/// arithmetic cloned at `pre` for each member index); null when that cannot
/// be built (an op of the arithmetic has regions or memory effects, or it
/// depends on the member through a block argument).
Value extremeOverMembers(Value x, OpBuilder &pre, int64_t members,
                         bool largest);

} // namespace mlir::tile::members
