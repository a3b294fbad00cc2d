//===- AssignLayouts.cpp - give every tile value a #tile.layout -----------===//
//
// Post-conditions: every tile type in a kernel carries a #tile.layout; each
// op's operands have the layouts the op's lowering expects (see
// requiredOperandLayout), with explicit tile.convert_layout where the
// producer's layout differs; loop-carried tiles keep their initial value's layout.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

#include "dialects/tile/TileLayout.h"
#include "lib/Analysis/AxisInfo.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// `op`'s location, or for an op the compiler made (a folded constant:
/// no source location) that of its first user with one, else the
/// kernel's: every error points into the source.
Location sourceLoc(Operation *op) {
  SmallVector<Operation *> work{op};
  for (unsigned i = 0; i < work.size() && i < 64; ++i) {
    if (!isa<UnknownLoc>(work[i]->getLoc()))
      return work[i]->getLoc();
    for (Operation *user : work[i]->getUsers())
      work.push_back(user);
  }
  auto fn = op->getParentOfType<func::FuncOp>();
  return fn ? fn.getLoc() : op->getLoc();
}

/// An error at `op`'s source location, with a note naming the kernel's
/// compile-time values (a shape that -D values made).
InFlightDiagnostic sourceError(Operation *op) {
  InFlightDiagnostic d = mlir::emitError(sourceLoc(op));
  if (auto fn = op->getParentOfType<func::FuncOp>())
    if (auto params = fn->getAttrOfType<DictionaryAttr>(kParamsAttr);
        params && !params.empty())
      d.attachNote(fn.getLoc())
          << "kernel '" << fn.getName() << "' compiled with " << params;
  return d;
}

struct Assigner {
  int64_t numWarps;
  MLIRContext *ctx;
  const AxisAnalysis &axes;
  bool wgmma; ///< sm_90a: register B operands go to shared memory as stored

  /// 2-D loads along a contiguous dimension read 16 bytes per thread.
  LayoutAttr loadLayout(LoadOp ld) const {
    auto t = cast<TileType>(ld.getType());
    std::optional<unsigned> dim = axes.contiguousDim(ld.getPtr());
    if (t.getRank() != 2 || !dim || t.getElementType().isInteger(1))
      return defaultFor(t);
    int64_t vec = std::max<int64_t>(1, 128 / t.getElementTypeBitWidth());
    return getBlockedLayout(ctx, t.getShape(), numWarps, *dim, vec);
  }

  /// Large 2-D stores write 16 bytes per thread where the address allows:
  /// the default layout with lanes and registers traded inside warps (the
  /// lowering exchanges registers with shuffles, no shared memory), so
  /// that a warp writes whole 32-byte sectors rather than pieces of them
  /// and each thread issues a quarter of the stores. Only where a thread
  /// would otherwise issue kWideStoreMinAccesses stores or more: that many
  /// in a burst fill the load/store queue (flash_fwd's O at D = 128, 32
  /// stores of 4 bytes: +7-10 % at 2k), fewer do not, and the shuffles then
  /// only move ptxas's schedule of the loops before them (D = 64: 0.92-0.98).
  LayoutAttr storeLayout(StoreOp st) const {
    auto t = cast<TileType>(st.getValue().getType());
    LayoutAttr l = defaultFor(t);
    std::optional<unsigned> dim = axes.contiguousDim(st.getPtr());
    if (t.getRank() != 2 || !dim || t.getElementType().isInteger(1))
      return l;
    int64_t vec = std::max<int64_t>(1, 128 / t.getElementTypeBitWidth());
    vec = axes.vectorWidth(st.getPtr(), st.getMask(), Value(), *dim, vec);
    int64_t lead = leadingRegsAlong(l, *dim);
    if (vec <= lead || l.getNumRegs() / lead < kWideStoreMinAccesses)
      return l;
    // Only the value may need moving: pointers and mask that are not
    // recomputed in the new layout (a pointer tile carried by a loop, say)
    // would cross lanes in 64-bit pieces or through shared memory.
    if (!isCheapToRecompute(st.getPtr(), 12) ||
        (st.getMask() && !isCheapToRecompute(st.getMask(), 12)))
      return l;
    LayoutAttr wide = vectorizeAlong(l, *dim, vec);
    return wide ? wide : l;
  }

  LayoutAttr defaultFor(TileType t) const {
    return getDefaultLayout(ctx, t.getShape(), numWarps);
  }
  static TileType with(Type t, LayoutAttr l) {
    return cast<TileType>(t).withEncoding(l);
  }

  /// Makes operand `i` of `op` have layout `l`, converting when needed.
  void require(Operation *op, unsigned i, LayoutAttr l) {
    Value v = op->getOperand(i);
    auto t = cast<TileType>(v.getType());
    if (t.getEncoding() == l)
      return;
    OpBuilder b(op);
    auto cvt = ConvertLayoutOp::create(b, v.getLoc(), t.withEncoding(l), v);
    op->setOperand(i, cvt);
  }

  /// Every tile operand and result of `op` in layout `l` (elementwise ops).
  void uniform(Operation *op, LayoutAttr l) {
    for (OpOperand &o : op->getOpOperands())
      if (isa<TileType>(o.get().getType()))
        require(op, o.getOperandNumber(), l);
    for (OpResult r : op->getResults())
      if (isa<TileType>(r.getType()))
        r.setType(with(r.getType(), l));
  }

  LogicalResult check(Operation *op) {
    auto bad = [&](Type t) -> bool {
      auto tt = dyn_cast<TileType>(t);
      return tt && (tt.getRank() > 2 || !isPowerOfTwoShape(tt.getShape()));
    };
    for (Type t : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (bad(t)) {
        auto tt = cast<TileType>(t);
        return sourceError(op)
               << "tile shape [" << tt.getShape()
               << "] is not supported: tiles must have rank 1 or 2 and "
                  "power-of-two dimensions (tile-pad-shapes, which tilec "
                  "runs first, pads other sizes)";
      }
    return success();
  }

  LogicalResult visitDot(DotOp dot) {
    auto acc = cast<TileType>(dot.getAcc().getType());
    auto a = cast<TileType>(dot.getA().getType());
    auto b = cast<TileType>(dot.getB().getType());
    LayoutAttr accL = defaultFor(acc);
    Type elt = a.getElementType();
    bool tensorCore = elt.isF16() || elt.isBF16() || isFp8(elt) ||
                      (elt.isF32() && dot.getAllowTf32());
    if (tensorCore) {
      int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
      int64_t kAlign = elt.isF32() ? 8 : isFp8(elt) ? 32 : 16;
      if (m % 16 || n % 8 || k % kAlign)
        return dot.emitError() << "tensor-core dot needs M % 16 == 0, N % 8 == "
                                  "0 and K % "
                               << kAlign << " == 0, got M=" << m << " N=" << n
                               << " K=" << k;
      if (elt.isF32())
        return dot.emitError("allow_tf32 dots are not supported yet");
      // A in the accumulator layout is the mma A-fragment layout (whole
      // rows in each warp, also where the result splits its columns among
      // warps), unless wgmma reads A in place from a TMA slot.
      // fp8 (kept only where wgmma k32 takes it): the 8-bit A fragment.
      if (!dot.getA().getDefiningOp<TmaWaitOp>())
        require(dot, 0,
                isFp8(elt) ? getFp8DotALayout(ctx, a.getShape(), numWarps)
                           : getAccumulatorLayout(ctx, a.getShape(), numWarps));
      // B is staged through shared memory by the lowering (ldmatrix) from
      // whatever layout it has: no copy per warp in registers.
    } else {
      // IEEE fp32: the lowering stages both operands in shared memory.
      require(dot, 0, defaultFor(a));
      require(dot, 1, defaultFor(b));
    }
    require(dot, 2, accL);
    dot.getResult().setType(with(acc, accL));
    return success();
  }

  /// scf.while: the "before" arguments keep their initial value's layout
  /// (as scf.for's iter_args); the "after" arguments and the results take
  /// the layout of the "before" argument of their position when the types
  /// match (the usual `scf.condition` forwarding), else the default.
  LogicalResult visitWhile(scf::WhileOp w) {
    for (auto [i, arg] : llvm::enumerate(w.getBeforeArguments())) {
      auto t = dyn_cast<TileType>(arg.getType());
      if (!t)
        continue;
      auto init = cast<TileType>(w.getInits()[i].getType());
      LayoutAttr l = init.getLayout() ? init.getLayout() : defaultFor(t);
      arg.setType(with(t, l));
      require(w, i, l);
    }
    for (auto [i, arg] : llvm::enumerate(w.getAfterArguments())) {
      auto t = dyn_cast<TileType>(arg.getType());
      if (!t)
        continue;
      LayoutAttr l = defaultFor(t);
      if (i < w.getBeforeArguments().size())
        if (auto b = dyn_cast<TileType>(w.getBeforeArguments()[i].getType());
            b && b.getShape() == t.getShape() &&
            b.getElementType() == t.getElementType())
          l = b.getLayout();
      arg.setType(with(t, l));
      w.getResult(i).setType(with(t, l));
    }
    return success();
  }

  LogicalResult visit(Operation *op) {
    if (failed(check(op)))
      return failure();
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](DotOp dot) { return visitDot(dot); })
        .Case([&](LoadOp ld) {
          uniform(ld, loadLayout(ld));
          return success();
        })
        .Case([&](StoreOp st) {
          uniform(st, storeLayout(st));
          return success();
        })
        .Case([&](AsyncCopyOp c) {
          // 16 bytes per thread along the contiguous dimension, as a
          // load's: one cp.async per 8 16-bit elements.
          auto t = cast<TileType>(c.getPtr().getType());
          uniform(c, getBlockedLayout(ctx, t.getShape(), numWarps,
                                      unsigned(c.getInnerDim()), 8));
          return success();
        })
        .Case([&](AsyncViewOp v) {
          // Read in place by mma.sync (ldmatrix): the layout only names
          // the contiguous dimension.
          auto t = cast<TileType>(v.getType());
          v.getResult().setType(with(
              t, getBlockedLayout(ctx, t.getShape(), numWarps,
                                  unsigned(v.getInnerDim()), 8)));
          return success();
        })
        .Case([&](TmaWaitOp w) {
          // Read in place from shared memory by wgmma; the layout only
          // names the contiguous dimension.
          auto t = cast<TileType>(w.getType());
          int64_t vec = std::max<int64_t>(1, 128 / t.getElementTypeBitWidth());
          w.getResult().setType(with(
              t, getBlockedLayout(ctx, t.getShape(), numWarps,
                                  unsigned(w.getInnerDim()), vec)));
          return success();
        })
        .Case([&](ExpandDimsOp e) {
          LayoutAttr r = defaultFor(e.getType());
          require(e, 0, sliceLayout(r, e.getAxis()));
          e.getResult().setType(with(e.getType(), r));
          return success();
        })
        .Case([&](BroadcastOp bc) {
          LayoutAttr r = defaultFor(bc.getType());
          auto src = cast<TileType>(bc.getSrc().getType());
          require(bc, 0, broadcastSourceLayout(r, src.getShape()));
          bc.getResult().setType(with(bc.getType(), r));
          return success();
        })
        .Case([&](ReduceOp red) {
          auto src = cast<TileType>(red.getSrc().getType());
          LayoutAttr l = defaultFor(src);
          require(red, 0, l);
          red.getResult().setType(
              with(red.getType(), sliceLayout(l, red.getAxis())));
          return success();
        })
        .Case([&](TransOp tr) {
          auto src = cast<TileType>(tr.getSrc().getType());
          // Read only as dot B operands on sm_90a (wgmma stores B to shared
          // memory along the direction its registers run, 16 bytes at a
          // time where a thread holds 16 consecutive bytes): the operand's
          // layout as it is, so a load's rows stay 16-byte stores there;
          // else (and for mma.sync's ldmatrix staging) the default. A
          // cp.async ring's stage (async_view) has no registers to move:
          // its layout as it is.
          bool inRing = tr.getSrc().getDefiningOp<AsyncViewOp>() != nullptr;
          bool onlyB = (wgmma || inRing) && !tr->use_empty() &&
                       llvm::all_of(tr->getUses(), [&](OpOperand &u) {
                         auto d = dyn_cast<DotOp>(u.getOwner());
                         return d && u.getOperandNumber() == 1 &&
                                d.getA() != tr.getResult();
                       });
          LayoutAttr l = onlyB && src.getLayout() ? src.getLayout()
                                                  : defaultFor(src);
          require(tr, 0, l);
          tr.getResult().setType(with(tr.getType(), transposeLayout(l)));
          return success();
        })
        .Case([&](scf::ForOp loop) {
          for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
            auto t = dyn_cast<TileType>(arg.getType());
            if (!t)
              continue;
            // Keep the init's layout (e.g. a prefetched load's), else the
            // default one.
            auto init = cast<TileType>(loop.getInitArgs()[i].getType());
            LayoutAttr l = init.getLayout() ? init.getLayout() : defaultFor(t);
            arg.setType(with(t, l));
            loop.getResult(i).setType(with(t, l));
            require(loop, loop.getNumControlOperands() + i, l);
          }
          return success();
        })
        .Case([&](scf::YieldOp y) {
          // Into the loop's next iteration, or out of an scf.if / for.
          Operation *parent = y->getParentOp();
          auto w = dyn_cast<scf::WhileOp>(parent);
          for (OpOperand &o : y->getOpOperands()) {
            unsigned i = o.getOperandNumber();
            Type to = w ? w.getBeforeArguments()[i].getType()
                        : parent->getResult(i).getType();
            if (auto t = dyn_cast<TileType>(to))
              require(y, i, t.getLayout());
          }
          return success();
        })
        .Case([&](scf::IfOp ifOp) {
          // Branch results in the default layout; each yield converts.
          for (OpResult r : ifOp.getResults())
            if (auto t = dyn_cast<TileType>(r.getType()))
              r.setType(with(t, defaultFor(t)));
          return success();
        })
        .Case([&](scf::WhileOp w) { return visitWhile(w); })
        .Case([&](scf::ConditionOp c) {
          auto w = cast<scf::WhileOp>(c->getParentOp());
          for (auto [i, arg] : llvm::enumerate(w.getAfterArguments()))
            if (auto t = dyn_cast<TileType>(arg.getType()))
              require(c, i + 1, t.getLayout());
          return success();
        })
        .Case([&](ToScalarOp) {
          // Any layout: every register of a one-element tile holds it.
          return success();
        })
        .Default([&](Operation *other) {
          // Elementwise ops, memory ops and tile constructors: one layout.
          Type shapeSource;
          for (Type t : other->getResultTypes())
            if (isa<TileType>(t))
              shapeSource = t;
          if (!shapeSource)
            for (Type t : other->getOperandTypes())
              if (isa<TileType>(t))
                shapeSource = t;
          if (shapeSource)
            uniform(other, defaultFor(cast<TileType>(shapeSource)));
          return success();
        });
  }
};

/// Elements of one tile a thread may hold. Every element is unrolled code
/// and a register (255 per thread): past this a kernel cannot run well,
/// and LLVM and ptxas take minutes on it (a 1-D f32 tile at 4 warps: 512
/// elements per thread compile in ~1.5 s, 2048 in ~22 s, 8192 not in 10
/// minutes).
constexpr int64_t kMaxElementsPerThread = 1024;

/// A located error at the first op whose result tile is too large for the
/// kernel's threads.
LogicalResult checkTileSizes(func::FuncOp fn, int64_t warps) {
  WalkResult r = fn.walk([&](Operation *op) {
    for (Type t : op->getResultTypes()) {
      auto tile = dyn_cast<TileType>(t);
      if (!tile)
        continue;
      int64_t perThread = tile.getNumElements() / (32 * warps);
      if (perThread <= kMaxElementsPerThread)
        continue;
      sourceError(op) << "a tile of " << tile.getNumElements()
                      << " elements is " << perThread
                      << " per thread with num_warps = " << warps
                      << "; at most " << kMaxElementsPerThread
                      << " (smaller tiles or more warps)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

struct AssignLayoutsPass
    : public mlir::tile::impl::TileAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(kKernelAttr))
        return;
      int64_t w = getNumWarps(fn);
      if (w <= 0 || (w & (w - 1)) || w > 32) {
        fn.emitError() << "num_warps must be a power of two in [1, 32], got "
                       << w;
        return signalPassFailure();
      }
      if (failed(checkTileSizes(fn, w)))
        return signalPassFailure();
      if (failed(widenFp8Dots(fn, w)))
        return signalPassFailure();
      AxisAnalysis axes(fn);
      auto arch = getOperation()->getAttrOfType<StringAttr>(kArchAttr);
      Assigner a{w, fn.getContext(), axes, arch && arch.getValue() == "sm_90a"};
      // Pre-order: operands are visited before their users, loops before
      // their bodies (so iter_args are typed before body ops read them).
      WalkResult r = fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<func::FuncOp>(op) || isa<ConvertLayoutOp>(op))
          return WalkResult::advance();
        return failed(a.visit(op)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
      });
      if (r.wasInterrupted())
        signalPassFailure();
    });
  }
};
} // namespace
