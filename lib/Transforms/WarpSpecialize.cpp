//===- WarpSpecialize.cpp - a producer warpgroup issues the TMA copies ----===//
//
// sm_90a, stage 4 (before tile-dynamic-persistent), in kernels whose
// schedule has producer = true (opt-in) and that have TMA copies. The kernel's
// body becomes the consumer region of one tile.warp_specialize; its
// producer region, run by one more warpgroup, is a slice of the body:
//
//   * every tile.tma_copy, marked `producer` (but a one-stage slot's copy
//     in the loop over programs of a persistent kernel, tma_a: each
//     program copies its own operand into its own slot);
//   * the scf.for and scf.if ops around them (bounds, conditions), with
//     only the iter_args and results that the copies need;
//   * the scalar ops (memory-effect free, no regions) computing all that,
//     and tile.scalar_loads (a loop bound read from memory): the producer
//     reads the value again, so it must be memory the kernel does not
//     write.
//
// In the consumer region the copies go, and each tile.tma_wait of a ring
// gets a tile.tma_release of its stage where the dot reading the stage is
// complete (after its tile.dot_wait; one-stage slots, copied once, need
// none), so the consumer warps only wait for copies and free stages; the
// producer waits for the stage a copy overwrites to be free. Releases at
// the copy points instead (as the kernel's own warps pass copies) are
// right only where the copies sit after the waits for the dots reading the
// stage two copies back, and let the producer run one copy ahead at most;
// here K's copies start up to `stages - 1` blocks ahead (flash_fwd at
// D = 128: +10-20 % on H100). Values the copies
// need that are tiles, or come from ops with memory effects or other
// regions, are an error: the producer cannot compute them.
//
// cta_programs = G > 1: the consumer region is run by G programs at once
// (tile.cta_member tells them apart; tile-persistent made it), all waiting
// for the same copies. So the copies, and the loops and ifs around every
// ring wait, must not depend on tile.cta_member, i.e. on
// program_id(0): an error otherwise (tile-persistent has made program_id(0)
// / G the CTA's own index, and tile-split-masked-loops splits at the
// smallest of the G programs' split points, so causal flash_fwd qualifies).
//
// The producer's slice: ProducerSlice.cpp; the releases: StageReleases.cpp.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/WarpSpecialize.h"
#include "lib/Transforms/CtaMembers.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEWARPSPECIALIZE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
struct WarpSpecializePass
    : public mlir::tile::impl::TileWarpSpecializeBase<WarpSpecializePass> {
  using TileWarpSpecializeBase::TileWarpSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // producer is opt-in (default false): where it cannot apply, say so.
    if (!targetsSm90a(module, arch))
      return warnOptInNeedsSm90a(module, arch, "producer",
                                 [](ScheduleAttr s) { return s.getProducer(); },
                                 "the producer warpgroup issues TMA copies, "
                                 "which need sm_90a");
    bool failedAny = false;
    module.walk([&](func::FuncOp fn) {
      if (!getSchedule(fn).getProducer())
        return; // (cta_programs > 1 without it: an invalid schedule)
      if (failed(specialize(fn)))
        failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  /// A one-stage slot's copy in the loop over programs (tma_a in a
  /// persistent kernel): each program copies its own operand into its own
  /// slot, so the copy stays with the program's warps.
  static bool isProgramCopy(TmaCopyOp c) {
    return c.getStages() == 1 && c->getParentOfType<scf::ForOp>();
  }

  LogicalResult specialize(func::FuncOp fn) {
    SmallVector<TmaCopyOp> copies;
    DenseSet<int64_t> programSlots;
    fn.walk([&](TmaCopyOp c) {
      if (isProgramCopy(c))
        programSlots.insert(c.getSlot());
      else
        copies.push_back(c);
    });
    if (copies.empty()) {
      if (getSchedule(fn).getCtaPrograms() > 1)
        return fn.emitError("cta_programs > 1 needs TMA copies (of K and V, "
                            "say) for the CTA's programs to share");
      fn.emitWarning("schedule producer = true has no effect: the kernel has "
                     "no TMA copies for a producer warpgroup to issue (tma = false, "
                     "or no load became a copy)");
      return success(); // nothing to produce: the kernel stays as it is
    }
    if (getNumWarps(fn) % 4)
      return fn.emitError("schedule producer = true needs whole warpgroups "
                          "of consumers (num_warps a multiple of 4), not ")
             << getNumWarps(fn);
    if (!fn.getBody().hasOneBlock())
      return fn.emitError("schedule producer = true needs a kernel body of one block");
    wspec::Slice slice(fn);
    for (TmaCopyOp c : copies)
      if (Operation *bad = slice.add(c)) {
        if (isa<CtaMemberOp>(bad)) {
          InFlightDiagnostic d =
              c.emitError("schedule cta_programs > 1: this TMA copy depends on "
                          "program_id(0), but the programs of a CTA "
                          "share the producer's copies");
          // tile-cta-shared-loops evens out upper bounds only: say so
          // at a loop that starts or steps by the program.
          DenseSet<Location> noted; // a split loop's parts share a place
          fn.walk([&](scf::ForOp f) {
            if ((members::dependsOnMember(f.getLowerBound()) ||
                 members::dependsOnMember(f.getStep())) &&
                noted.insert(f.getLoc()).second)
              d.attachNote(f.getLoc())
                  << "this loop's start or step depends on program_id(0); "
                     "the programs of a CTA can share a loop whose end "
                     "differs, not one whose start does";
          });
          return d;
        }
        return bad->emitError("schedule producer = true: a TMA copy needs this value, "
                              "which the producer warpgroup cannot compute "
                              "(a tile, or an op with memory effects or regions)");
      }
    if (failed(checkSharedRings(fn, programSlots)))
      return failure();

    // The body (but its return) becomes the consumer region.
    Block &body = fn.getBody().front();
    OpBuilder b(&body, body.begin());
    auto ws = WarpSpecializeOp::create(b, fn.getLoc());
    Block *producer = &ws.getProducer().emplaceBlock();
    Block *consumer = &ws.getConsumer().emplaceBlock();
    consumer->getOperations().splice(consumer->end(), body.getOperations(),
                                     std::next(ws->getIterator()),
                                     body.getTerminator()->getIterator());
    OpBuilder pb(producer, producer->end());
    IRMapping map;
    wspec::emit(slice, *consumer, pb, map);

    DenseMap<int64_t, int64_t> stages; // by slot (all its copies agree)
    for (TmaCopyOp c : copies) {
      stages[c.getSlot()] = c.getStages();
      auto guard = dyn_cast<scf::IfOp>(c->getParentOp());
      c.erase();
      // The scf.if of a persistent ring's copy goes too, when only the
      // copy's scalars are left in it.
      if (guard && !guard.getNumResults() && guard.getElseRegion().empty() &&
          llvm::all_of(guard.thenBlock()->without_terminator(),
                       [](Operation &op) { return isPure(&op); }))
        guard.erase();
    }
    return wspec::placeReleases(consumer, stages);
  }

  /// cta_programs > 1: no ring wait, nor a loop or if around one, depends
  /// on tile.cta_member (then every program of the CTA waits for, and
  /// releases, each copy exactly once, as the producer counts). The
  /// releases come later, next to the waits' dots.
  static LogicalResult checkSharedRings(func::FuncOp fn,
                                        const DenseSet<int64_t> &programSlots) {
    if (getSchedule(fn).getCtaPrograms() <= 1)
      return success();
    DenseSet<Value> dep; // values that depend on tile.cta_member
    auto anyDep = [&](ValueRange vs) {
      return llvm::any_of(vs, [&](Value v) { return dep.contains(v); });
    };
    // To a fixed point: loops carry values back to their tops.
    bool changed = true;
    while (changed) {
      changed = false;
      auto mark = [&](ValueRange vs) {
        for (Value v : vs)
          changed |= dep.insert(v).second;
      };
      fn.walk([&](Operation *op) {
        if (isa<CtaMemberOp>(op) || anyDep(op->getOperands()))
          mark(op->getResults());
        if (auto loop = dyn_cast<scf::ForOp>(op))
          for (auto [init, arg] : llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs()))
            if (dep.contains(init))
              mark(arg);
        if (auto loop = dyn_cast<scf::WhileOp>(op))
          for (auto [init, arg] : llvm::zip(loop.getInits(), loop.getBeforeArguments()))
            if (dep.contains(init))
              mark(arg);
        if (!op->hasTrait<OpTrait::IsTerminator>() || !anyDep(op->getOperands()))
          return;
        // A dependent yield: the values it yields to.
        Operation *parent = op->getParentOp();
        mark(parent->getResults());
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          mark(loop.getRegionIterArgs());
        if (auto loop = dyn_cast<scf::WhileOp>(parent)) {
          mark(loop.getBeforeArguments());
          mark(loop.getAfterArguments());
        }
      });
    }
    auto check = [&](Operation *use) -> LogicalResult {
      bool bad = anyDep(use->getOperands());
      for (Operation *p = use->getParentOp(); p && p != fn && !bad;
           p = p->getParentOp()) {
        if (auto f = dyn_cast<scf::ForOp>(p))
          bad = anyDep({f.getLowerBound(), f.getUpperBound(), f.getStep()});
        else if (auto i = dyn_cast<scf::IfOp>(p))
          bad = dep.contains(i.getCondition());
        else if (auto w = dyn_cast<scf::WhileOp>(p))
          bad = anyDep(w.getConditionOp().getOperands());
      }
      if (bad)
        return use->emitError("cta_programs > 1: whether and which ring stage "
                              "this waits for depends on program_id(0), but "
                              "the programs of a CTA share the producer's "
                              "copies");
      return success();
    };
    WalkResult r = fn.walk([&](Operation *op) {
      auto w = dyn_cast<TmaWaitOp>(op);
      if (w && !programSlots.contains(w.getSlot()) && failed(check(op)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }
};
} // namespace
