//===- SinkScale.cpp - a positive scale moves past max to the next multiply ===//
//
// Post-condition: no `y = x * splat(a)` (float, a provably positive) whose
// every use reaches, through ops that commute with a positive scale, a
// multiply by a scalar: those multiplies take `a` instead,
//
//   s = dot * a                          (a > 0)
//   m = reduce_max(where(mask, s, -inf)) * b
//   p = exp2(fma(where(mask, s, -inf), b, -m))
//     ->
//   m = reduce_max(where(mask, dot, -inf)) * (a*b)
//   p = exp2(fma(where(mask, dot, -inf), a*b, -m))
//
// one multiply per element fewer (a kernel that scales scores before a
// hook, flex_fwd.tile with no score mod, runs as flash_fwd.tile's form).
// Commuting ops: where and max/min whose other operand is in the same
// chain or a constant a positive scale leaves alone (±inf, 0),
// reduce max/min, expand_dims and broadcast. Rounding: x·a is monotone in x
// for a > 0, so the max is the same element; the result differs from the
// original by the rounding of one product (x·(a·b) rather than (x·a)·b).
// `a` is positive when it is a kernel argument with tile.positive (the
// launcher checks `require(a > 0.0)`), a positive constant, or a product
// of positive values. Pipeline stage 3, before tile-fold-scale.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "dialects/tile/Params.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESINKSCALE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Whether every element of `v` is one scalar: a splat of a scalar, or a
/// float constant tile.
bool isScalarTile(Value v) {
  if (v.getDefiningOp<SplatOp>())
    return true;
  auto f = v.getDefiningOp<FullOp>();
  return f && isa<FloatAttr>(f.getValue());
}

/// Whether the float constant tile `v` holds ±inf or ±0 (unchanged by a
/// positive scale).
bool scaleInvariant(Value v) {
  auto f = v.getDefiningOp<FullOp>();
  auto attr = f ? dyn_cast<FloatAttr>(f.getValue()) : FloatAttr();
  return attr && (attr.getValue().isInfinity() || attr.getValue().isZero());
}

/// Whether the scalar `s` is provably > 0 (and not NaN).
bool positive(Value s, int depth = 0) {
  if (depth > 8)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(s)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn && arg.getOwner() == &fn.getBody().front() &&
           fn.getArgAttr(arg.getArgNumber(), kPositiveAttr);
  }
  if (auto c = s.getDefiningOp<arith::ConstantOp>())
    if (auto f = dyn_cast<FloatAttr>(c.getValue()))
      return !f.getValue().isNaN() && !f.getValue().isNegative() &&
             !f.getValue().isZero();
  if (auto m = s.getDefiningOp<arith::MulFOp>())
    return positive(m.getLhs(), depth + 1) && positive(m.getRhs(), depth + 1);
  return false;
}

/// The scale of `y = x * splat(a)`: (x, a) when a is positive.
std::optional<std::pair<Value, Value>> positiveScale(MulOp y) {
  for (auto [x, s] : {std::pair(y.getLhs(), y.getRhs()),
                      std::pair(y.getRhs(), y.getLhs())})
    if (auto sp = s.getDefiningOp<SplatOp>(); sp && positive(sp.getSrc()))
      return std::pair(x, sp.getSrc());
  return std::nullopt;
}

struct Chain {
  llvm::SetVector<Operation *> ops; ///< commuting ops, in no set order
  SmallVector<Operation *> sinks;   ///< multiplies by a scalar
};

/// The uses of `root` as far as they commute with its scale; none when a
/// use neither commutes nor multiplies by a scalar.
std::optional<Chain> chainOf(MulOp root) {
  Chain c;
  DenseSet<Value> in = {root.getResult()};
  SmallVector<Value> work = {root.getResult()};
  auto inOrInvariant = [&](Value v) { return in.contains(v) || scaleInvariant(v); };
  while (!work.empty()) {
    Value t = work.pop_back_val();
    for (Operation *user : t.getUsers()) {
      if (c.ops.contains(user) || llvm::is_contained(c.sinks, user))
        continue;
      bool commutes = false;
      if (auto w = dyn_cast<WhereOp>(user))
        commutes = !in.contains(w.getCond()) && inOrInvariant(w.getLhs()) &&
                   inOrInvariant(w.getRhs());
      else if (isa<MaxOp, MinOp>(user))
        commutes = llvm::all_of(user->getOperands(), inOrInvariant);
      else if (auto r = dyn_cast<ReduceOp>(user))
        commutes = r.getKind() == ReduceKind::Max || r.getKind() == ReduceKind::Min;
      else
        commutes = isa<ExpandDimsOp, BroadcastOp>(user);
      if (commutes) {
        c.ops.insert(user);
        if (in.insert(user->getResult(0)).second)
          work.push_back(user->getResult(0));
        continue;
      }
      // A multiply by a scalar, of this chain's value (not twice).
      bool sink = false;
      if (auto m = dyn_cast<MulOp>(user))
        sink = m.getLhs() != m.getRhs() &&
               (isScalarTile(m.getLhs()) || isScalarTile(m.getRhs()));
      else if (auto f = dyn_cast<FmaOp>(user))
        sink = !in.contains(f.getC()) && f.getA() != f.getB() &&
               isScalarTile(in.contains(f.getA()) ? f.getB() : f.getA());
      if (!sink)
        return std::nullopt;
      c.sinks.push_back(user);
    }
  }
  if (c.sinks.empty())
    return std::nullopt;
  return c;
}

/// `a * s` as one scalar, right after the later of the two (outside any
/// loop both are defined outside of).
Value product(OpBuilder &b, Location loc, Value a, Value sTile, Operation *at) {
  OpBuilder::InsertionGuard g(b);
  Value s;
  if (auto splat = sTile.getDefiningOp<SplatOp>()) {
    s = splat.getSrc();
  } else { // a float constant tile: its scalar, next to `a`
    auto full = sTile.getDefiningOp<FullOp>();
    b.setInsertionPointAfterValue(a);
    s = arith::ConstantOp::create(b, full.getLoc(),
                                  cast<FloatAttr>(full.getValue()));
  }
  DominanceInfo dom(at->getParentOfType<func::FuncOp>());
  Value later = a;
  if (Operation *sDef = s.getDefiningOp(); sDef && dom.properlyDominates(a, sDef))
    later = s;
  b.setInsertionPointAfterValue(later);
  return arith::MulFOp::create(b, loc, a, s);
}

/// Rewrites one root; false when there is none to rewrite.
bool sinkOne(func::FuncOp fn) {
  MulOp root;
  std::pair<Value, Value> xa;
  std::optional<Chain> chain;
  fn.walk([&](MulOp m) {
    auto type = cast<TileType>(m.getType());
    if (!isa<FloatType>(type.getElementType()))
      return WalkResult::advance();
    auto s = positiveScale(m);
    if (!s)
      return WalkResult::advance();
    chain = chainOf(m);
    if (!chain)
      return WalkResult::advance();
    root = m;
    xa = *s;
    return WalkResult::interrupt();
  });
  if (!root)
    return false;
  auto [x, a] = xa;
  IRMapping map;
  map.map(root.getResult(), x);
  OpBuilder b(fn.getContext());
  // The chain again on x, in program order (operands before users).
  SmallVector<Operation *> order;
  fn.walk([&](Operation *op) {
    if (chain->ops.contains(op))
      order.push_back(op);
  });
  for (Operation *op : order) {
    b.setInsertionPoint(op);
    b.clone(*op, map);
  }
  // One product per scalar (constants by value).
  DenseMap<Value, Value> byScalar;
  DenseMap<Attribute, Value> byConstant;
  auto productOf = [&](Location loc, Value sTile, Operation *at) {
    auto full = sTile.getDefiningOp<FullOp>();
    Value &slot = full ? byConstant[full.getValue()]
                       : byScalar[sTile.getDefiningOp<SplatOp>().getSrc()];
    if (!slot)
      slot = product(b, loc, a, sTile, at);
    return slot;
  };
  for (Operation *sink : chain->sinks) {
    b.setInsertionPoint(sink);
    Location loc = sink->getLoc();
    Value t, s, c;
    if (auto m = dyn_cast<MulOp>(sink)) {
      bool lhs = map.contains(m.getLhs());
      t = lhs ? m.getLhs() : m.getRhs();
      s = lhs ? m.getRhs() : m.getLhs();
    } else {
      auto f = cast<FmaOp>(sink);
      bool first = map.contains(f.getA());
      t = first ? f.getA() : f.getB();
      s = first ? f.getB() : f.getA();
      c = f.getC();
    }
    Value as = productOf(loc, s, sink);
    auto type = cast<TileType>(sink->getResult(0).getType());
    Value scale = SplatOp::create(b, loc, type, as);
    Value r = c ? Value(FmaOp::create(b, loc, map.lookup(t), scale, c))
                : Value(MulOp::create(b, loc, map.lookup(t), scale));
    sink->getResult(0).replaceAllUsesWith(r);
    sink->erase();
  }
  for (Operation *op : llvm::reverse(order))
    op->erase();
  root.erase();
  return true;
}

struct SinkScalePass : public mlir::tile::impl::TileSinkScaleBase<SinkScalePass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      for (int i = 0; i < 64 && sinkOne(fn); ++i) {
      }
    });
  }
};
} // namespace
