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
// stages' barriers count copies). Loads in deeper nests stay loads. Rings
// of loops that run one after the other and copy the same box share one
// slot, their copies numbered on (TmaRingSlots.cpp).
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
// The rewrites of loads into copies: TmaCopies.cpp.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"
#include "lib/Transforms/Passes.h"
#include "dialects/tile/TargetInfo.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILETMALOADS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::tma;

namespace {

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
            if (std::optional<Match> m = matchRing(loop, ld, axes, &why)) {
              matches.push_back({loop, *m});
              if (nested)
                nestedLoops.insert(loop);
              continue;
            }
          // A dot reads it directly or through a trans.
          auto readByDot = [](Operation *u) {
            return isa<DotOp>(u) ||
                   (isa<TransOp>(u) && llvm::any_of(u->getUsers(), [](Operation *d) {
                      return isa<DotOp>(d);
                    }));
          };
          if (remarks && llvm::any_of(ld->getUsers(), readByDot))
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
        for (DotOp d : m.second.dots)
          slotDots.insert(d);
      // tma_a asked for: an A operand it leaves as a load gets a warning;
      // with remarks, any other load outside loops that a dot reads says
      // why it stays a load.
      SmallVector<Match> aMatches;
      if (!slotDots.empty() && getSchedule(fn).getTmaA())
        fn.walk([&](LoadOp ld) {
          std::string why;
          if (!readOnlyAsSlotDotA(ld, slotDots, &why)) {
            bool outside = isa<func::FuncOp>(ld->getParentOp()) ||
                           programLoopOf(ld);
            if (remarks && outside &&
                llvm::any_of(ld->getUsers(),
                             [](Operation *u) { return isa<DotOp>(u); }))
              ld.emitRemark("schedule tma_a = true, but this dot operand "
                            "load stays a load: ")
                  << why;
            return;
          }
          if (std::optional<Match> m = matchA(ld, axes, &why))
            aMatches.push_back(*m);
          else
            ld.emitWarning(kStaysLoad)
                << "its box does not qualify: " << why
                << " (docs/dialect.md, tile-tma-loads)";
        });
      // Stages: the schedule's num_stages (default 3), fewer where the
      // rings would not fit in kRingBudget; the one-stage A slots only
      // where they fit with the rings in kTmaSharedBudget.
      auto bytesOf = [](Match m) {
        SmallVector<int64_t> box = boxShape(m);
        return box[0] * box[1] * 2;
      };
      // Rings of consecutive loops that copy the same box share a slot
      // (TmaRingSlots.cpp): their shared memory counts once.
      RingSlots slots = assignRingSlots(matches);
      int64_t stageBytes = 0, aBytes = 0;
      for (const SmallVector<unsigned> &members : slots.members)
        stageBytes += bytesOf(matches[members.front()].second);
      int64_t stages = getSchedule(fn).getNumStages();
      while (stages > 2 && stages * stageBytes > kRingBudget)
        --stages;
      // Still too big at two stages with several slots (several loops,
      // each with its rings): the last slots in program order stay loads
      // until the rest fit. One slot alone stays (a box too big for shared
      // memory is the kernel's error, reported as such).
      while (slots.members.size() > 1 && stages * stageBytes > kRingBudget) {
        SmallVector<unsigned> dropped = slots.members.pop_back_val();
        stageBytes -= bytesOf(matches[dropped.front()].second);
        for (unsigned j : dropped)
          if (remarks)
            matches[j].second.load.emitRemark("dot operand load stays off TMA: ")
                << "the rings of the loads before it take the "
                << kRingBudget / 1024 << " KiB of shared memory for rings";
      }
      {
        SmallVector<std::pair<scf::ForOp, Match>> kept;
        SmallVector<int64_t> keptSlot;
        for (auto [i, m] : llvm::enumerate(matches))
          if (slots.slotOf[i] < int64_t(slots.members.size())) {
            kept.push_back(m);
            keptSlot.push_back(slots.slotOf[i]);
          }
        matches = std::move(kept);
        slots.slotOf = std::move(keptSlot);
        slots.members.assign(slots.members.size(), {});
        for (auto [i, s] : llvm::enumerate(slots.slotOf))
          slots.members[s].push_back(unsigned(i));
      }
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
      // The counts the rings' copies start from, all made before any
      // rewrite (a count in the loop over programs rebuilds that loop).
      SmallVector<Value> bases = ringBases(matches, slots, nestedLoops);
      // Last first, so that the copies at the top of a loop body come out
      // in program order (each rewrite inserts at the top).
      for (int64_t i = int64_t(matches.size()) - 1; i >= 0; --i)
        (void)rewriteRing(matches[i].first, matches[i].second,
                          slots.slotOf[i], stages, bases[i]);
      int64_t slot = slots.members.size();
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
