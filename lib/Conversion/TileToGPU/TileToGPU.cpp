//===- TileToGPU.cpp - tile kernels to gpu.func with per-thread code ------===//
//
// Post-conditions: the module is a gpu.container_module; each tile kernel
// is a `gpu.func` kernel in `gpu.module @tile_kernels`, with known block
// size 32 * num_warps (the schedule) (plus a producer warpgroup in warp-specialized
// kernels) and `tile.shared_memory` set; no tile op or type is left
// (pointers are i64 byte addresses).
//
//===----------------------------------------------------------------------===//
#include "dialects/tile/TargetInfo.h"
#include "lib/Conversion/Passes.h"
#include "lib/Conversion/TileToGPU/ThreadLayout.h"
#include "lib/Transforms/GridArgs.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
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
/// min_blocks, lowered to what shared memory allows (228 KiB per SM, 1 KiB
/// reserved per program); 0 (or no such parameter): no hint, ptxas spends
/// registers freely (flash_fwd at D = 64, BM = 64 took 139, so 3 programs
/// per SM, where 127 fit without spills: 4).
int64_t minBlocksPerSM(gpu::GPUFuncOp fn, int64_t sharedBytes) {
  int64_t want = getSchedule(fn).getMinBlocks();
  if (want <= 0)
    return 0;
  const TargetInfo &t = targetInfo("sm_90a"); // min_blocks: sm_90a budgets
  int64_t bySmem = t.sharedPerSM / (sharedBytes + t.sharedReservedPerBlock);
  return std::max<int64_t>(1, std::min<int64_t>(bySmem, want));
}

int64_t warpsOf(Operation *fn) { return getSchedule(fn).getNumWarps(); }

/// The tile.warp_specialize of a kernel, if any: tile-warp-specialize makes
/// it the first op of the body.
WarpSpecializeOp specializeOp(FunctionOpInterface fn) {
  Region &body = fn.getFunctionBody();
  if (body.empty() || body.front().empty())
    return {};
  return dyn_cast<WarpSpecializeOp>(body.front().front());
}

/// cta_programs: the programs a CTA runs (tile-persistent), 1 unless set.
int64_t membersOf(Operation *fn) {
  return std::max<int64_t>(1, getSchedule(fn).getCtaPrograms());
}

/// Moves a tile kernel into the gpu.module as a gpu.func kernel.
/// `extraWarps`: a producer warpgroup's, in warp-specialized kernels.
gpu::GPUFuncOp outline(func::FuncOp fn, gpu::GPUModuleOp gpuModule,
                       int64_t extraWarps) {
  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  auto gfn = gpu::GPUFuncOp::create(b, fn.getLoc(), fn.getName(),
                                    fn.getFunctionType());
  gfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int64_t warps = warpsOf(fn) * membersOf(fn) + extraWarps;
  gfn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(32 * warps), 1, 1}));
  for (StringRef name :
       {kParamsAttr.data(), kScheduleAttr.data(), kGridArgsAttr.data()})
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

/// lane = tid & 31, warp = tid >> 5, at the top of the kernel; with
/// cta_programs = G > 1, warp = (tid >> 5) mod num_warps and member =
/// (tid >> 5) / num_warps (num_warps is a power of two).
KernelInfo threadIds(gpu::GPUFuncOp fn) {
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  Location loc = fn.getLoc();
  Value tid = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(), gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  KernelInfo k;
  k.lane = arith::AndIOp::create(b, loc, tid, i32Const(b, loc, 31));
  k.ctaWarp = k.warp = arith::ShRUIOp::create(b, loc, tid, i32Const(b, loc, 5));
  k.warps = warpsOf(fn);
  k.members = membersOf(fn);
  if (k.members > 1) {
    k.warp = arith::AndIOp::create(b, loc, k.ctaWarp, i32Const(b, loc, k.warps - 1));
    k.member = arith::ShRUIOp::create(b, loc, k.ctaWarp,
                                      i32Const(b, loc, llvm::Log2_64(k.warps)));
    k.scratchStride = arith::ConstantIndexOp::create(b, loc, 0);
  }
  return k;
}

/// Registers per thread of a warp-specialized kernel: at launch (the
/// kernel's `.maxnreg`) and, after `setmaxnreg`, in the producer warpgroup
/// and in the consumer warps; `moved` when the consumers get more than at
/// launch (else no setmaxnreg). `blocks` programs share an SM's 64 K.
struct RegisterSplit {
  // setmaxnreg.inc waits until registers the program got at launch are
  // free, so the split must fit in threads x launch: 8 consumer warps,
  // 384 x 168 = 256 x 240 + 128 x 24 (a producer keeping 32 hung the
  // consumers on an H100); 16, 640 x 96 = 512 x 112 +
  // 128 x 24 (120, counted from the SM's 64 K, hung them).
  int64_t launch, producer = 24, consumer;
  bool moved;
};
RegisterSplit splitRegisters(int64_t consumerWarps, int64_t blocks) {
  const int64_t kRegs = targetInfo("sm_90a").registersPerSM, kMax = 256;
  int64_t threads = 32 * (consumerWarps + kProducerWarps);
  RegisterSplit r;
  r.launch = std::min(kMax, kRegs / blocks / threads / 8 * 8);
  r.consumer = std::min(
      kMax, (threads * r.launch - 32 * kProducerWarps * r.producer) /
                (32 * consumerWarps) / 8 * 8);
  r.moved = r.consumer > r.launch;
  return r;
}

/// Replaces the kernel's tile.warp_specialize by
///   if (warp < warps) { setmaxnreg.inc; consumer }
///   else { setmaxnreg.dec; if (warp == warps) { producer } }
/// (setmaxnreg only where it moves registers; then `.maxnreg` caps the
/// launch). Runs after setupTmaSlots: barrier set-up stays before it.
void splitWarps(gpu::GPUFuncOp fn, WarpSpecializeOp ws, KernelInfo &k) {
  OpBuilder b(ws);
  Location loc = ws.getLoc();
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  int64_t consumerWarps = k.consumerWarps();
  RegisterSplit regs = splitRegisters(
      consumerWarps, std::max<int64_t>(1, getSchedule(fn).getMinBlocks()));
  if (regs.moved)
    fn->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                b.getI32IntegerAttr(std::min<int64_t>(
                    targetInfo("sm_90a").maxRegistersPerThread, regs.launch)));
  auto setmaxnreg = [&](OpBuilder &bb, StringRef dir, int64_t n) {
    if (regs.moved)
      ptx(bb, loc, Type(), ValueRange{},
          ("setmaxnreg." + dir + ".sync.aligned.u32 " + std::to_string(n) + ";")
              .str(),
          "", /*sideEffects=*/true);
  };
  auto split = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k.ctaWarp,
                                    c32(consumerWarps)),
      /*withElseRegion=*/true);
  OpBuilder cb(split.thenBlock()->getTerminator());
  setmaxnreg(cb, "inc", regs.consumer);
  Block &consumer = ws.getConsumer().front();
  split.thenBlock()->getOperations().splice(
      split.thenBlock()->getTerminator()->getIterator(),
      consumer.getOperations());
  OpBuilder pb(split.elseBlock()->getTerminator());
  setmaxnreg(pb, "dec", regs.producer);
  auto first = scf::IfOp::create(
      pb, loc, arith::CmpIOp::create(pb, loc, arith::CmpIPredicate::eq, k.ctaWarp,
                                     i32Const(pb, loc, consumerWarps)),
      /*withElseRegion=*/false);
  Block &producer = ws.getProducer().front();
  first.thenBlock()->getOperations().splice(
      first.thenBlock()->getTerminator()->getIterator(),
      producer.getOperations());
  ws.erase();
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
    annotateVectorAccesses(module, /*vectorRed=*/state.arch == "sm_90a");
    annotateReadsAfterWrites(module);

    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), kGpuModuleName);
    for (func::FuncOp fn : kernels) {
      WarpSpecializeOp ws = specializeOp(fn); // found before outlining
      gpu::GPUFuncOp gfn = outline(fn, gpuModule, ws ? kProducerWarps : 0);
      KernelInfo &k = state.kernels[gfn] = threadIds(gfn);
      k.specialized = bool(ws);
      if (k.members > 1 && !ws) {
        gfn.emitError("cta_programs > 1 needs a producer warpgroup "
                      "(producer = true, sm_90a, TMA copies)");
        return signalPassFailure();
      }
      if (failed(setupTmaSlots(gfn, k)) ||
          failed(setupPrograms(gfn, k, state.arch)) ||
          failed(setupAsyncSlots(gfn, k)))
        return signalPassFailure();
      if (ws)
        splitWarps(gfn, ws, k);
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
    target.addIllegalOp<math::FmaOp>(); // scalar fma(): fma.rn, no libdevice
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
    populateIntPatterns(tc, patterns, state);
    populateMemoryPatterns(tc, patterns, state);
    populateLayoutOpPatterns(tc, patterns, state);
    populateReducePatterns(tc, patterns, state);
    populateDotPatterns(tc, patterns, state);
    populateTmaPatterns(tc, patterns, state);
    populateTurnPatterns(tc, patterns, state);
    populateAsyncPatterns(tc, patterns, state);
    populateProgramPatterns(tc, patterns, state);
    populateScalarPatterns(tc, patterns, state);
    if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
      return signalPassFailure();

    for (auto &[fn, info] : state.kernels) {
      if (info.members > 1) {
        // Each program of the CTA gets its own shared temporaries.
        int64_t stride = (info.sharedBytes - info.persistentBytes + 127) / 128 * 128;
        info.scratchStride.getDefiningOp()->setAttr(
            "value", IntegerAttr::get(IndexType::get(ctx), stride));
        info.sharedBytes = info.persistentBytes + info.members * stride;
      }
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
