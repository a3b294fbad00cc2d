//===- Registration.cpp - dialects, passes and pipelines of tilec ---------===//
#include "lib/Pipeline/Registration.h"

#include "dialects/tile/TileDialect.h"
#include "lib/Conversion/Passes.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void ::tile::registerAllDialects(DialectRegistry &registry) {
  registry.insert<mlir::tile::TileDialect, arith::ArithDialect,
                  func::FuncDialect, scf::SCFDialect, cf::ControlFlowDialect,
                  gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect,
                  vector::VectorDialect, memref::MemRefDialect,
                  math::MathDialect, index::IndexDialect, ub::UBDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

void ::tile::buildTileOptPipeline(OpPassManager &pm) {
  pm.addPass(mlir::tile::createTilePadShapes());
  pm.addPass(mlir::tile::createTileProgramOrder());
  pm.addPass(mlir::tile::createTilePersistent());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(mlir::tile::createTileHoistInvariantLoads());
  pm.addPass(mlir::tile::createTileSinkScale());
  pm.addPass(mlir::tile::createTileFoldScale());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(mlir::tile::createTileCtaSharedLoops());
  pm.addPass(mlir::tile::createTileTmaLoads());
  pm.addPass(mlir::tile::createTileAsyncCopies());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(mlir::tile::createTilePipelineLoads());
  pm.addPass(mlir::tile::createTileSplitMaskedLoops());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(mlir::tile::createTileVersionMasks());
}

void ::tile::buildLayoutPipeline(OpPassManager &pm) {
  pm.addPass(mlir::tile::createTileAssignLayouts());
  pm.addPass(mlir::tile::createTileRemoveLayoutConversions());
  pm.addPass(createCSEPass());
  pm.addPass(mlir::tile::createTileOverlapDots());
  pm.addPass(mlir::tile::createTileAsyncDots());
  pm.addPass(mlir::tile::createTilePingpongDots());
  pm.addPass(mlir::tile::createTileWarpSpecialize());
  pm.addPass(mlir::tile::createTileDynamicPersistent());
}

void ::tile::buildGPUPipeline(OpPassManager &pm) {
  pm.addPass(mlir::tile::createTileGridOffsets());
  pm.addPass(mlir::tile::createConvertTileToGPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void ::tile::buildNVVMPipeline(OpPassManager &pm) {
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions options;
  options.indexBitwidth = 32;
  gpu.addPass(createConvertGpuOpsToNVVMOps(options));
  // No canonicalizer or CSE here: LLVM's passes (lib/Target/PTX.cpp) do the
  // same cleanup, and the PTX of flash_fwd's configurations is
  // byte-identical without them (~10 ms of a compile).
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::tile::createTileTensorMapParams());
  pm.addPass(mlir::tile::createTileLoopAnnotations());
}

void ::tile::registerAllPasses() {
  mlir::tile::registerTileTransformsPasses();
  mlir::tile::registerTileConversionPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSCFToControlFlowPass();
  registerConvertGpuOpsToNVVMOps();
  registerReconcileUnrealizedCastsPass();
  PassPipelineRegistration<>("tile-optimize", "tile stage 3 (transforms)",
                             buildTileOptPipeline);
  PassPipelineRegistration<>("tile-layout", "tile stage 4 (layouts)",
                             buildLayoutPipeline);
  PassPipelineRegistration<>("tile-to-gpu", "tile stage 6a (gpu.func)",
                             buildGPUPipeline);
  PassPipelineRegistration<>("tile-to-nvvm", "tile stage 6b (LLVM + NVVM)",
                             buildNVVMPipeline);
}
