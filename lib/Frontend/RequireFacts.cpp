//===- RequireFacts.cpp - argument facts from a checked require(...) ------===//
//
// A run-time require(c) is checked at every launch (MLIRGenRequire.cpp), so
// the compiler may assume its conjuncts: each fact becomes an argument
// attribute the passes read (dialects/tile/Params.h).
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/RequireFacts.h"

#include "dialects/tile/Params.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/bit.h"

#include <optional>

using namespace mlir;

namespace {
/// The kernel argument `v` is, through sign extensions (and zero extensions
/// with `zext`: divisibility survives both), or null.
BlockArgument argumentOf(func::FuncOp fn, Value v, bool zext = false) {
  while (isa_and_nonnull<arith::ExtSIOp>(v.getDefiningOp()) ||
         (zext && isa_and_nonnull<arith::ExtUIOp>(v.getDefiningOp())))
    v = v.getDefiningOp()->getOperand(0);
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == &fn.getBody().front() ? arg : BlockArgument();
}

/// A conjunct `c` of the form `x % C == 0` with x
/// an integer argument (possibly widened) and C > 0: x's divisibility, as
/// the argument attribute kDivisibilityAttr (the largest power of two
/// dividing C; the largest of several). The launcher checks the condition,
/// so the compiler may assume it (AxisInfo: vector loads along x).
void recordDivisibility(func::FuncOp fn, Value c) {
  auto cmp = c.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return;
  auto constant = [](Value v) -> std::optional<int64_t> {
    if (auto k = v.getDefiningOp<arith::ConstantOp>())
      if (auto i = dyn_cast<IntegerAttr>(k.getValue()))
        return i.getValue().getSExtValue();
    return std::nullopt;
  };
  Value rem = cmp.getRhs();
  if (constant(rem) == std::optional<int64_t>(0))
    rem = cmp.getLhs();
  else if (constant(cmp.getLhs()) != std::optional<int64_t>(0))
    return;
  Operation *r = rem.getDefiningOp();
  if (!isa_and_nonnull<arith::RemSIOp, arith::RemUIOp>(r))
    return;
  std::optional<int64_t> divisor = constant(r->getOperand(1));
  if (!divisor || *divisor <= 0)
    return;
  BlockArgument arg = argumentOf(fn, r->getOperand(0), /*zext=*/true);
  if (!arg)
    return;
  int64_t pow2 = int64_t(1) << llvm::countr_zero(uint64_t(*divisor));
  unsigned i = arg.getArgNumber();
  if (auto old = fn.getArgAttrOfType<IntegerAttr>(i, mlir::tile::kDivisibilityAttr))
    pow2 = std::max(pow2, old.getInt());
  fn.setArgAttr(i, mlir::tile::kDivisibilityAttr,
                IntegerAttr::get(IntegerType::get(fn.getContext(), 64), pow2));
}

/// A conjunct `c` of the form `x > C` (or `C < x`)
/// with C >= 0, or `x >= C` with C > 0, x an f32 argument (ordered
/// comparisons: NaN fails them): x's kPositiveAttr.
void recordPositive(func::FuncOp fn, Value c) {
  auto cmp = c.getDefiningOp<arith::CmpFOp>();
  if (!cmp)
    return;
  auto constant = [](Value v) -> std::optional<double> {
    if (auto k = v.getDefiningOp<arith::ConstantOp>())
      if (auto f = dyn_cast<FloatAttr>(k.getValue()))
        return f.getValueAsDouble();
    return std::nullopt;
  };
  using P = arith::CmpFPredicate;
  P pred = cmp.getPredicate();
  Value x = cmp.getLhs();
  std::optional<double> bound = constant(cmp.getRhs());
  if (!bound) { // C < x, C <= x
    x = cmp.getRhs();
    bound = constant(cmp.getLhs());
    pred = pred == P::OLT ? P::OGT : pred == P::OLE ? P::OGE : P::AlwaysFalse;
  }
  if (!bound || !((pred == P::OGT && *bound >= 0) || (pred == P::OGE && *bound > 0)))
    return;
  if (BlockArgument arg = argumentOf(fn, x))
    fn.setArgAttr(arg.getArgNumber(), mlir::tile::kPositiveAttr,
                  UnitAttr::get(fn.getContext()));
}

/// A conjunct `c` of the form `y >= x` (or
/// `x <= y`, or the strict forms) with x and y signed integer arguments:
/// x's kAtMostAttr gains y. The launcher checks the condition.
void recordAtMost(func::FuncOp fn, Value c) {
  auto cmp = c.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return;
  Value small, large;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sge:
  case arith::CmpIPredicate::sgt:
    large = cmp.getLhs(), small = cmp.getRhs();
    break;
  case arith::CmpIPredicate::sle:
  case arith::CmpIPredicate::slt:
    small = cmp.getLhs(), large = cmp.getRhs();
    break;
  default:
    return;
  }
  BlockArgument x = argumentOf(fn, small), y = argumentOf(fn, large);
  if (!x || !y || x == y || fn.getArgAttr(x.getArgNumber(), "tile.type") ||
      fn.getArgAttr(y.getArgNumber(), "tile.type"))
    return;
  SmallVector<int64_t> ys;
  if (auto old = fn.getArgAttrOfType<DenseI64ArrayAttr>(x.getArgNumber(),
                                                        mlir::tile::kAtMostAttr))
    ys.assign(old.asArrayRef().begin(), old.asArrayRef().end());
  if (llvm::is_contained(ys, int64_t(y.getArgNumber())))
    return;
  ys.push_back(y.getArgNumber());
  fn.setArgAttr(x.getArgNumber(), mlir::tile::kAtMostAttr,
                DenseI64ArrayAttr::get(fn.getContext(), ys));
}

/// Each conjunct of `c` (through `&&`) in turn.
void forEachConjunct(Value c, function_ref<void(Value)> fn) {
  if (auto a = c.getDefiningOp<arith::AndIOp>()) {
    forEachConjunct(a.getLhs(), fn);
    forEachConjunct(a.getRhs(), fn);
    return;
  }
  fn(c);
}
} // namespace

void ::tile::frontend::recordRequireFacts(func::FuncOp fn, Value c) {
  forEachConjunct(c, [&](Value conjunct) {
    recordDivisibility(fn, conjunct);
    recordAtMost(fn, conjunct);
    recordPositive(fn, conjunct);
  });
}
