//===- ThreadLayout.h - per-thread view of laid-out tiles ---------*- C++ -*-===//
//
// Shared by the TileToGPU patterns: a laid-out tile is, in each thread, a
// vector of the elements that thread holds (register i of the layout is
// vector element i). These helpers compute which tile coordinates a thread
// holds, reach shared memory and emit PTX through inline assembly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/tile/TileLayout.h"
#include "lib/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile::lowering {

/// Integer attribute on loads and stores: elements per vector access.
inline constexpr llvm::StringLiteral kVectorAttr = "tile.vec";

/// Unit attribute on loads that may read what their kernel wrote before
/// them: lowered as asm with side effects (ReadsAfterWrites.cpp).
inline constexpr llvm::StringLiteral kAfterWriteAttr = "tile.after_write";

/// Sets kAfterWriteAttr on the loads of each kernel in `root` that may run
/// after one of its global writes.
void annotateReadsAfterWrites(Operation *root);

/// Unit attribute on an atomic_add whose old values nobody reads: lowered as
/// `red` (no returned value, no wait for the memory system's answer).
inline constexpr llvm::StringLiteral kReductionAttr = "tile.red";

/// Sets kVectorAttr on the loads and stores of `root` whose addresses are
/// contiguous, aligned and uniformly masked over a thread's leading
/// registers (see AxisAnalysis), and kReductionAttr on its atomic_adds
/// whose results are unused; with `vectorRed` (sm_90: `red.global.add.v2/
/// .v4.f32`) such f32 atomic_adds get kVectorAttr as stores do.
void annotateVectorAccesses(Operation *root, bool vectorRed);

/// A shared-memory slot that bulk tensor copies (tile.tma_copy) fill.
struct TmaSlot {
  Value buffer;  ///< i32 shared address of stage 0 (1024-byte aligned)
  int64_t stageBytes = 0; ///< stage s is s * stageBytes after stage 0
  int64_t stages = 2;     ///< number of stages (tile.tma_copy `stages`)
  /// Elements of a box row (its contiguous dimension): the copies' box,
  /// which may stop short of the tile a wait yields (a padded tile's
  /// unused slabs are not in the slot).
  int64_t rowElems = 0;
  Value barrier; ///< i32 shared address of stage 0's "full" mbarrier (+8 per stage)
  Value empty;   ///< i32 shared address of stage 0's "empty" mbarrier (+8 per
                 ///< stage; see hasEmpty)
  /// Whether the slot has empty barriers: rings of three or more stages,
  /// and of two in warp-specialized kernels.
  bool hasEmpty = false;
  /// Buffers (and full barriers) per stage: 1, or in a one-stage slot of a
  /// kernel with cta_programs > 1 one per program of the CTA, whose
  /// tile.cta_member (`member`) then picks its own in place of the stage.
  int64_t members = 1;
  Value member;
  Value map;     ///< i64 generic address of its tensor map (a kernel parameter)
  /// i32 addresses of stage `stage` (an i32 value in [0, stages); with
  /// members > 1, of this program's buffer).
  Value bufferOf(OpBuilder &b, Location loc, Value stage) const;
  Value barrierOf(OpBuilder &b, Location loc, Value stage) const;
  Value emptyOf(OpBuilder &b, Location loc, Value stage) const;
  /// The buffer of a tile.tma_store (no barriers: its thread waits for
  /// its copies).
  bool store = false;
  /// Full barriers, then (hasEmpty) empty ones.
  int64_t numBarriers() const {
    return store ? 0 : hasEmpty ? 2 * stages : stages * members;
  }
};

/// A shared-memory ring that cp.async copies (tile.async_copy) fill, in
/// the persistent part of dynamic shared memory after the TMA slots.
struct AsyncSlot {
  Value buffer;           ///< i32 shared address of stage 0 (128-byte aligned)
  int64_t stageBytes = 0; ///< stage s is s * stageBytes after stage 0
  int64_t rowElems = 0;   ///< elements from one row to the next (padded)
  int64_t innerDim = 0;   ///< the tile dimension that runs along a row
  /// i32 address of stage `stage` (an i32 value in [0, stages)).
  Value bufferOf(OpBuilder &b, Location loc, Value stage) const;
};

/// Per-kernel values created at the top of each gpu.func.
struct KernelInfo {
  Value lane;   ///< i32 lane id in [0, 32)
  Value warp;   ///< i32 warp id: [0, num_warps) in the code of tiles
  Value ctaWarp; ///< i32 warp id in the CTA (= warp unless members > 1)
  int64_t warps = 4;            ///< the schedule's num_warps: the warps of one program
  /// cta_programs: programs run by the CTA's consumer warps, `warps` warps
  /// each (warps `member * warps` ...); > 1 only in warp-specialized kernels.
  int64_t members = 1;
  Value member;        ///< i32 program index in the CTA: ctaWarp / warps
  Value scratchStride; ///< index: bytes of shared temporaries per member,
                       ///< set once the conversion has sized them
  /// Warps that hold tiles: all programs' (the producer warpgroup follows).
  int64_t consumerWarps() const { return warps * members; }
  /// Warp-specialized (tile.warp_specialize): one more warpgroup, warps
  /// `warps` .. `warps + 3`, issues the TMA copies; CTA barriers after the
  /// split are named barriers of the `warps` consumer warps (ctaBarrier).
  bool specialized = false;
  Value isFirstThread;          ///< i32: 1 in thread 0, else 0
  int64_t sharedBytes = 0;      ///< dynamic shared memory needed so far
  int64_t persistentBytes = 0;  ///< bytes before the temporary buffers
  SmallVector<TmaSlot> slots;   ///< by tile.tma_copy `slot`
  SmallVector<AsyncSlot> asyncSlots; ///< by tile.async_copy `slot`
  Value programCounters;        ///< i64 global address (tile.program_ticket)
  Value programWord;            ///< i32 shared address (tile.share_program)
};

/// Kernels of the module being converted, by gpu.func.
struct LoweringState {
  llvm::DenseMap<Operation *, KernelInfo> kernels;
  std::string arch = "sm_80"; ///< target: sm_80 or sm_90a
  KernelInfo &of(Operation *op);
};

/// The per-thread vector type of a laid-out tile (pointers become i64).
VectorType threadVectorType(TileType t);
/// Element type a tile element has inside a thread.
Type threadElementType(Type tileElement);
/// Byte size of a tile element in memory (pointee of a pointer tile).
int64_t byteSize(Type t);

/// Bit `i` of the i32 `id` (a lane or warp index): (id >> i) & 1.
Value bitOf(OpBuilder &b, Location loc, Value id, unsigned i);

/// i32 scalar: the part of coordinate `dim` contributed by the lane and warp.
Value threadCoord(OpBuilder &b, Location loc, KernelInfo &k, LayoutAttr l,
                  unsigned dim);
/// Coordinate `dim` of register `reg` in this thread (i32 scalar).
Value elementCoord(OpBuilder &b, Location loc, Value threadPart, LayoutAttr l,
                   int64_t reg, unsigned dim);
/// i1: this thread is the first of the threads holding the same elements
/// (replicated layouts), so side effects happen once.
Value isOwner(OpBuilder &b, Location loc, KernelInfo &k, LayoutAttr l);

/// Linear index of register `reg` over `shape`, row-major with dimension
/// `minor` moved last (the contiguous one; default the last) and rows
/// `rowStride` elements apart (default dense), as an index.
Value linearIndex(OpBuilder &b, Location loc, ArrayRef<Value> threadPart,
                  LayoutAttr l, int64_t reg, ArrayRef<int64_t> shape,
                  int64_t minor = -1, int64_t rowStride = 0);
/// threadCoord of every dimension of `l`.
SmallVector<Value> threadParts(OpBuilder &b, Location loc, KernelInfo &k,
                               LayoutAttr l);

/// Elements one shared-memory access of `l`'s registers can move when
/// dimension `last` is the buffer's contiguous one: its leading registers
/// along it, up to 16 bytes, when every other basis keeps those groups
/// aligned (a multiple of the group along that dimension) and the group is
/// at least 4 bytes; else 1. One st/ld.shared.v4 in place of eight 2-byte
/// accesses.
int64_t sharedVectorWidth(LayoutAttr l, int64_t eltBytes, unsigned last);

/// A view of dynamic shared memory as `numElems` elements of `elemType`;
/// records the size in `k`.
Value sharedBuffer(OpBuilder &b, Location loc, KernelInfo &k, Type elemType,
                   int64_t numElems);

/// i32 holding two 16-bit values (`lo` in the low half), as mma and wgmma
/// take fragments and st.shared.v4.b32 stores them.
Value packPair(OpBuilder &b, Location loc, Type elt, Value lo, Value hi);

/// Vector <-> scalars.
SmallVector<Value> unpack(OpBuilder &b, Location loc, Value vec);
Value pack(OpBuilder &b, Location loc, VectorType t, ArrayRef<Value> elems);
/// Elements `vals` (of type `elt`, 32 * `words` bits in all) as `words`
/// 32-bit words, element 0 in the low bits of word 0; and back.
SmallVector<Value> toWords(OpBuilder &b, Location loc, ArrayRef<Value> vals,
                           Type elt, int64_t words);
SmallVector<Value> fromWords(OpBuilder &b, Location loc, ArrayRef<Value> words,
                             Type elt, int64_t vec);

/// fp8 (f8E4M3FN, f8E5M2) <-> f32 on a thread's register vector: narrowing
/// rounds to nearest even, saturates to the largest finite value, keeps
/// NaN. `hardware`: sm_90a's cvt (sm_89+); else integer arithmetic on the
/// bits with the same results (Fp8ToGPU.cpp).
Value fp8ToF32(OpBuilder &b, Location loc, Value x, Type fp8, bool hardware);
Value f32ToFp8(OpBuilder &b, Location loc, Value x, Type fp8, bool hardware);
/// A thread's vector `x` of `from` as `vt` (element `to`), one side fp8:
/// through f32 (exact for every fp8 value).
Value castFp8(OpBuilder &b, Location loc, Value x, Type from, Type to,
              VectorType vt, bool hardware);
/// The registers `vals` (8-bit elements, layout `src`) moved to `dst` where
/// src is the accumulator layout and dst the 8-bit A fragment
/// (getFp8DotALayout): quad shuffles, no shared memory. nullopt for other
/// layouts.
std::optional<SmallVector<Value>>
accumulatorToFp8A(OpBuilder &b, Location loc, KernelInfo &k,
                  ArrayRef<Value> vals, Type elt, LayoutAttr src,
                  LayoutAttr dst);

/// Inline PTX returning `result` (null for none).
Value ptx(OpBuilder &b, Location loc, Type result, ValueRange operands,
          StringRef asmText, StringRef constraints, bool sideEffects = false);

/// i32 / i64 constants.
Value i32Const(OpBuilder &b, Location loc, int64_t v);

/// A barrier of every warp of the program: gpu.barrier, or in
/// warp-specialized kernels named barrier kConsumerBarrier + member of the
/// program's warps (the producer warpgroup never reaches it).
void ctaBarrier(OpBuilder &b, Location loc, const KernelInfo &k);
inline constexpr int64_t kConsumerBarrier = 3; // 1 and 2: ping-pong turns
/// Named barriers kStoreBarrier + g: warpgroup g's tile.tma_store.
inline constexpr int64_t kStoreBarrier = 8;

/// Producer warps of a warp-specialized kernel (one warpgroup).
inline constexpr int64_t kProducerWarps = 4;

/// i32: 1 in lane 0 of each warp.
Value isLane0(OpBuilder &b, Location loc, KernelInfo &k);
/// k.isFirstThread (i32: 1 in thread 0), made after k.warp at its first use.
Value firstThread(KernelInfo &k);
/// i32 shared-memory address of the start of dynamic shared memory.
Value dynamicSharedBase(OpBuilder &b, Location loc);

/// Sets up the shared-memory slots, barriers and tensor-map parameters of
/// the tile.tma_copy ops of `fn` (appending one parameter per slot) at
/// the top of the kernel.
LogicalResult setupTmaSlots(gpu::GPUFuncOp fn, KernelInfo &k);

/// Sets up the shared-memory rings of the tile.async_copy ops of `fn`
/// (AsyncToGPU.cpp), after the TMA slots and the programs' words.
LogicalResult setupAsyncSlots(gpu::GPUFuncOp fn, KernelInfo &k);

/// Sets up the ticket counters (a module global) and the shared word and
/// mbarriers of the dynamic persistent order (ProgramsToGPU.cpp), after
/// the TMA slots; `arch`: sm_80 or sm_90a.
LogicalResult setupPrograms(gpu::GPUFuncOp fn, KernelInfo &k, StringRef arch);

/// Register of a 2-D layout by its register coordinates (regCoords), -1 for
/// none.
struct RegIndex {
  llvm::DenseMap<int64_t, int64_t> map;
  explicit RegIndex(LayoutAttr l);
  int64_t at(int64_t row, int64_t col) const;
};

/// sm_90a: lowers `op` (f16/bf16) to wgmma with A (`a`) and the accumulator
/// (`acc`) in registers and B (`b`) staged in swizzled shared memory, or
/// read in place when it comes from tile.tma_wait. nullopt, emitting
/// nothing, when the layouts do not fit a warpgroup and B is in registers.
/// `wgmma.wait_group pending` with the f32 accumulators `acc` threaded
/// through it; returns them as they are after the wait.
SmallVector<Value> waitForWgmma(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                                int64_t pending);

std::optional<LogicalResult> lowerDotToWgmma(DotOp op, Value a, Value b,
                                             Value acc,
                                             ConversionPatternRewriter &rw,
                                             KernelInfo &ki);

/// Adds the patterns of each file.
void populateElementwisePatterns(TypeConverter &tc, RewritePatternSet &p,
                                 LoweringState &s);
void populateIntPatterns(TypeConverter &tc, RewritePatternSet &p,
                         LoweringState &s);
void populateMemoryPatterns(TypeConverter &tc, RewritePatternSet &p,
                            LoweringState &s);
void populateReducePatterns(TypeConverter &tc, RewritePatternSet &p,
                            LoweringState &s);
void populateLayoutOpPatterns(TypeConverter &tc, RewritePatternSet &p,
                              LoweringState &s);
void populateDotPatterns(TypeConverter &tc, RewritePatternSet &p,
                         LoweringState &s);
void populateTmaPatterns(TypeConverter &tc, RewritePatternSet &p,
                         LoweringState &s);
void populateProgramPatterns(TypeConverter &tc, RewritePatternSet &p,
                             LoweringState &s);
void populateAsyncPatterns(TypeConverter &tc, RewritePatternSet &p,
                           LoweringState &s);
void populateTurnPatterns(TypeConverter &tc, RewritePatternSet &p,
                          LoweringState &s);
void populateScalarPatterns(TypeConverter &tc, RewritePatternSet &p,
                            LoweringState &s);

/// Base for the patterns: a converter plus the shared lowering state.
template <typename Op>
struct TilePattern : public OpConversionPattern<Op> {
  TilePattern(TypeConverter &tc, MLIRContext *ctx, LoweringState &s)
      : OpConversionPattern<Op>(tc, ctx), state(s) {}
  KernelInfo &kernel(Operation *op) const { return state.of(op); }
  LoweringState &state;
};

/// The layout of a tile-typed value (asserted present).
inline LayoutAttr layoutOf(Value v) {
  return cast<TileType>(v.getType()).getLayout();
}
inline LayoutAttr layoutOf(Type t) { return cast<TileType>(t).getLayout(); }

} // namespace mlir::tile::lowering
