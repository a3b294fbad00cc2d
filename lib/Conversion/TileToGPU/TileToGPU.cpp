//===- TileToGPU.cpp - tile kernels to gpu.func with per-thread code ------===//
//
// Post-conditions: the module is a gpu.container_module; each tile kernel
// is a `gpu.func` kernel in `gpu.module @tile_kernels`, with known block
// size 32 * tile.num_warps and `tile.shared_memory` set; no tile op or type
// is left (pointers are i64 byte addresses).
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/Passes.h"
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "lib/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// The programs per SM ptxas must make room for (`.minnctapersm`, which
/// caps registers at 64K / (programs * threads)): the kernel's compile-time
/// MIN_BLOCKS, lowered to what shared memory allows (228 KiB per SM, 1 KiB
/// reserved per program); 0 (or no such parameter): no hint, ptxas spends
/// registers freely (flash_fwd at D = 64, BM = 64 took 139, so 3 programs
/// per SM, where 127 fit without spills: 4).
int64_t minBlocksPerSM(gpu::GPUFuncOp fn, int64_t sharedBytes) {
  int64_t want = getKernelParam(fn, "MIN_BLOCKS", 0);
  if (want <= 0)
    return 0;
  int64_t bySmem = (228 * 1024) / (sharedBytes + 1024);
  return std::max<int64_t>(1, std::min<int64_t>(bySmem, want));
}

int64_t warpsOf(Operation *fn) {
  if (auto a = fn->getAttrOfType<IntegerAttr>(kNumWarpsAttr))
    return a.getInt();
  return 4;
}

/// Moves a tile kernel into the gpu.module as a gpu.func kernel.
gpu::GPUFuncOp outline(func::FuncOp fn, gpu::GPUModuleOp gpuModule) {
  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  auto gfn = gpu::GPUFuncOp::create(b, fn.getLoc(), fn.getName(),
                                    fn.getFunctionType());
  gfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int64_t warps = warpsOf(fn);
  gfn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(32 * warps), 1, 1}));
  for (StringRef name : {kParamsAttr.data(), kNumWarpsAttr.data()})
    if (Attribute a = fn->getAttr(name))
      gfn->setAttr(name, a);
  // Replace gpu.func's empty entry block by the kernel's body.
  gfn.getBody().front().erase();
  gfn.getBody().takeBody(fn.getBody());
  gfn.walk([&](func::ReturnOp ret) {
    OpBuilder rb(ret);
    gpu::ReturnOp::create(rb, ret.getLoc());
    ret.erase();
  });
  fn.erase();
  return gfn;
}

/// lane = tid & 31, warp = tid >> 5, at the top of the kernel.
KernelInfo threadIds(gpu::GPUFuncOp fn) {
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  Location loc = fn.getLoc();
  Value tid = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(), gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  KernelInfo k;
  k.lane = arith::AndIOp::create(b, loc, tid, i32Const(b, loc, 31));
  k.warp = arith::ShRUIOp::create(b, loc, tid, i32Const(b, loc, 5));
  return k;
}

bool fullyLaidOut(Operation *root, Operation *&bad) {
  WalkResult r = root->walk([&](Operation *op) {
    for (Type t : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto tt = dyn_cast<TileType>(t); tt && !tt.getLayout()) {
        bad = op;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

struct ConvertTileToGPUPass
    : public mlir::tile::impl::ConvertTileToGPUBase<ConvertTileToGPUPass> {
  using ConvertTileToGPUBase::ConvertTileToGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Operation *bad = nullptr;
    if (!fullyLaidOut(module, bad)) {
      bad->emitError("tile value without a layout: run tile-assign-layouts "
                     "before convert-tile-to-gpu");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::FuncOp fn) {
      if (fn->hasAttr(kKernelAttr))
        kernels.push_back(fn);
    });
    if (kernels.empty())
      return;
    annotateVectorAccesses(module);

    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), kGpuModuleName);
    LoweringState state;
    if (!arch.empty())
      state.arch = arch;
    else if (auto a = module->getAttrOfType<StringAttr>(kArchAttr))
      state.arch = a.str();
    if (state.arch != "sm_80" && state.arch != "sm_90a") {
      module.emitError() << "unsupported target '" << state.arch
                         << "' (supported: sm_80, sm_90a)";
      return signalPassFailure();
    }
    for (func::FuncOp fn : kernels) {
      gpu::GPUFuncOp gfn = outline(fn, gpuModule);
      state.kernels[gfn] = threadIds(gfn);
      if (failed(setupTmaSlots(gfn, state.kernels[gfn])))
        return signalPassFailure();
    }

    TypeConverter tc;
    tc.addConversion([](Type t) { return t; });
    tc.addConversion([](PtrType t) -> Type {
      return IntegerType::get(t.getContext(), 64);
    });
    tc.addConversion([](TileType t) -> Type { return threadVectorType(t); });
    auto cast = [](OpBuilder &b, Type t, ValueRange in, Location loc) -> Value {
      return UnrealizedConversionCastOp::create(b, loc, t, in).getResult(0);
    };
    tc.addSourceMaterialization(cast);
    tc.addTargetMaterialization(cast);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.addLegalDialect<arith::ArithDialect, vector::VectorDialect,
                           LLVM::LLVMDialect, NVVM::NVVMDialect,
                           memref::MemRefDialect>();
    target.addDynamicallyLegalDialect<gpu::GPUDialect>(
        [&](Operation *op) { return tc.isLegal(op); });
    target.addDynamicallyLegalOp<gpu::GPUFuncOp>([&](gpu::GPUFuncOp f) {
      return tc.isSignatureLegal(f.getFunctionType()) &&
             tc.isLegal(&f.getBody());
    });
    target.addDynamicallyLegalDialect<arith::ArithDialect>(
        [&](Operation *op) { return tc.isLegal(op); });

    RewritePatternSet patterns(ctx);
    populateFunctionOpInterfaceTypeConversionPattern<gpu::GPUFuncOp>(patterns,
                                                                     tc);
    scf::populateSCFStructuralTypeConversionsAndLegality(tc, patterns, target);
    populateElementwisePatterns(tc, patterns, state);
    populateMemoryPatterns(tc, patterns, state);
    populateLayoutOpPatterns(tc, patterns, state);
    populateDotPatterns(tc, patterns, state);
    populateTmaPatterns(tc, patterns, state);
    populateTurnPatterns(tc, patterns, state);
    if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
      return signalPassFailure();

    for (auto &[fn, info] : state.kernels) {
      fn->setAttr(kSharedMemoryAttr,
                  IntegerAttr::get(IntegerType::get(ctx, 64), info.sharedBytes));
      if (int64_t blocks = minBlocksPerSM(llvm::cast<gpu::GPUFuncOp>(fn),
                                          info.sharedBytes))
        fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    IntegerAttr::get(IntegerType::get(ctx, 32), blocks));
    }
  }
};
} // namespace
