//===- StageReleases.cpp - tile.tma_release where a stage's dot is done --===//
//
// In tile-warp-specialize's consumer region each copy of a ring stage gets
// one tile.tma_release where every dot reading the stage is complete: after
// the dot (synchronous) or after its tile.dot_wait, which may be in the
// next iteration of a loop that carries the dot's value (the loop then
// carries the stage too, -1 for none: a release of -1 is none) or after
// the loop. A slot that several products read (a backward's Q: S = K·Qᵀ
// and dK += dSᵀ·Q) has one wait per reader and is released after the last.
// The producer waits for these releases before it overwrites a stage: one
// arrival per consumer warp and copy.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/WarpSpecialize.h"

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Releases `stage` of `slot` after `after`.
void release(Operation *after, Value stage, int64_t slot) {
  OpBuilder b(after->getContext());
  b.setInsertionPointAfter(after);
  TmaReleaseOp::create(b, after->getLoc(), stage, slot);
}

/// The stage a dot value read, if an asynchronous dot read a ring stage
/// (its B operand from a tile.tma_wait of `slot`).
Value stageOf(Value v, int64_t slot) {
  auto dot = v.getDefiningOp<DotOp>();
  auto w = dot ? dot.getB().getDefiningOp<TmaWaitOp>() : TmaWaitOp();
  return w && dot.getAsync() && int64_t(w.getSlot()) == slot ? w.getStage()
                                                              : Value();
}

/// `loop` carries the dots of iter_args `args` (-> their slots) to their
/// waits: it carries their stages as well (the init's, or -1), and each
/// stage is released after the wait, in the body (the previous
/// iteration's dot) and after the loop (the last one).
LogicalResult carryStages(scf::ForOp loop,
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

/// Where the dot reading a ring stage through `w` is complete: in the
/// iteration that reads it (the dot itself when synchronous, else its
/// tile.dot_wait), or later, in the next iteration of the loop that carries
/// the dot's value (`loop` and the iter_arg). Failure: none of these.
struct Completion {
  Operation *inBlock = nullptr;
  scf::ForOp loop;
  unsigned arg = 0;
};

FailureOr<Completion> completionOf(TmaWaitOp w) {
  auto dot = w->hasOneUse() ? dyn_cast<DotOp>(*w->user_begin()) : DotOp();
  if (dot && !dot.getAsync())
    return Completion{dot, {}, 0};
  OpOperand *use = dot && dot->hasOneUse() ? &*dot->use_begin() : nullptr;
  Operation *user = use ? use->getOwner() : nullptr;
  if (auto done = dyn_cast_or_null<DotWaitOp>(user))
    return Completion{done, {}, 0};
  auto loop = user ? dyn_cast<scf::ForOp>(user->getParentOp()) : nullptr;
  if (isa_and_nonnull<scf::YieldOp>(user) && loop)
    return Completion{nullptr, loop, use->getOperandNumber()};
  if (auto l = dyn_cast_or_null<scf::ForOp>(user))
    if (use->getOperandNumber() >= l.getNumControlOperands())
      return Completion{nullptr, l,
                        use->getOperandNumber() - l.getNumControlOperands()};
  return w.emitError("producer = true needs the dot reading each TMA "
                     "stage to be waited for (tile.dot_wait) in its "
                     "block, the next iteration or after its loop");
}
} // namespace

/// Each copy of a ring stage gets one tile.tma_release of the stage where
/// every dot that reads it is complete. The waits of one copy are those of
/// one slot and stage value in one block (one per reader: a slot several
/// products read, directly or transposed). A reader is complete after the
/// dot (synchronous) or its tile.dot_wait, in the same iteration, or in the
/// next iteration of a loop that carries the dot's value (the loop then
/// carries the stage too, -1 for none: a release of -1 is none) or after
/// the loop. The release goes after the last of the same-iteration
/// completions, or, where one reader is carried, with that reader (it
/// completes after everything of its iteration); two carried readers of
/// one copy are an error.
LogicalResult wspec::placeReleases(Block *consumer,
                                   const DenseMap<int64_t, int64_t> &stages) {
  // The waits of each copy: (block, slot, stage) -> waits, in order.
  llvm::MapVector<std::tuple<Block *, int64_t, Value>, SmallVector<TmaWaitOp>>
      copies;
  consumer->walk([&](TmaWaitOp w) {
    if (stages.lookup(w.getSlot()) > 1) // a one-stage slot is copied once
      copies[{w->getBlock(), int64_t(w.getSlot()), w.getStage()}].push_back(w);
  });
  // One copy of a slot per block: the producer counts one release per copy.
  DenseMap<std::pair<Block *, int64_t>, Value> stageIn;
  for (auto &[key, waits] : copies) {
    auto [it, fresh] = stageIn.insert(
        {{std::get<0>(key), std::get<1>(key)}, std::get<2>(key)});
    if (!fresh)
      return waits.front().emitError(
          "producer = true: this block reads two stages of one TMA ring");
  }
  // Loops carrying dots that read a stage: iter_arg -> slot.
  llvm::MapVector<Operation *, llvm::MapVector<unsigned, int64_t>> carried;
  for (auto &[key, waits] : copies) {
    int64_t slot = std::get<1>(key);
    Operation *last = nullptr;
    std::optional<Completion> late;
    for (TmaWaitOp w : waits) {
      FailureOr<Completion> c = completionOf(w);
      if (failed(c))
        return failure();
      if (c->loop) {
        if (late)
          return w.emitError("producer = true: two products reading this TMA "
                             "stage complete an iteration late (with "
                             "num_stages = 2 both complete in theirs)");
        late = *c;
        continue;
      }
      if (last && last->getBlock() != c->inBlock->getBlock())
        return w.emitError("producer = true: the products reading this TMA "
                           "stage complete in different blocks");
      if (!last || last->isBeforeInBlock(c->inBlock))
        last = c->inBlock;
    }
    if (!late) {
      release(last, waits.front().getStage(), slot);
      continue;
    }
    auto [it, fresh] = carried[late->loop].insert({late->arg, slot});
    if (!fresh && it->second != slot)
      return late->loop.emitError("producer = true: a loop carries dots "
                                  "reading two TMA slots in one value");
  }
  for (auto &[op, args] : carried)
    if (failed(carryStages(cast<scf::ForOp>(op), args)))
      return failure();
  return success();
}
