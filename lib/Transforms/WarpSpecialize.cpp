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
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEWARPSPECIALIZE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// What the producer region re-creates from the body: `keep` holds the
/// copies, the scalar ops it clones and the loops and ifs it rebuilds;
/// `needed` the values (results, iter_args) it must compute.
class Slice {
public:
  explicit Slice(Operation *fn) : fn(fn) {}

  /// Adds `copy` and everything it needs; the op the producer could not
  /// run, if any.
  Operation *add(TmaCopyOp copy) {
    keep.insert(copy);
    keepAncestors(copy);
    for (Value o : copy->getOperands())
      need(o);
    while (!work.empty() && !bad)
      visit(work.pop_back_val());
    return bad;
  }

  bool kept(Operation *op) const { return keep.contains(op); }
  bool isNeeded(Value v) const { return needed.contains(v); }

private:
  void need(Value v) {
    if (needed.insert(v).second)
      work.push_back(v);
  }

  /// Loops and ifs around `op` run in the producer too.
  void keepAncestors(Operation *op) {
    for (Operation *p = op->getParentOp(); p && p != fn; p = p->getParentOp()) {
      if (!keep.insert(p).second)
        return;
      if (auto f = dyn_cast<scf::ForOp>(p)) {
        need(f.getLowerBound());
        need(f.getUpperBound());
        need(f.getStep());
      } else if (auto i = dyn_cast<scf::IfOp>(p)) {
        need(i.getCondition());
      } else {
        bad = p;
        return;
      }
    }
  }

  void visit(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (owner == fn)
        return; // a kernel argument
      auto loop = dyn_cast<scf::ForOp>(owner);
      if (!loop) {
        bad = owner;
        return;
      }
      keep.insert(loop);
      keepAncestors(loop);
      if (v == loop.getInductionVar()) {
        need(loop.getLowerBound());
        need(loop.getUpperBound());
        need(loop.getStep());
        return;
      }
      unsigned i = arg.getArgNumber() - 1;
      need(loop.getInitArgs()[i]);
      need(loop.getBody()->getTerminator()->getOperand(i));
      return;
    }
    Operation *def = v.getDefiningOp();
    if (isa<TileType>(v.getType()) || isa<CtaMemberOp>(def)) {
      bad = def;
      return;
    }
    unsigned i = cast<OpResult>(v).getResultNumber();
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      keep.insert(loop);
      keepAncestors(loop);
      need(loop.getLowerBound());
      need(loop.getUpperBound());
      need(loop.getStep());
      need(loop.getInitArgs()[i]);
      need(loop.getBody()->getTerminator()->getOperand(i));
      return;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
      keep.insert(ifOp);
      keepAncestors(ifOp);
      need(ifOp.getCondition());
      need(ifOp.thenYield().getOperand(i));
      need(ifOp.elseYield().getOperand(i));
      return;
    }
    if (def->getNumRegions() ||
        !(isMemoryEffectFree(def) || isa<ScalarLoadOp>(def))) {
      bad = def;
      return;
    }
    keep.insert(def);
    keepAncestors(def);
    for (Value o : def->getOperands())
      need(o);
  }

  Operation *fn;
  DenseSet<Operation *> keep;
  DenseSet<Value> needed;
  SmallVector<Value> work;
  Operation *bad = nullptr;
};

/// Re-creates the kept ops of `src` at `b` (see Slice).
void emit(const Slice &s, Block &src, OpBuilder &b, IRMapping &map) {
  auto lookup = [&](Value v) { return map.lookupOrDefault(v); };
  for (Operation &op : src) {
    if (op.hasTrait<OpTrait::IsTerminator>() || !s.kept(&op))
      continue;
    Location loc = op.getLoc();
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      SmallVector<unsigned> carried;
      SmallVector<Value> inits;
      for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs()))
        if (s.isNeeded(arg) || s.isNeeded(loop.getResult(i))) {
          carried.push_back(i);
          inits.push_back(lookup(loop.getInitArgs()[i]));
        }
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      auto copy = scf::ForOp::create(
          b, loc, lookup(loop.getLowerBound()), lookup(loop.getUpperBound()),
          lookup(loop.getStep()), inits,
          [&](OpBuilder &bb, Location l, Value iv, ValueRange args) {
            map.map(loop.getInductionVar(), iv);
            for (auto [k, i] : llvm::enumerate(carried))
              map.map(loop.getRegionIterArgs()[i], args[k]);
            emit(s, *loop.getBody(), bb, map);
            SmallVector<Value> out;
            for (unsigned i : carried)
              out.push_back(lookup(yield.getOperand(i)));
            scf::YieldOp::create(bb, l, out);
          });
      // tile.persistent (tile-dynamic-persistent finds both copies).
      copy->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
      for (auto [k, i] : llvm::enumerate(carried))
        map.map(loop.getResult(i), copy.getResult(k));
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      SmallVector<unsigned> results;
      for (OpResult r : ifOp.getResults())
        if (s.isNeeded(r))
          results.push_back(r.getResultNumber());
      // Each branch: its kept ops, then the needed results (the builder
      // takes the if's result types from the yields).
      auto branch = [&](Block *from) {
        return [&, from](OpBuilder &bb, Location l) {
          emit(s, *from, bb, map);
          SmallVector<Value> out;
          for (unsigned i : results)
            out.push_back(lookup(from->getTerminator()->getOperand(i)));
          scf::YieldOp::create(bb, l, out);
        };
      };
      auto thenBranch = branch(ifOp.thenBlock());
      auto copy =
          ifOp.getElseRegion().empty()
              ? scf::IfOp::create(b, loc, lookup(ifOp.getCondition()), thenBranch)
              : scf::IfOp::create(b, loc, lookup(ifOp.getCondition()), thenBranch,
                                  branch(ifOp.elseBlock()));
      for (auto [k, i] : llvm::enumerate(results))
        map.map(ifOp.getResult(i), copy.getResult(k));
      continue;
    }
    Operation *c = b.clone(op, map);
    if (auto tc = dyn_cast<TmaCopyOp>(c))
      tc.setProducer(true);
  }
}

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
    Slice slice(fn);
    for (TmaCopyOp c : copies)
      if (Operation *bad = slice.add(c)) {
        if (isa<CtaMemberOp>(bad))
          return c.emitError("schedule cta_programs > 1: this TMA copy depends on "
                             "program_id(0), but the programs of a CTA "
                             "share the producer's copies");
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
    emit(slice, *consumer, pb, map);

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
    return placeReleases(consumer, stages);
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

  /// Each wait of a ring stage gets a tile.tma_release of the stage where
  /// the dot that reads it is complete: after the dot (synchronous) or
  /// after its tile.dot_wait, which may be in the next iteration of a loop
  /// that carries the dot's value (the loop then carries the stage too, -1
  /// for none: a release of -1 is none) or after the loop.
  static LogicalResult placeReleases(Block *consumer,
                                     const DenseMap<int64_t, int64_t> &stages) {
    SmallVector<TmaWaitOp> waits;
    consumer->walk([&](TmaWaitOp w) { waits.push_back(w); });
    // Loops carrying dots that read a stage: iter_arg -> slot.
    llvm::MapVector<Operation *, llvm::MapVector<unsigned, int64_t>> carried;
    for (TmaWaitOp w : waits) {
      int64_t slot = w.getSlot();
      if (stages.lookup(slot) <= 1)
        continue; // a one-stage slot is copied once and never released
      auto dot = w->hasOneUse() ? dyn_cast<DotOp>(*w->user_begin()) : DotOp();
      if (dot && !dot.getAsync()) {
        release(dot, w.getStage(), slot);
        continue;
      }
      OpOperand *use = dot && dot->hasOneUse() ? &*dot->use_begin() : nullptr;
      Operation *user = use ? use->getOwner() : nullptr;
      if (auto done = dyn_cast_or_null<DotWaitOp>(user)) {
        release(done, w.getStage(), slot);
        continue;
      }
      auto loop = user ? dyn_cast<scf::ForOp>(user->getParentOp()) : nullptr;
      std::optional<unsigned> arg;
      if (isa_and_nonnull<scf::YieldOp>(user) && loop)
        arg = use->getOperandNumber();
      else if (auto l = dyn_cast_or_null<scf::ForOp>(user)) {
        if (use->getOperandNumber() >= l.getNumControlOperands()) {
          loop = l;
          arg = use->getOperandNumber() - l.getNumControlOperands();
        }
      }
      if (!arg)
        return w.emitError("producer = true needs the dot reading each TMA "
                           "stage to be waited for (tile.dot_wait) in its "
                           "block, the next iteration or after its loop");
      auto [it, fresh] = carried[loop].insert({*arg, slot});
      if (!fresh && it->second != slot)
        return loop.emitError("producer = true: a loop carries dots reading "
                              "two TMA slots in one value");
    }
    for (auto &[op, args] : carried)
      if (failed(carryStages(cast<scf::ForOp>(op), args)))
        return failure();
    return success();
  }

  /// Releases `stage` of `slot` after `after`.
  static void release(Operation *after, Value stage, int64_t slot) {
    OpBuilder b(after->getContext());
    b.setInsertionPointAfter(after);
    TmaReleaseOp::create(b, after->getLoc(), stage, slot);
  }

  /// The stage a dot value read, if an asynchronous dot read a ring stage
  /// (its B operand from a tile.tma_wait of `slot`).
  static Value stageOf(Value v, int64_t slot) {
    auto dot = v.getDefiningOp<DotOp>();
    auto w = dot ? dot.getB().getDefiningOp<TmaWaitOp>() : TmaWaitOp();
    return w && dot.getAsync() && int64_t(w.getSlot()) == slot ? w.getStage()
                                                                : Value();
  }

  /// `loop` carries the dots of iter_args `args` (-> their slots) to their
  /// waits: it carries their stages as well (the init's, or -1), and each
  /// stage is released after the wait, in the body (the previous
  /// iteration's dot) and after the loop (the last one).
  static LogicalResult carryStages(scf::ForOp loop,
                                   const llvm::MapVector<unsigned, int64_t> &args) {
    IRRewriter rw(loop->getContext());
    rw.setInsertionPoint(loop);
    Location loc = loop.getLoc();
    Value none = arith::ConstantIntOp::create(rw, loc, -1, 32);
    SmallVector<Value> inits;
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [arg, slot] : args) {
      Value init = stageOf(loop.getInitArgs()[arg], slot);
      inits.push_back(init ? init : none);
    }
    unsigned first = loop.getNumRegionIterArgs();
    SmallVector<NamedAttribute> attrs(loop->getDiscardableAttrs());
    auto grown = loop.replaceWithAdditionalYields(
        rw, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          SmallVector<Value> out;
          for (auto [arg, slot] : args) {
            Value next = stageOf(yield.getOperand(arg), slot);
            out.push_back(next ? next : none);
          }
          return out;
        });
    if (failed(grown))
      return loop.emitError("producer = true: cannot carry TMA stages here");
    auto grownLoop = cast<scf::ForOp>(grown->getOperation());
    for (NamedAttribute a : attrs)
      grownLoop->setDiscardableAttr(a.getName(), a.getValue());
    for (auto [i, entry] : llvm::enumerate(args)) {
      auto [arg, slot] = entry;
      Value in = grownLoop.getRegionIterArgs()[arg];
      Value out = grownLoop.getResult(arg);
      auto inWait = in.hasOneUse() ? dyn_cast<DotWaitOp>(*in.user_begin())
                                   : DotWaitOp();
      auto outWait = out.hasOneUse() ? dyn_cast<DotWaitOp>(*out.user_begin())
                                     : DotWaitOp();
      if (!inWait || !outWait)
        return grownLoop.emitError(
            "producer = true needs a dot this loop carries to be waited for "
            "(tile.dot_wait) in the next iteration and after the loop");
      release(inWait, grownLoop.getRegionIterArgs()[first + i], slot);
      release(outWait, grownLoop.getResult(first + i), slot);
    }
    return success();
  }
};
} // namespace
