//===- Target.cpp - the schedule and target queries the passes share ------===//
//
// A kernel's warp count comes from its schedule; the target is the pass
// option, else the module's `tile.arch`. Passes that only pay on sm_90a
// (TMA, asynchronous wgmma) check it and warn where a schedule opts in
// off that target.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tile;

int64_t mlir::tile::getNumWarps(Operation *op) {
  return getSchedule(op).getNumWarps();
}

/// The target: `option`, else the module's `tile.arch` ("" when neither
/// names one).
static StringRef targetArch(ModuleOp module, StringRef option) {
  if (!option.empty())
    return option;
  auto a = module->getAttrOfType<StringAttr>(kArchAttr);
  return a ? a.getValue() : StringRef();
}

bool mlir::tile::targetsSm90a(ModuleOp module, StringRef option) {
  return targetArch(module, option) == "sm_90a";
}

void mlir::tile::warnOptInNeedsSm90a(ModuleOp module, StringRef option,
                                     StringRef field,
                                     function_ref<bool(ScheduleAttr)> on,
                                     StringRef why) {
  StringRef target = targetArch(module, option);
  module.walk([&](func::FuncOp fn) {
    if (fn->hasAttr(kKernelAttr) && on(getSchedule(fn)))
      mlir::emitWarning(fn.getLoc())
          << "schedule " << field << " = true has no effect on "
          << (target.empty() ? StringRef("this target") : target) << ": " << why;
  });
}
