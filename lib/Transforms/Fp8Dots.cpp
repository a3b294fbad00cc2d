//===- Fp8Dots.cpp - which fp8 dots stay fp8 ------------------------------===//
//
// Part of tile-assign-layouts, before any layout exists: an fp8 dot stays
// fp8 where the sm_90a lowering makes it wgmma k32 (WgmmaToGPU.cpp), else
// both operands widen to f16.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Why an fp8 dot cannot be one sm_90a wgmma k32 chain (empty: it can).
/// wgmma reads fp8 operands with K contiguous only: A from registers (the
/// getFp8DotALayout fragment) or K-major from a TMA slot, B K-major from a
/// slot or stored so from registers (whole 128-byte swizzle rows: K a
/// multiple of 128); M in 64-row blocks of whole warpgroups.
std::string fp8WgmmaMisfit(DotOp dot, int64_t warps, StringRef arch) {
  if (arch != "sm_90a")
    return "the target is " + arch.str() + " (fp8 tensor cores: sm_90a)";
  auto a = cast<TileType>(dot.getA().getType());
  auto b = cast<TileType>(dot.getB().getType());
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (warps % 4 || m % 64 || m < 16 * warps)
    return "M = " + std::to_string(m) + " on " + std::to_string(warps) +
           " warps is no wgmma (64-row blocks, 16 rows per warp, whole "
           "warpgroups)";
  if (n % 8 || n > 256 || k % 32)
    return "N = " + std::to_string(n) + ", K = " + std::to_string(k) +
           " do not suit wgmma k32 (N a multiple of 8 up to 256, K of 32)";
  if (auto w = dot.getB().getDefiningOp<TmaWaitOp>()) {
    if (w.getInnerDim() != 0)
      return "B is read from a TMA slot with N contiguous (fp8 wgmma "
             "reads K contiguous)";
  } else if (k % 128) {
    return "K = " + std::to_string(k) +
           " is not a multiple of 128 (B goes to shared memory in 128-byte "
           "rows along K)";
  }
  return "";
}

} // namespace

/// fp8 dots without an fp8 tensor-core path multiply as f16: both operands
/// are widened (exact: every e4m3 and e5m2 value is an f16), so the
/// product and its f32 accumulation equal the fp8 product's. Costs a
/// conversion per operand element and the f16 tensor-core rate.
LogicalResult mlir::tile::widenFp8Dots(func::FuncOp fn, int64_t warps) {
  auto module = fn->getParentOfType<ModuleOp>();
  bool remarks = module->hasAttr(kRemarksAttr);
  auto archAttr = module->getAttrOfType<StringAttr>(kArchAttr);
  StringRef arch = archAttr ? archAttr.getValue() : "sm_80";
  WalkResult r = fn.walk([&](DotOp dot) {
    auto a = cast<TileType>(dot.getA().getType());
    if (!isFp8(a.getElementType()))
      return WalkResult::advance();
    std::string why = fp8WgmmaMisfit(dot, warps, arch);
    if (why.empty())
      return WalkResult::advance();
    if (dot.getA().getDefiningOp<TmaWaitOp>() ||
        dot.getB().getDefiningOp<TmaWaitOp>()) {
      dot.emitError("fp8 dot reading a TMA slot does not fit wgmma: ") << why;
      return WalkResult::interrupt();
    }
    if (remarks)
      dot.emitRemark("fp8 dot multiplies as f16: ") << why;
    OpBuilder b(dot);
    for (unsigned i = 0; i < 2; ++i) {
      Value v = dot->getOperand(i);
      auto t = cast<TileType>(v.getType());
      dot->setOperand(i, CastOp::create(b, v.getLoc(),
                                        t.withElementType(b.getF16Type()), v));
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

