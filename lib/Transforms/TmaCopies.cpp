//===- TmaCopies.cpp - a load as TMA copies and a wait --------------------===//
//
// The rewrites of tile-tma-loads (TmaLoads.cpp picks the loads and the
// stages). A ring: a load in a loop body that one dot's B operand reads
// gets a slot of S stages; iteration i waits for copy i in stage i % S and,
// at its top, starts copy i + 1; the first copy starts before the loop. A
// ring in the loop over programs continues across the programs: the outer
// loop carries the count of copies made. The wait zeroes the rows at or
// past the mask's bound, as the mask did. Loop-invariant operands as
// one-stage slots: TmaSlotA.cpp.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"
#include "lib/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::tma;

/// A load in a loop body that only B operands of dots in that body read,
/// directly or through a tile.trans that only such B operands read: wgmma
/// reads a 16-bit B from shared memory in either major order, so one slot
/// serves Qᵀ·… and …·Q alike (a backward's Q and dO). With producer = true
/// a stage is released after its last reader (tile-warp-specialize).
std::optional<Match> tma::matchRing(scf::ForOp loop, LoadOp load,
                                    const AxisAnalysis &axes,
                                    std::string *why) {
  auto fail = [&](const std::string &reason) -> std::optional<Match> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  auto type = cast<TileType>(load.getType());
  bool fp8 = isFp8(type.getElementType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16() || fp8))
    return fail("it is not a 2-D f16/bf16/fp8 tile");
  auto fn = load->getParentOfType<func::FuncOp>();
  // Each reader: the dot and the tile it reads as B (the load or a trans).
  SmallVector<std::pair<DotOp, Value>> readers;
  auto asB = [&](OpOperand &use) {
    auto d = dyn_cast<DotOp>(use.getOwner());
    if (!d || use.getOperandNumber() != 1 || d.getA() == use.get() ||
        d->getBlock() != load->getBlock())
      return false;
    readers.push_back({d, use.get()});
    return true;
  };
  for (OpOperand &use : load->getUses()) {
    if (asB(use))
      continue;
    auto tr = dyn_cast<TransOp>(use.getOwner());
    if (tr && !tr->use_empty() &&
        llvm::all_of(tr->getUses(), [&](OpOperand &u) { return asB(u); }))
      continue;
    return fail("its reader is not the B operand of a dot in the same loop "
                "body (directly or transposed)");
  }
  // Each dot must become wgmma (the slot's readers): whole warpgroups,
  // each warp on its own 16 rows of 64-row blocks, N <= 256.
  int64_t warps = getNumWarps(fn);
  for (auto [dot, b] : readers) {
    int64_t rowsM = cast<TileType>(dot.getA().getType()).getDimSize(0);
    if (warps % 4 || rowsM < 16 * warps || rowsM % 64)
      return fail("its dot (M = " + std::to_string(rowsM) + ", " +
                  std::to_string(warps) +
                  " warps) cannot become wgmma: M must be a multiple of 64 "
                  "with 16 rows per warp, on whole warpgroups");
    auto tb = cast<TileType>(b.getType());
    if (tb.getDimSize(1) % 8 || tb.getDimSize(1) > 256 ||
        tb.getDimSize(0) % (fp8 ? 32 : 16))
      return fail("its dot's N or K does not suit wgmma (N a multiple of 8, "
                  "at most 256; K a multiple of " +
                  std::string(fp8 ? "32" : "16") + ")");
  }
  std::optional<Match> m =
      matchLoadBox(loop, load, readers.front().first, axes, why,
                   /*allowColumns=*/true);
  // fp8 wgmma reads B with K contiguous only: the load's contiguous
  // dimension is B's K (dimension 0 read directly, 1 through a trans).
  if (m && fp8)
    for (auto [dot, b] : readers)
      if (int64_t(m->inner) != (b == load.getResult() ? 0 : 1))
        return fail("its dot reads it as fp8 B with N contiguous (fp8 wgmma "
                    "reads K contiguous: load it transposed)");
  if (m)
    for (auto [dot, b] : readers)
      m->dots.push_back(dot);
  return m;
}

SmallVector<int64_t> tma::boxShape(const Match &mt) {
  LoadOp load = mt.load;
  auto type = cast<TileType>(load.getType());
  SmallVector<int64_t> shape(type.getShape());
  // The extent a dot uses along dimension `dim` of its operand `operand`
  // (0 where it records none).
  auto usedBy = [](OpOperand &use, unsigned dim) -> int64_t {
    auto d = dyn_cast<DotOp>(use.getOwner());
    if (!d || use.getOperandNumber() > 1)
      return 0;
    bool k = use.getOperandNumber() == 0 ? dim == 1 : dim == 0;
    std::optional<uint64_t> u = k ? d.getKUsed() : d.getNUsed();
    return u ? int64_t(*u) : 0;
  };
  int64_t used = 0;
  for (OpOperand &use : load->getUses()) {
    SmallVector<std::pair<OpOperand *, unsigned>> readers = {{&use, mt.inner}};
    if (auto tr = dyn_cast<TransOp>(use.getOwner())) {
      readers.clear();
      for (OpOperand &tu : tr->getUses())
        readers.push_back({&tu, 1 - mt.inner});
    }
    for (auto [r, dim] : readers) {
      int64_t u = usedBy(*r, dim);
      if (!u)
        return shape;
      used = std::max(used, u);
    }
  }
  int64_t slab = 128 / (type.getElementType().getIntOrFloatBitWidth() / 8);
  if (used)
    shape[mt.inner] =
        std::min(shape[mt.inner], int64_t(llvm::alignTo(used, slab)));
  return shape;
}

void tma::createCopy(OpBuilder &b, Match mt, const BoxOrigin &o, Value y,
                Value iter, Value pred, int64_t slot, int64_t stages) {
  Location loc = mt.load.getLoc();
  Value row = arith::AddIOp::create(b, loc, o.rowBase, mt.colIndex ? o.y0 : y);
  Value col = o.col;
  if (mt.colIndex)
    col = o.col ? Value(arith::AddIOp::create(b, loc, o.col, y)) : y;
  SmallVector<int64_t> box = boxShape(mt);
  // A box trimmed to the tensor's rows reads no padding.
  IntegerAttr rowElems =
      mt.rowElems && mt.rowElems < box[mt.inner] ? rowElemsAttr(b, mt)
                                                 : IntegerAttr();
  TmaCopyOp::create(b, loc, o.arg, row, iter, pred, col,
                    b.getI64IntegerAttr(slot),
                    b.getI64IntegerAttr(stages),
                    b.getDenseI64ArrayAttr(box),
                    b.getI64IntegerAttr(mt.inner),
                    b.getI64IntegerAttr(mt.stride), strideArgsAttr(b, mt),
                    rowElems, UnitAttr());
}

void tma::replaceByWait(OpBuilder &b, Match mt, Value stage, Value parity,
                   Value y, int64_t slot) {
  LoadOp load = mt.load;
  Location loc = load.getLoc();
  Value valid = arith::SubIOp::create(b, loc, mt.bound, y);
  UnitAttr columns = mt.colIndex ? b.getUnitAttr() : UnitAttr();
  auto wait = TmaWaitOp::create(b, loc, load.getType(), stage, parity, valid,
                                b.getI64IntegerAttr(slot),
                                b.getI64IntegerAttr(mt.inner), columns);
  // A transposed reader waits for the same stage with the other dimension
  // contiguous. It zeroes the rows past the bound as well: later passes may
  // move either wait (tile-overlap-dots runs a product an iteration late),
  // and both write the same zeros, only in a box that crosses the bound.
  for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
    auto tr = dyn_cast<TransOp>(user);
    if (!tr)
      continue;
    b.setInsertionPoint(tr);
    auto twait = TmaWaitOp::create(b, loc, tr.getType(), stage, parity, valid,
                                   b.getI64IntegerAttr(slot),
                                   b.getI64IntegerAttr(1 - mt.inner), columns);
    tr.replaceAllUsesWith(twait.getResult());
    tr.erase();
  }
  load.replaceAllUsesWith(wait.getResult());
  load.erase();
}

namespace {
/// Copy `iter` where `pred` holds: a predicated copy, or with `guarded`
/// (rings that continue across an outer loop) a copy inside `if (pred)`,
/// so that a copy point that copies nothing is never passed (the stages'
/// empty barriers count only the copies made).
void createCopyIf(OpBuilder &b, Match mt, const BoxOrigin &o, Value y,
                  Value iter, Value pred, int64_t slot, int64_t stages,
                  bool guarded) {
  if (!guarded)
    return createCopy(b, mt, o, y, iter, pred, slot, stages);
  Location loc = mt.load.getLoc();
  auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  createCopy(b, mt, o, y, iter,
             arith::ConstantOp::create(b, loc, b.getBoolAttr(true)), slot,
             stages);
}

} // namespace

Value tma::addCounter(scf::ForOp loop,
                 function_ref<Value(OpBuilder &, Location)> step) {
  Location loc = loop.getLoc();
  IRRewriter rw(loop->getContext());
  rw.setInsertionPoint(loop);
  Value zero = arith::ConstantOp::create(rw, loc, rw.getI32IntegerAttr(0));
  SmallVector<NamedAttribute> attrs(loop->getDiscardableAttrs());
  auto grown = loop.replaceWithAdditionalYields(
      rw, zero, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> args) {
        return SmallVector<Value>{
            arith::AddIOp::create(b, l, args.front(), step(b, l))};
      });
  auto newLoop = cast<scf::ForOp>(grown->getOperation());
  for (NamedAttribute a : attrs)
    newLoop->setDiscardableAttr(a.getName(), a.getValue());
  return newLoop.getRegionIterArgs().back();
}

std::optional<int64_t> mlir::tile::tmaCopySlot(Operation *op) {
  if (auto c = dyn_cast<TmaCopyOp>(op))
    return c.getSlot();
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (!ifOp || ifOp.getNumResults() || !ifOp.getElseRegion().empty())
    return std::nullopt;
  std::optional<int64_t> slot;
  ifOp.thenBlock()->walk([&](TmaCopyOp c) { slot = c.getSlot(); });
  return slot;
}

/// Whether `loop` runs once per kernel (no loop around it: `base` stays
/// null) or once per iteration of the loop whose body holds it, itself in
/// no loop (`base` becomes that ring's copy count); other nestings keep
/// their loads.
bool tma::ringPlacement(scf::ForOp loop, bool &nested) {
  nested = false;
  for (Operation *p = loop->getParentOp(); p && !isa<func::FuncOp>(p);
       p = p->getParentOp()) {
    if (!isa<scf::ForOp>(p))
      continue;
    if (nested || p != loop->getParentOp())
      return false;
    nested = true;
  }
  return true;
}

LogicalResult tma::rewriteRing(scf::ForOp loop, Match mt, int64_t slot,
                               int64_t stages, Value base) {
  Location loc = mt.load.getLoc();
  Value iv = loop.getInductionVar(), lb = loop.getLowerBound(),
        ub = loop.getUpperBound(), step = loop.getStep();

  // Scalars first (pure ops; left for DCE if anything fails): at the top
  // of the body, the iteration number and the next iteration's first row ...
  OpBuilder b(mt.dot->getContext());
  b.setInsertionPointToStart(loop.getBody());
  auto c32 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value iter = arith::DivSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
  if (base)
    iter = arith::AddIOp::create(b, loc, base, iter);
  IRMapping next;
  Value nextIv = arith::AddIOp::create(b, loc, iv, step);
  next.map(iv, nextIv);
  FailureOr<Value> yn = originOf(b, loop, mt.moving(), next);
  if (failed(yn))
    return failure();
  Value nextOk =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, nextIv, ub);
  Value afterScalars = nextOk;
  // ... and before the loop the first row and the argument's row of the
  // masked tensor's row 0.
  b.setInsertionPoint(loop);
  IRMapping first;
  first.map(iv, lb);
  FailureOr<BoxOrigin> origin = boxOrigin(b, loop, mt, first);
  if (failed(origin))
    return failure();
  // Iteration i uses copy i (stage i % stages); the copy for i + 1 starts
  // at the top of iteration i, a whole iteration ahead; the first copy
  // starts before the loop.
  bool guarded = bool(base);
  createCopyIf(b, mt, *origin, origin->first(), base ? base : c32(0),
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub),
               slot, stages, guarded);
  b.setInsertionPointAfterValue(afterScalars);
  createCopyIf(b, mt, *origin, *yn, arith::AddIOp::create(b, loc, iter, c32(1)),
               nextOk, slot, stages, guarded);
  // In the loop: wait for this iteration's copy, in stage i % stages with
  // barrier parity (i / stages) % 2. Rows from `bound` on are masked off.
  b.setInsertionPoint(mt.load);
  Value stage = arith::RemUIOp::create(b, loc, iter, c32(stages));
  Value parity = arith::AndIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, iter, c32(stages)), c32(1));
  IRMapping cur;
  cur.map(iv, iv);
  FailureOr<Value> y = originOf(b, loop, mt.moving(), cur);
  if (failed(y))
    return failure();
  replaceByWait(b, mt, stage, parity, *y, slot);
  return success();
}
