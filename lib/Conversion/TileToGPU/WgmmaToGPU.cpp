//===- WgmmaToGPU.cpp - tile.dot as sm_90a wgmma ---------------------------===//
//
// On sm_90a a warpgroup (4 consecutive warps) multiplies 64 x N x 16 with
// one asynchronous `wgmma.mma_async`: A comes from registers in the same
// fragment layout mma.sync uses (so P still never leaves registers) or, read
// in place from a TMA slot (K contiguous), through a descriptor; B from
// shared memory through a matrix descriptor, the accumulator is the
// mma.sync C layout repeated over N. The accumulator layout of
// tile-assign-layouts puts warp w on rows 16w.. of each 64-row block, which
// is what wgmma wants; other layouts fall back to mma.sync.
//
// B is written to shared memory in the 128-byte swizzled layout the
// descriptor names (WgmmaOperands.cpp), and wgmma reads it directly.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/WgmmaOperands.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// Lane and warp bases of the layouts wgmma accepts: the mma.sync C
/// fragment on lanes, warps 0-3 of a warpgroup on rows 0, 16, 32, 48 and
/// further warps on rows (other warpgroups take other 64-row blocks).
bool fitsWarpgroup(LayoutAttr l) {
  static const int64_t lanes[] = {0, 2, 0, 4, 1, 0, 2, 0, 4, 0};
  if (l.getRank() != 2 || !llvm::equal(l.getLanes(), lanes) ||
      l.getNumWarpBits() < 2)
    return false;
  ArrayRef<int64_t> w = l.getWarps();
  if (w[0] != 16 || w[1] != 0 || w[2] != 32 || w[3] != 0)
    return false;
  for (unsigned i = 2; i < l.getNumWarpBits(); ++i)
    if (w[2 * i] % 64 != 0 || w[2 * i + 1] != 0)
      return false;
  return true;
}

} // namespace

/// i32 pair of 16-bit values, as wgmma takes A fragments.
Value lowering::packPair(OpBuilder &b, Location loc, Type elt, Value lo,
                         Value hi) {
  Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, elt),
                                           ValueRange{lo, hi});
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
}

namespace {
/// Shared address of the stage a tma_wait names (the dot reads it in place).
FailureOr<Value> slotBuffer(DotOp op, TmaWaitOp wait,
                            ConversionPatternRewriter &rw, KernelInfo &ki) {
  if (int64_t(wait.getSlot()) >= int64_t(ki.slots.size()))
    return op.emitError("dot reads a TMA slot without shared memory");
  return ki.slots[wait.getSlot()].bufferOf(
      rw, op.getLoc(), rw.getRemappedValue(wait.getStage()));
}

/// Whether `v` is a constant (also as an element of a vector built from
/// elements): no wgmma writes it, so it need not wait, nor hold a register.
bool isConstantLane(Value v) {
  if (auto ex = v.getDefiningOp<vector::ExtractOp>())
    if (auto from = ex.getSource().getDefiningOp<vector::FromElementsOp>();
        from && ex.getDynamicPosition().empty() &&
        ex.getStaticPosition().size() == 1)
      v = from.getElements()[ex.getStaticPosition()[0]];
  return matchPattern(v, m_Constant());
}
} // namespace

SmallVector<Value> lowering::waitForWgmma(OpBuilder &b, Location loc,
                                          ArrayRef<Value> all, int64_t pending) {
  // The accumulators pass through the wait, so nothing reads them before it
  // (constants, such as the padded columns of a product, stay as they are).
  SmallVector<Value> acc;
  for (Value v : all)
    if (!isConstantLane(v))
      acc.push_back(v);
  int64_t total = acc.size();
  std::string cons;
  for (int64_t i = 0; i < total; ++i)
    cons += "=f,";
  for (int64_t i = 0; i < total; ++i)
    cons += (i ? "," : "") + std::to_string(i);
  auto f32 = b.getF32Type();
  auto allTy = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                SmallVector<Type>(total, f32));
  Value waited = ptx(b, loc, allTy, acc,
                     "wgmma.wait_group.sync.aligned " + std::to_string(pending) +
                         ";",
                     cons, /*sideEffects=*/true);
  SmallVector<Value> out;
  int64_t next = 0;
  for (Value v : all)
    out.push_back(isConstantLane(v)
                      ? v
                      : Value(LLVM::ExtractValueOp::create(b, loc, waited, next++)));
  return out;
}

std::optional<LogicalResult>
lowering::lowerDotToWgmma(DotOp op, Value a, Value bv, Value acc,
                          ConversionPatternRewriter &rw, KernelInfo &ki) {
  // B already in a TMA slot (tile-tma-loads checked that this dot fits).
  auto fromSlot = op.getB().getDefiningOp<TmaWaitOp>();
  auto aSlot = op.getA().getDefiningOp<TmaWaitOp>(); // K-major, in place
  bool fp8 = isFp8(cast<TileType>(op.getB().getType()).getElementType());
  auto misfit = [&]() -> std::optional<LogicalResult> {
    if (fp8) // tile-assign-layouts kept it for wgmma only
      return op.emitError("fp8 dot does not fit wgmma k32");
    if (!fromSlot && !aSlot)
      return std::nullopt; // mma.sync instead
    return op.emitError("dot reading a TMA slot does not fit wgmma");
  };
  Location loc = op.getLoc();
  LayoutAttr la = layoutOf(op.getA()), lb = layoutOf(op.getB()),
             lc = layoutOf(op.getAcc());
  auto tb = cast<TileType>(op.getB().getType());
  auto tc = cast<TileType>(op.getAcc().getType());
  Type elt = tb.getElementType();
  int64_t kSize = tb.getDimSize(0), nSize = tb.getDimSize(1),
          mSize = tc.getDimSize(0);
  // fp8: k32 steps, one byte per element, both operands K-major.
  int64_t eltBytes = byteSize(elt), kStep = fp8 ? 32 : 16;
  int64_t slabElems = kSwizzleBytes / eltBytes; // one swizzle row
  // B is stored along the dimension its registers run along (K-major when
  // they run along K, else N-major with the descriptor's transpose bit);
  // fp8 always K-major.
  bool kMajor = fromSlot ? fromSlot.getInnerDim() == 0
                         : fp8 || leadingRegsAlong(lb, 0) > 1;
  unsigned inner = kMajor ? 0 : 1;
  int64_t innerSize = tb.getDimSize(inner), outerSize = tb.getDimSize(1 - inner);
  // The A fragment: fp8's has whole rows of 4 consecutive k per register
  // (getFp8DotALayout), 16-bit types' the accumulator layout.
  auto aFits = [&] {
    if (!fp8)
      return fitsWarpgroup(la);
    return la == getFp8DotALayout(op.getContext(),
                                  cast<TileType>(op.getA().getType()).getShape(),
                                  ki.warps);
  };
  if ((!aSlot && (!aFits() || !llvm::equal(la.getWarps(), lc.getWarps()))) ||
      !fitsWarpgroup(lc) || mSize < 64 || (fp8 && !kMajor) ||
      nSize % 8 != 0 || nSize > 256 || kSize % kStep != 0 ||
      innerSize % slabElems != 0 || outerSize % 8 != 0)
    return misfit();
  RegIndex ia(la), ic(lc);
  // The 64-row blocks this warpgroup holds in registers (row offsets).
  SmallVector<int64_t> blocks;
  for (int64_t m0 = 0; m0 < mSize; m0 += 64)
    if (ic.at(m0, 0) >= 0)
      blocks.push_back(m0);
  // Accumulator register i of a block: rows +8 every 2, columns +8 every 4.
  SmallVector<SmallVector<int64_t>> accRegs, aRegs;
  for (int64_t m0 : blocks) {
    SmallVector<int64_t> regs;
    for (int64_t i = 0; i < nSize / 2; ++i)
      regs.push_back(ic.at(m0 + 8 * ((i >> 1) & 1), (i & 1) + 8 * (i >> 2)));
    for (int64_t k0 = 0; k0 < kSize && !aSlot; k0 += kStep) {
      SmallVector<int64_t> ar = {ia.at(m0, k0),         ia.at(m0, k0 + 1),
                                 ia.at(m0 + 8, k0),     ia.at(m0 + 8, k0 + 1),
                                 ia.at(m0, k0 + 8),     ia.at(m0, k0 + 9),
                                 ia.at(m0 + 8, k0 + 8), ia.at(m0 + 8, k0 + 9)};
      if (fp8) { // a0..a15: row +8 for bit 2, k +1, +2 for bits 0-1, +16 bit 3
        ar.clear();
        for (int64_t i = 0; i < 16; ++i)
          ar.push_back(ia.at(m0 + 8 * ((i >> 2) & 1),
                             k0 + (i & 3) + 16 * (i >> 3)));
      }
      if (llvm::is_contained(ar, -1))
        return misfit();
      aRegs.push_back(ar);
    }
    if (llvm::is_contained(regs, -1))
      return misfit();
    accRegs.push_back(regs);
  }
  if (blocks.empty() ||
      int64_t(blocks.size()) * nSize / 2 != lc.getNumRegs())
    return misfit();

  // --- B to shared memory, swizzled, 16 bytes per store where the layout
  // gives a thread 16 consecutive bytes (unless a TMA slot holds it).
  Value base;
  if (fromSlot) {
    FailureOr<Value> at = slotBuffer(op, fromSlot, rw, ki);
    if (failed(at))
      return failure();
    base = *at;
  } else {
    base = storeSwizzled(rw, loc, ki, elt, lb, bv, kMajor, outerSize,
                         kSize * nSize);
  }

  // --- Descriptors (`descriptor`): B's k step k0 in its slabs.
  int64_t slabBytes = outerSize * kSwizzleBytes;
  auto descAt = [&](int64_t k0) {
    int64_t off = kMajor ? (k0 / slabElems) * slabBytes +
                               (k0 % slabElems) * eltBytes
                         : k0 * kSwizzleBytes;
    return wgmmaDescriptor(rw, loc, base, off, kMajor ? 16 : slabBytes);
  };

  // A in a slot (K-major, like B above): 64-element slabs of M rows; the
  // block at row m0 of this warpgroup (whose rows start where the warp bits
  // past the first two of the accumulator layout put them) starts that many
  // 128-byte rows into each slab.
  Value aBase;
  if (aSlot) {
    FailureOr<Value> at = slotBuffer(op, aSlot, rw, ki);
    if (failed(at))
      return failure();
    aBase = *at;
    ArrayRef<int64_t> w = lc.getWarps();
    for (unsigned i = 2; i < lc.getNumWarpBits(); ++i) {
      Value bit = bitOf(rw, loc, ki.warp, i);
      aBase = arith::AddIOp::create(
          rw, loc, aBase,
          arith::MulIOp::create(rw, loc, bit,
                                i32Const(rw, loc, w[2 * i] * kSwizzleBytes)));
    }
  }
  auto aDescAt = [&](int64_t m0, int64_t k0) {
    int64_t off = (k0 / slabElems) * mSize * kSwizzleBytes +
                  m0 * kSwizzleBytes + (k0 % slabElems) * eltBytes;
    return wgmmaDescriptor(rw, loc, aBase, off, 16);
  };

  // --- The multiply: one wgmma per (64-row block, k step of 16).
  SmallVector<Value> av, cv = unpack(rw, loc, acc);
  if (!aSlot)
    av = unpack(rw, loc, a);
  NVVM::WgmmaFenceAlignedOp::create(rw, loc);
  std::string ty = elt.isBF16() ? "bf16"
                   : fp8 ? fp8Name(elt).drop_front(2).str() // e4m3, e5m2
                         : "f16";
  // fp8 has no transpose immediates (both operands K-major).
  // Padding past `n_used` / `k_used` (tile-pad-shapes): issue the used N
  // (a whole swizzle slab when B is N-major, wgmma's step of 8 when
  // K-major) and the used k steps; the padded accumulator columns hold
  // zeros, constants that need no registers across the loop.
  int64_t nIssue = nSize, kIssue = kSize;
  if (auto n = op.getNUsed())
    nIssue = std::min(nSize, int64_t(llvm::alignTo(*n, kMajor ? 8 : slabElems)));
  if (auto k = op.getKUsed())
    kIssue = std::min(kSize, int64_t(llvm::alignTo(*k, kStep)));
  // A slot may hold only the slabs its readers use (tma::boxShape).
  auto slotRow = [&](TmaWaitOp w) {
    int64_t slot = int64_t(w.getSlot());
    return slot < int64_t(ki.slots.size()) ? ki.slots[slot].rowElems : 0;
  };
  if ((fromSlot && (kMajor ? kIssue : nIssue) > slotRow(fromSlot)) ||
      (aSlot && kIssue > slotRow(aSlot)))
    return op.emitError("dot reads past the TMA slot's box");
  std::string shape = "m64n" + std::to_string(nIssue) + "k" +
                      std::to_string(kStep) + ".f32." + ty + "." + ty;
  std::string bTrans = fp8 ? "" : kMajor ? ", 0" : ", 1";
  int64_t nAcc = nIssue / 2;
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(nAcc + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned." + shape + " {";
  std::string cons;
  for (int64_t i = 0; i < nAcc; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    cons += "=f,";
  }
  if (aSlot) { // A descriptor, B descriptor, scale-d, scales, transposes
    text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(nAcc + 2) +
           ", 0;\nwgmma.mma_async.sync.aligned." + shape + " {";
    for (int64_t i = 0; i < nAcc; ++i)
      text += (i ? ", $" : "$") + std::to_string(i);
    text += "}, $" + std::to_string(nAcc) + ", $" + std::to_string(nAcc + 1) +
            ", p, 1, 1" + (fp8 ? "" : ", 0") + bTrans + ";\n}";
    cons += "l,l,r";
  } else {
    text += "}, {$" + std::to_string(nAcc) + ", $" + std::to_string(nAcc + 1) +
            ", $" + std::to_string(nAcc + 2) + ", $" + std::to_string(nAcc + 3) +
            "}, $" + std::to_string(nAcc + 4) + ", p, 1, 1" + bTrans + ";\n}";
    cons += "r,r,r,r,l,r";
  }
  for (int64_t i = 0; i < nAcc; ++i)
    cons += "," + std::to_string(i);
  auto f32 = rw.getF32Type();
  auto accTy = LLVM::LLVMStructType::getLiteral(
      rw.getContext(), SmallVector<Type>(nAcc, f32));
  Value one = i32Const(rw, loc, 1);
  int64_t kSteps = kSize / kStep;
  if (nIssue < nSize) {
    Value zero = LLVM::ConstantOp::create(rw, loc, f32, rw.getF32FloatAttr(0));
    for (ArrayRef<int64_t> regs : accRegs)
      for (int64_t r : regs.drop_front(nAcc))
        cv[r] = zero;
  }
  for (size_t blk = 0; blk < blocks.size(); ++blk) {
    for (int64_t ks = 0; ks < kIssue / kStep; ++ks) {
      SmallVector<Value> ops;
      if (aSlot) {
        ops.push_back(aDescAt(blocks[blk], ks * kStep));
      } else {
        ArrayRef<int64_t> ar = aRegs[blk * kSteps + ks];
        if (fp8) { // four bytes per register, a0 lowest
          for (int j = 0; j < 16; j += 4)
            ops.push_back(toWords(rw, loc,
                                  {av[ar[j]], av[ar[j + 1]], av[ar[j + 2]],
                                   av[ar[j + 3]]},
                                  elt, 1)[0]);
        } else {
          for (int j = 0; j < 8; j += 2)
            ops.push_back(packPair(rw, loc, elt, av[ar[j]], av[ar[j + 1]]));
        }
      }
      ops.push_back(descAt(ks * kStep));
      ops.push_back(one);
      for (int64_t r : ArrayRef(accRegs[blk]).take_front(nAcc))
        ops.push_back(cv[r]);
      Value res = ptx(rw, loc, accTy, ops, text, cons, /*sideEffects=*/true);
      for (int64_t i = 0; i < nAcc; ++i)
        cv[accRegs[blk][i]] = LLVM::ExtractValueOp::create(rw, loc, res, i);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(rw, loc);
  // Wait for the group unless the dot is asynchronous (a tile.dot_wait
  // waits for it where its value is first needed).
  if (!op.getAsync())
    cv = waitForWgmma(rw, loc, cv, 0);
  rw.replaceOp(op, pack(rw, loc, cast<VectorType>(acc.getType()), cv));
  return success();
}
