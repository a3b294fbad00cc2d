//===- TmaSlotA.cpp - a loop-invariant dot operand as a one-stage slot ---===//
//
// tile-tma-loads with tma_a (TmaLoads.cpp picks the loads): a load outside
// loops that dots read in place (the A operand of dots whose B is a TMA
// slot, and otherwise only B operands) becomes one copy into a one-stage
// slot and its wait where the load was; in the loop over programs of a
// persistent kernel, copy n (the n-th program this CTA runs) waits for
// barrier phase n % 2. Its registers go to the loop body.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"
#include "lib/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::tma;

/// Whether `load` is what the schedule's tma_a is about: outside loops (in the kernel's
/// body, or in the body of the loop over programs of a persistent kernel:
/// once per program) and read as the A operand of dots whose B is read
/// from a slot (`slotDots`), and otherwise only as the B operand of dots
/// (K of a backward's dK/dV pass: A of S = K·Qᵀ, B of dQ = dS·K). wgmma
/// reads the slot in place in both roles: A with its K contiguous, B with
/// N contiguous (the transpose bit; 16-bit types only, checked by matchA).
bool tma::readOnlyAsSlotDotA(LoadOp load, const DenseSet<Operation *> &slotDots,
                             std::string *why) {
  auto fail = [&](const char *reason) {
    if (why)
      *why = reason;
    return false;
  };
  if (load.use_empty() ||
      !(isa<func::FuncOp>(load->getParentOp()) || programLoopOf(load)))
    return fail("it is in a loop");
  Value v = load.getResult();
  bool asA = false;
  for (Operation *user : load->getUsers()) {
    auto d = dyn_cast<DotOp>(user);
    if (!d)
      return fail("something besides dots reads it");
    if ((d.getA() == v) == (d.getB() == v))
      return fail("a dot reads it as both operands");
    if (d.getA() == v && !slotDots.contains(d))
      return fail("a dot whose B operand is no TMA slot reads it as A");
    asA |= d.getA() == v;
  }
  return asA || fail("no dot reads it as its A operand");
}

/// Such a load (the caller checked readOnlyAsSlotDotA), K contiguous: one
/// copy into a one-stage slot, read in place by wgmma (Q of flash_fwd: its
/// registers go to the softmax).
std::optional<Match> tma::matchA(LoadOp load, const AxisAnalysis &axes,
                                 std::string *why) {
  auto fail = [&](const std::string &reason) -> std::optional<Match> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  auto type = cast<TileType>(load.getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16() ||
        isFp8(type.getElementType())))
    return fail("it is not a 2-D f16/bf16/fp8 tile");
  int64_t warps = getNumWarps(load->getParentOfType<func::FuncOp>());
  int64_t rowsM = type.getDimSize(0);
  if (warps % 4 || rowsM < 16 * warps || rowsM % 64)
    return fail("its M = " + std::to_string(rowsM) + " rows on " +
                std::to_string(warps) +
                " warps is no wgmma A (a multiple of 64, 16 rows per warp)");
  // The box's dot: one that reads it as A (readOnlyAsSlotDotA: there is one).
  DotOp dot;
  bool asB = false;
  for (Operation *user : load->getUsers()) {
    auto d = cast<DotOp>(user);
    if (d.getA() == load.getResult())
      dot = dot ? dot : d;
    else
      asB = true;
  }
  std::optional<Match> m = matchLoadBox(nullptr, load, dot, axes, why);
  if (!m)
    return std::nullopt;
  if (m->inner != 1)
    return fail("its K dimension is not the contiguous one");
  if (asB && isFp8(type.getElementType()))
    return fail("a dot also reads it as fp8 B with N contiguous (fp8 wgmma "
                "reads K contiguous)");
  return m;
}

/// The loop over programs gets an i32 iter_arg counting the programs run
/// before this one (0, 1, ...); returns it.
static Value programCount(scf::ForOp loop) {
  return addCounter(loop, [](OpBuilder &b, Location l) {
    return Value(arith::ConstantOp::create(b, l, b.getI32IntegerAttr(1)));
  });
}

/// A load of matchA as one copy into a one-stage slot and its wait, where
/// the load was. In the loop over programs, copy n of the slot (the n-th
/// program this one runs) completes phase n of its barrier: the wait's
/// parity is n % 2.
LogicalResult tma::rewriteA(Match mt, int64_t slot) {
  Location loc = mt.load.getLoc();
  Value count;
  if (scf::ForOp programs = programLoopOf(mt.load))
    count = programCount(programs);
  OpBuilder b(mt.load);
  IRMapping none;
  FailureOr<BoxOrigin> origin = boxOrigin(b, nullptr, mt, none);
  if (failed(origin))
    return failure();
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value iter = count ? count : zero;
  Value parity =
      count ? arith::AndIOp::create(
                  b, loc, count,
                  arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1)))
            : zero;
  createCopy(b, mt, *origin, origin->y0, iter, yes, slot, /*stages=*/1);
  replaceByWait(b, mt, zero, parity, origin->y0, slot);
  return success();
}
