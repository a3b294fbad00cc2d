//===- TmaLoads.cpp - loop loads of dot B operands as TMA copies ----------===//
//
// sm_90a only, in kernels whose schedule has tma = true (the default:
// +12-23 % over register prefetch for flash_fwd on H100). A tile.load in an
// scf.for body that feeds only the B operand of one tile.dot (read in place
// by wgmma) and is a TMA box (TmaBox.h: rows moved by the loop, masked by
// `row < bound`, from a kernel argument plus whole rows and maybe a column)
// becomes a bulk tensor copy: the launcher maps the whole allocation behind
// the argument as rows of the stride (manifest `tensorMaps`), the copy
// reads rows counted from the argument, and the wait zeroes the rows of
// the box at or past `bound` just as the mask made them zero. Each load
// gets a slot of S stages (the schedule's num_stages, 2 to 4, default 3;
// fewer where they would not fit in 200 KiB): iteration i reads stage
// i % S and, at its top, starts copy i + 1 into the next stage; the first
// copy starts before the loop. With S >= 3 the warp that issues the copies
// need not wait for the slowest warp (see tile.tma_copy). A loop in the
// body of another loop (the loop over programs of a persistent kernel) runs
// its ring on across the outer iterations: the outer loop carries the count
// of copies made, copy i is copy base + i, and each copy sits in an scf.if
// of its condition, so that no copy point is passed without a copy (the
// stages' barriers count copies). Loads in deeper nests stay loads.
//
// With tma_a = true as well (opt-in), a load outside loops that only the A
// operands of such dots read (K contiguous, masked the same way: Q in
// flash_fwd) becomes one copy into a one-stage slot that wgmma reads in
// place, where it fits with the rings in 224 KiB: its registers go back to
// the loop (at D = 128, BM = BN = 128, 8 warps: 248 -> 229; timing
// unchanged on H100). In a persistent kernel
// such a load in the body of the loop over programs is copied once per
// program, by the program's own warps (each of cta_programs programs has
// its own slot; tile-warp-specialize leaves these copies in place): the
// loop counts its programs and copy n waits for barrier phase n % 2.
//
// With tma_store = true (the default), whole-row stores become bulk
// stores (TmaStores.cpp), only where that paid on H100 (causal D = 64 2k:
// +3-5 %): one program per CTA, stores that would otherwise be narrow
// (fewer than 2 * kWideStoreMinAccesses 16-bit values per thread), and a
// buffer that fits with the other slots and keeps the CTAs per SM that
// min_blocks asks for.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"
#include "lib/Transforms/Passes.h"
#include "dialects/tile/TargetInfo.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILETMALOADS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::tma;

namespace {

/// A load in a loop body that only one dot's B operand reads.
std::optional<Match> match(scf::ForOp loop, LoadOp load,
                           const AxisAnalysis &axes,
                           std::string *why = nullptr) {
  auto fail = [&](const std::string &reason) -> std::optional<Match> {
    if (why)
      *why = reason;
    return std::nullopt;
  };
  auto type = cast<TileType>(load.getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()))
    return fail("it is not a 2-D f16/bf16 tile");
  if (!load->hasOneUse())
    return fail("it has more than one reader (a ring slot is read by one "
                "dot's B operand)");
  auto dot = dyn_cast<DotOp>(*load->user_begin());
  if (!dot || dot.getB() != load.getResult() || dot->getBlock() != load->getBlock() ||
      dot.getA() == load.getResult())
    return fail("its reader is not the B operand of a dot in the same loop "
                "body");
  // The dot must become wgmma (the only reader of a slot): whole warpgroups,
  // each warp on its own 16 rows of 64-row blocks, N <= 256.
  int64_t warps = getNumWarps(load->getParentOfType<func::FuncOp>());
  int64_t rowsM = cast<TileType>(dot.getA().getType()).getDimSize(0);
  if (warps % 4 || rowsM < 16 * warps || rowsM % 64)
    return fail("its dot (M = " + std::to_string(rowsM) + ", " +
                std::to_string(warps) +
                " warps) cannot become wgmma: M must be a multiple of 64 "
                "with 16 rows per warp, on whole warpgroups");
  if (type.getDimSize(1) % 8 || type.getDimSize(1) > 256 ||
      type.getDimSize(0) % 16)
    return fail("its dot's N or K does not suit wgmma (N a multiple of 8, "
                "at most 256; K a multiple of 16)");
  return matchLoadBox(loop, load, dot, axes, why);
}

/// Whether `load` is what the schedule's tma_a is about: outside loops (in the kernel's
/// body, or in the body of the loop over programs of a persistent kernel:
/// once per program) and read only as the A operand of dots whose B is
/// read from a slot (`slotDots`).
bool readOnlyAsSlotDotA(LoadOp load, const DenseSet<Operation *> &slotDots) {
  if (load.use_empty() ||
      !(isa<func::FuncOp>(load->getParentOp()) || programLoopOf(load)))
    return false;
  return llvm::all_of(load->getUsers(), [&](Operation *user) {
    auto d = dyn_cast<DotOp>(user);
    return d && d.getA() == load.getResult() && d.getB() != load.getResult() &&
           slotDots.contains(d);
  });
}

/// Such a load (the caller checked readOnlyAsSlotDotA), K contiguous: one
/// copy into a one-stage slot, read in place by wgmma (Q of flash_fwd: its
/// registers go to the softmax).
std::optional<Match> matchA(LoadOp load, const AxisAnalysis &axes) {
  auto type = cast<TileType>(load.getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()))
    return std::nullopt;
  int64_t warps = getNumWarps(load->getParentOfType<func::FuncOp>());
  int64_t rowsM = type.getDimSize(0);
  if (warps % 4 || rowsM < 16 * warps || rowsM % 64)
    return std::nullopt;
  auto dot = cast<DotOp>(*load->user_begin());
  std::optional<Match> m = matchLoadBox(nullptr, load, dot, axes);
  if (!m || m->inner != 1)
    return std::nullopt;
  return m;
}

/// Copy `iter` of the box whose first row is `y`, where `pred` holds.
void createCopy(OpBuilder &b, Match mt, const BoxOrigin &o, Value y,
                Value iter, Value pred, int64_t slot, int64_t stages) {
  Location loc = mt.load.getLoc();
  auto type = cast<TileType>(mt.load.getType());
  TmaCopyOp::create(b, loc, o.arg, arith::AddIOp::create(b, loc, o.rowBase, y),
                    iter, pred, o.col, b.getI64IntegerAttr(slot),
                    b.getI64IntegerAttr(stages),
                    b.getDenseI64ArrayAttr(type.getShape()),
                    b.getI64IntegerAttr(mt.inner),
                    b.getI64IntegerAttr(mt.stride), strideArgsAttr(b, mt),
                    rowElemsAttr(b, mt), UnitAttr());
}

/// The load becomes a wait for stage `stage` (barrier parity `parity`),
/// keeping the rows before `mt.bound` of the box whose first row is `y`.
void replaceByWait(OpBuilder &b, Match mt, Value stage, Value parity,
                   Value y, int64_t slot) {
  LoadOp load = mt.load;
  Location loc = load.getLoc();
  Value valid = arith::SubIOp::create(b, loc, mt.bound, y);
  auto wait = TmaWaitOp::create(b, loc, load.getType(), stage, parity, valid,
                                b.getI64IntegerAttr(slot),
                                b.getI64IntegerAttr(mt.inner));
  load.replaceAllUsesWith(wait.getResult());
  load.erase();
}

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

namespace {
/// A new i32 iter_arg of `loop`, 0 at entry, that each iteration adds
/// `step(b, loc)` to (built at the end of the body); returns it. The
/// loop's discardable attributes (tile.persistent) stay.
Value addCounter(scf::ForOp loop,
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

/// `loop` (in a loop body) as a ring that continues from one iteration of
/// the enclosing loop to the next: a new i32 iter_arg of the enclosing
/// loop counts the copies made so far (its iterations of `loop` each
/// copy once), and is returned.
Value ringBase(scf::ForOp loop) {
  return addCounter(
      cast<scf::ForOp>(loop->getParentOp()), [&](OpBuilder &b, Location l) {
        // Iterations of `loop`: lb < ub ? (ub - lb + step - 1) / step : 0.
        auto c32 = [&](int64_t v) {
          return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(v));
        };
        Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
              step = loop.getStep();
        Value trips = arith::DivSIOp::create(
            b, l,
            arith::AddIOp::create(
                b, l, arith::SubIOp::create(b, l, ub, lb),
                arith::SubIOp::create(b, l, step, c32(1))),
            step);
        Value runs =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, lb, ub);
        return Value(arith::SelectOp::create(b, l, runs, trips, c32(0)));
      });
}

/// Whether `loop` runs once per kernel (no loop around it: `base` stays
/// null) or once per iteration of the loop whose body holds it, itself in
/// no loop (`base` becomes that ring's copy count); other nestings keep
/// their loads.
bool ringPlacement(scf::ForOp loop, bool &nested) {
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

LogicalResult rewrite(scf::ForOp loop, Match mt, int64_t slot,
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
  FailureOr<Value> yn = originOf(b, loop, mt.rowIndex, next);
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
  createCopyIf(b, mt, *origin, origin->y0, base ? base : c32(0),
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
  FailureOr<Value> y = originOf(b, loop, mt.rowIndex, cur);
  if (failed(y))
    return failure();
  replaceByWait(b, mt, stage, parity, *y, slot);
  return success();
}

/// The loop over programs gets an i32 iter_arg counting the programs run
/// before this one (0, 1, ...); returns it.
Value programCount(scf::ForOp loop) {
  return addCounter(loop, [](OpBuilder &b, Location l) {
    return Value(arith::ConstantOp::create(b, l, b.getI32IntegerAttr(1)));
  });
}

/// A load of matchA as one copy into a one-stage slot and its wait, where
/// the load was. In the loop over programs, copy n of the slot (the n-th
/// program this one runs) completes phase n of its barrier: the wait's
/// parity is n % 2.
LogicalResult rewriteA(Match mt, int64_t slot) {
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

constexpr const char *kStaysLoad =
    "schedule tma_a = true, but this load of a dot's A operand stays a load: ";

/// Shared memory the TMA rings may take (of sm_90a's 227 KiB per block),
/// and all TMA slots with the one-stage ones (the rest is left for
/// barriers, alignment and scratch buffers).
constexpr int64_t kRingBudget = 200 * 1024;
const int64_t kTmaSharedBudget = targetInfo("sm_90a").sharedPerBlock - 3 * 1024;
/// Shared memory of an sm_90a SM for CTAs, and what each CTA takes besides
/// its slots (the slots' 1 KiB alignment, barriers, the system's 1 KiB).
const int64_t kSmSharedBytes = targetInfo("sm_90a").sharedPerSM;
constexpr int64_t kCtaSharedOverhead = 3 * 1024;

struct TmaLoadsPass : public mlir::tile::impl::TileTmaLoadsBase<TmaLoadsPass> {
  using TileTmaLoadsBase::TileTmaLoadsBase;

  /// With remarks on: "stays off TMA: <why>" at each load in a loop that
  /// a dot reads, under `scope`.
  void remarkLoopLoads(Operation *scope, StringRef why) {
    if (!remarks && !getOperation()->hasAttr(kRemarksAttr))
      return;
    scope->walk([&](LoadOp ld) {
      if (ld->getParentOfType<scf::ForOp>() &&
          llvm::any_of(ld->getUsers(), [](Operation *u) { return isa<DotOp>(u); }))
        ld.emitRemark("dot operand load stays off TMA: ") << why;
    });
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    remarks = remarks || module->hasAttr(kRemarksAttr);
    // tma_a is opt-in (default false): where it cannot apply, say so.
    if (!targetsSm90a(module, arch)) {
      remarkLoopLoads(module, "TMA needs sm_90a");
      return warnOptInNeedsSm90a(module, arch, "tma_a",
                                 [](ScheduleAttr s) { return s.getTmaA(); },
                                 "TMA copies need sm_90a");
    }
    module.walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(kKernelAttr))
        return;
      if (!getSchedule(fn).getTma()) {
        remarkLoopLoads(fn, "the schedule has tma = false");
        if (getSchedule(fn).getTmaA())
          fn.emitWarning("schedule tma_a = true has no effect with tma = "
                         "false: it extends the TMA copies to a dot's A operand");
        return;
      }
      AxisAnalysis axes(fn);
      SmallVector<std::pair<scf::ForOp, Match>> matches;
      llvm::SetVector<Operation *> nestedLoops; // rings an outer loop continues
      fn.walk([&](scf::ForOp loop) {
        bool nested;
        bool placed = ringPlacement(loop, nested);
        for (Operation &op : *loop.getBody()) {
          auto ld = dyn_cast<LoadOp>(op);
          if (!ld)
            continue;
          std::string why = "its loop is nested two deep (a ring lives in "
                            "a loop or in the loop over programs' loop)";
          if (placed)
            if (std::optional<Match> m = match(loop, ld, axes, &why)) {
              matches.push_back({loop, *m});
              if (nested)
                nestedLoops.insert(loop);
              continue;
            }
          if (remarks && llvm::any_of(ld->getUsers(), [](Operation *u) {
                return isa<DotOp>(u);
              }))
            ld.emitRemark("dot operand load stays off TMA: ") << why;
        }
      });
      // A loop that continues an inner ring keeps its own loads (it is
      // rebuilt with the ring's count: copies in its body would hold the
      // old loop).
      DenseSet<Operation *> outers;
      for (Operation *loop : nestedLoops)
        outers.insert(loop->getParentOp());
      llvm::erase_if(matches, [&](std::pair<scf::ForOp, Match> &m) {
        return outers.contains(m.first.getOperation());
      });
      // A operands outside loops of the dots whose B becomes a copy.
      DenseSet<Operation *> slotDots;
      for (auto &m : matches)
        slotDots.insert(m.second.dot);
      // tma_a asked for: an A operand it leaves as a load gets a warning.
      SmallVector<Match> aMatches;
      if (!slotDots.empty() && getSchedule(fn).getTmaA())
        fn.walk([&](LoadOp ld) {
          if (!readOnlyAsSlotDotA(ld, slotDots))
            return;
          if (std::optional<Match> m = matchA(ld, axes))
            aMatches.push_back(*m);
          else
            ld.emitWarning(kStaysLoad)
                << "its box does not qualify (2-D f16/bf16, K contiguous, "
                   "masked by row < bound, a first row the pass can prove "
                   "non-negative; docs/dialect.md)";
        });
      // Stages: the schedule's num_stages (default 3), fewer where the
      // rings would not fit in kRingBudget; the one-stage A slots only
      // where they fit with the rings in kTmaSharedBudget.
      auto bytesOf = [](Match m) {
        return cast<TileType>(m.load.getType()).getNumElements() * 2;
      };
      int64_t stageBytes = 0, aBytes = 0;
      for (auto &m : matches)
        stageBytes += bytesOf(m.second);
      int64_t stages = getSchedule(fn).getNumStages();
      while (stages > 2 && stages * stageBytes > kRingBudget)
        --stages;
      // A slot in the loop over programs: one per program of the CTA.
      for (Match m : aMatches)
        aBytes += bytesOf(m) * (programLoopOf(m.load)
                                    ? getSchedule(fn).getCtaPrograms()
                                    : 1);
      if (stages * stageBytes + aBytes > kTmaSharedBudget) {
        for (Match m : aMatches)
          m.load.emitWarning(kStaysLoad)
              << "its slot does not fit with the TMA rings in "
              << kTmaSharedBudget / 1024 << " KiB of shared memory";
        aMatches.clear();
        aBytes = 0;
      }
      // Last first, so that the copies at the top of a loop body come out
      // in program order (each rewrite inserts at the top).
      // A loop in a loop (the persistent loop over programs) gets its
      // copy count from the outer loop, once for all its slots.
      DenseMap<Operation *, Value> bases;
      for (Operation *loop : nestedLoops)
        bases[loop] = ringBase(cast<scf::ForOp>(loop));
      for (int64_t i = int64_t(matches.size()) - 1; i >= 0; --i)
        (void)rewrite(matches[i].first, matches[i].second, i, stages,
                      bases.lookup(matches[i].first));
      int64_t slot = matches.size();
      for (Match m : aMatches) {
        Operation *load = m.load;
        if (succeeded(rewriteA(m, slot)))
          ++slot;
        else
          load->emitWarning(kStaysLoad) << "its copy could not be built";
      }
      // Stores of whole boxes (tma_store, default true): one buffer each.
      // Only where they pay on H100 (causal D = 64 2k: +3-5 %): one
      // program per CTA (the buffer and its barriers are the program's);
      // stores that would otherwise be narrow (4 bytes per thread: a warp
      // writes 16 bytes of each of 8 rows; wide ones already write whole
      // sectors); where the buffer fits with the other slots, and does not
      // cost a CTA of the min_blocks asked for.
      if (!getSchedule(fn).getTmaStore() ||
          getSchedule(fn).getCtaPrograms() != 1)
        return;
      int64_t used = stages * stageBytes + aBytes;
      int64_t ctas = std::max<int64_t>(1, getSchedule(fn).getMinBlocks());
      int64_t threads = 32 * getNumWarps(fn);
      SmallVector<std::pair<StoreOp, Match>> stores;
      fn.walk([&](StoreOp st) {
        auto t = cast<TileType>(st.getValue().getType());
        if (t.getNumElements() / threads >= 2 * kWideStoreMinAccesses)
          return;
        if (std::optional<Match> m = matchStore(st, axes))
          stores.push_back({st, *m});
      });
      for (auto [st, m] : stores) {
        int64_t bytes = cast<TileType>(st.getValue().getType()).getNumElements() * 2;
        if (used + bytes > kTmaSharedBudget ||
            ctas * (used + bytes + kCtaSharedOverhead) > kSmSharedBytes)
          continue;
        if (succeeded(rewriteStore(st, m, slot))) {
          used += bytes;
          ++slot;
        }
      }
    });
  }
};
} // namespace
