//===- LoopAnnotations.cpp - loop metadata onto the LLVM latches ----------===//
//
// See tile-loop-annotations in Passes.td. convert-scf-to-cf copies an
// scf.for's `llvm.loop_annotation` onto its latch branch and cf-to-llvm keeps
// it there as a discardable attribute; only the branch's own
// `loop_annotation` becomes `!llvm.loop` metadata, so it moves there.
// scf.while loses it: tile-dynamic-persistent's loops carry it on the
// inline asm of the tile.share_program that ends their body instead.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILELOOPANNOTATIONS
#include "lib/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using mlir::tile::kLoopAnnotationAttr;

namespace {
template <typename Branch> void move(Branch br) {
  auto a = br->template getAttrOfType<LLVM::LoopAnnotationAttr>(kLoopAnnotationAttr);
  if (!a)
    return;
  br->removeAttr(kLoopAnnotationAttr);
  br.setLoopAnnotationAttr(a);
}

struct LoopAnnotationsPass
    : public mlir::tile::impl::TileLoopAnnotationsBase<LoopAnnotationsPass> {
  void runOnOperation() override {
    // A persistent while loop's metadata comes on the inline asm of its
    // last tile.share_program, whose block ends with the latch branch.
    getOperation().walk([](LLVM::InlineAsmOp op) {
      Attribute a = op->getAttr(kLoopAnnotationAttr);
      if (!a)
        return;
      op->removeAttr(kLoopAnnotationAttr);
      if (auto br = dyn_cast<LLVM::BrOp>(op->getBlock()->getTerminator()))
        br->setAttr(kLoopAnnotationAttr, a);
    });
    getOperation().walk([](Operation *op) {
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        move(br);
      else if (auto cbr = dyn_cast<LLVM::CondBrOp>(op))
        move(cbr);
    });
  }
};
} // namespace
