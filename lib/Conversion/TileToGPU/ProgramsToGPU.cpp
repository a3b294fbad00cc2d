//===- ProgramsToGPU.cpp - tile.program_ticket / tile.share_program -------===//
//
// The dynamic order of persistent kernels (tile-dynamic-persistent), and
// tile.cta_member (cta_programs).
//
// Tickets: each kernel that takes them gets a module global of two i32
// counters, zero when the module is loaded: [0] the next ticket, [1] the
// programs that took a ticket >= total (their last). The publishing thread
// adds 1 to [0]; on its last ticket it adds 1 to [1] (acq_rel), and the
// program that makes [1] equal to the launch's program count stores 0 to
// both: every program has taken its last ticket then, so the next launch
// (after this one, in stream order) starts from 0. Launches of one loaded
// kernel must therefore not overlap (concurrent streams): they would share
// the counters.
//
// Sharing: 32 bytes of dynamic shared memory after the TMA slots hold the
// published word, a "full" mbarrier (one arrival: the publisher's) and an
// "empty" one (one arrival per thread that reads: the kernel's warps, plus
// the producer warp in warp-specialized kernels). Publication n: the
// publisher waits until every reader arrived for n - 1 (empty phase
// parity), stores the word and arrives on full; every thread waits for
// full's phase n, loads the word and arrives on empty.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
constexpr int64_t kProgramsBytes = 128; // word, full, empty (keeps alignment)
constexpr int64_t kFullOffset = 8, kEmptyOffset = 16; // the mbarriers

/// i32 shared address `offset` bytes into the kernel's program word area.
Value programSlot(OpBuilder &b, Location loc, KernelInfo &k, int64_t offset) {
  return arith::AddIOp::create(b, loc, k.programWord, i32Const(b, loc, offset));
}

/// i32: 1 in the thread that takes and publishes tickets (thread 0, or lane
/// 0 of the producer warp: only that warp runs the producer region).
Value publisherThread(OpBuilder &b, Location loc, KernelInfo &ki) {
  return ki.specialized ? isLane0(b, loc, ki) : ki.isFirstThread;
}

struct ProgramTicketLowering : TilePattern<ProgramTicketOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ProgramTicketOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    if (!ki.programCounters)
      return op.emitError("program_ticket without the kernel's counters");
    Value launched = arith::IndexCastUIOp::create(
        rw, loc, rw.getI32Type(),
        gpu::GridDimOp::create(rw, loc, gpu::Dimension::x));
    Value lastDone = arith::SubIOp::create(rw, loc, launched, i32Const(rw, loc, 1));
    Value t = ptx(rw, loc, rw.getI32Type(),
                  ValueRange{publisherThread(rw, loc, ki), ki.programCounters,
                             a.getTotal(), lastDone},
                  "{\n.reg .pred p, last;\n.reg .b32 d;\n"
                  "setp.ne.b32 p, $1, 0;\nmov.b32 $0, 0;\n"
                  "@p atom.global.add.u32 $0, [$2], 1;\n"
                  "@p setp.ge.s32 p, $0, $3;\n"
                  "@p atom.acq_rel.gpu.global.add.u32 d, [$2+4], 1;\n"
                  "setp.eq.and.u32 last, d, $4, p;\n"
                  "@last st.global.v2.u32 [$2], {0, 0};\n}",
                  "=r,r,l,r,r", /*sideEffects=*/true);
    rw.replaceOp(op, t);
    return success();
  }
};

struct ShareProgramLowering : TilePattern<ShareProgramOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ShareProgramOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    KernelInfo &ki = kernel(op);
    if (!ki.programWord)
      return op.emitError("share_program without the kernel's shared word");
    auto c32 = [&](int64_t v) { return i32Const(rw, loc, v); };
    Value pub = op.getPublisher() ? publisherThread(rw, loc, ki) : c32(0);
    Value full = programSlot(rw, loc, ki, kFullOffset);
    Value empty = programSlot(rw, loc, ki, kEmptyOffset);
    Value parity = arith::AndIOp::create(rw, loc, a.getSeq(), c32(1));
    Value freeParity = arith::XOrIOp::create(rw, loc, parity, c32(1));
    // sm_80 has test_wait (no try_wait) and no `_` sink for the arrival
    // state.
    bool sm90 = state.arch == "sm_90a";
    std::string wait = sm90 ? "mbarrier.try_wait.parity.shared::cta.b64"
                            : "mbarrier.test_wait.parity.shared.b64";
    std::string arrive = sm90 ? "mbarrier.arrive.shared::cta.b64 _, "
                              : "mbarrier.arrive.shared.b64 st, ";
    Value t = ptx(
        rw, loc, rw.getI32Type(),
        ValueRange{pub, a.getTicket(), ki.programWord, empty, freeParity, full,
                   parity},
        "{\n.reg .pred p, ok;\n" + std::string(sm90 ? "" : ".reg .b64 st;\n") +
            "setp.ne.b32 p, $1, 0;\n"
        "@!p bra PROG_READ_${:uid};\n"
        "PROG_FREE_${:uid}:\n" +
            wait + " ok, [$4], $5;\n"
                   "@!ok bra PROG_FREE_${:uid};\n"
                   "st.shared.b32 [$3], $2;\n" +
            arrive + "[$6];\n"
                     "PROG_READ_${:uid}:\n" +
            wait + " ok, [$6], $7;\n"
                   "@!ok bra PROG_READ_${:uid};\n"
                   "ld.shared.b32 $0, [$3];\n" +
            arrive + "[$4];\n}",
        "=r,r,r,r,r,r,r,r", /*sideEffects=*/true);
    // The persistent loop's metadata, for its latch (tile-loop-annotations).
    if (Attribute l = op->getAttr(kLoopAnnotationAttr))
      t.getDefiningOp()->setAttr(kLoopAnnotationAttr, l);
    rw.replaceOp(op, t);
    return success();
  }
};
/// The program's index in its CTA (cta_programs): its warps' block of the
/// consumer warps.
struct CtaMemberLowering : TilePattern<CtaMemberOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(CtaMemberOp op, OpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    KernelInfo &ki = kernel(op);
    rw.replaceOp(op, ki.members > 1 ? ki.member : i32Const(rw, op.getLoc(), 0));
    return success();
  }
};
} // namespace

LogicalResult lowering::setupPrograms(gpu::GPUFuncOp fn, KernelInfo &k,
                                      StringRef arch) {
  bool tickets = false, shares = false;
  fn.walk([&](Operation *op) {
    tickets |= isa<ProgramTicketOp>(op);
    shares |= isa<ShareProgramOp>(op);
  });
  if (!shares && !tickets)
    return success();
  Location loc = fn.getLoc();
  MLIRContext *ctx = fn.getContext();
  // After thread 0's flag (before the TMA set-up, if any).
  OpBuilder b(ctx);
  b.setInsertionPointAfterValue(firstThread(k));
  if (tickets) {
    auto gpuModule = fn->getParentOfType<gpu::GPUModuleOp>();
    OpBuilder gb = OpBuilder::atBlockBegin(gpuModule.getBody());
    auto i64 = gb.getI64Type();
    auto global = LLVM::GlobalOp::create(
        gb, loc, i64, /*isConstant=*/false, LLVM::Linkage::Internal,
        ("__tile_programs_" + fn.getName()).str(), gb.getI64IntegerAttr(0),
        /*alignment=*/8, /*addrSpace=*/1);
    Value addr = LLVM::AddressOfOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 1), global.getSymName());
    k.programCounters = LLVM::PtrToIntOp::create(b, loc, i64, addr);
  }
  if (!shares)
    return success();
  k.programWord = arith::AddIOp::create(b, loc, dynamicSharedBase(b, loc),
                                        i32Const(b, loc, k.persistentBytes));
  k.persistentBytes += kProgramsBytes;
  k.sharedBytes = std::max(k.sharedBytes, k.persistentBytes);
  // Thread 0 initialises the barriers; everyone sees them after the barrier.
  int64_t readers = 32 * (k.consumerWarps() + (k.specialized ? 1 : 0));
  bool sm90 = arch == "sm_90a";
  std::string space = sm90 ? "::cta" : "";
  ptx(b, loc, Type(),
      ValueRange{k.isFirstThread, programSlot(b, loc, k, kFullOffset),
                 programSlot(b, loc, k, kEmptyOffset)},
      "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n"
      "@p mbarrier.init.shared" + space + ".b64 [$1], 1;\n"
      "@p mbarrier.init.shared" + space + ".b64 [$2], " + std::to_string(readers) +
          ";\n" + (sm90 ? "@p fence.mbarrier_init.release.cluster;\n" : "") + "}",
      "r,r,r", /*sideEffects=*/true);
  gpu::BarrierOp::create(b, loc);
  return success();
}

void lowering::populateProgramPatterns(TypeConverter &tc, RewritePatternSet &p,
                                       LoweringState &s) {
  p.add<ProgramTicketLowering, ShareProgramLowering, CtaMemberLowering>(
      tc, p.getContext(), s);
}
