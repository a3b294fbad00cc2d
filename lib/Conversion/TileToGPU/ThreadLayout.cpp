//===- ThreadLayout.cpp - per-thread view of laid-out tiles ---------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

#include "lib/Analysis/AxisInfo.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

KernelInfo &LoweringState::of(Operation *op) {
  Operation *fn = op->getParentOfType<gpu::GPUFuncOp>();
  auto it = kernels.find(fn);
  assert(it != kernels.end() && "tile op outside a lowered kernel");
  return it->second;
}

Type lowering::threadElementType(Type t) {
  if (isa<PtrType>(t))
    return IntegerType::get(t.getContext(), 64);
  return t;
}

VectorType lowering::threadVectorType(TileType t) {
  LayoutAttr l = t.getLayout();
  assert(l && "tile without layout reached the GPU lowering");
  return VectorType::get({l.getNumRegs()}, threadElementType(t.getElementType()));
}

int64_t lowering::byteSize(Type t) {
  if (isa<PtrType>(t))
    return 8;
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

Value lowering::i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

void lowering::ctaBarrier(OpBuilder &b, Location loc, const KernelInfo &k) {
  if (!k.specialized) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  if (k.members > 1) {
    Value id = arith::AddIOp::create(b, loc, k.member,
                                     i32Const(b, loc, kConsumerBarrier));
    ptx(b, loc, Type(), ValueRange{id},
        "bar.sync $0, " + std::to_string(32 * k.warps) + ";", "r",
        /*sideEffects=*/true);
    return;
  }
  ptx(b, loc, Type(), ValueRange{},
      "bar.sync " + std::to_string(kConsumerBarrier) + ", " +
          std::to_string(32 * k.warps) + ";",
      "", /*sideEffects=*/true);
}

Value lowering::bitOf(OpBuilder &b, Location loc, Value id, unsigned i) {
  return arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, id, i32Const(b, loc, i)),
      i32Const(b, loc, 1));
}

Value lowering::threadCoord(OpBuilder &b, Location loc, KernelInfo &k,
                            LayoutAttr l, unsigned dim) {
  unsigned rank = l.getRank();
  Value acc = i32Const(b, loc, 0);
  auto addBits = [&](ArrayRef<int64_t> bases, Value id) {
    for (unsigned i = 0; i < bases.size() / rank; ++i) {
      int64_t v = bases[i * rank + dim];
      if (!v)
        continue;
      Value term =
          arith::MulIOp::create(b, loc, bitOf(b, loc, id, i), i32Const(b, loc, v));
      acc = arith::XOrIOp::create(b, loc, acc, term);
    }
  };
  addBits(l.getLanes(), k.lane);
  addBits(l.getWarps(), k.warp);
  return acc;
}

lowering::RegIndex::RegIndex(LayoutAttr l) {
  for (int64_t r = 0; r < l.getNumRegs(); ++r) {
    SmallVector<int64_t> c = regCoords(l, r);
    map.try_emplace(c[0] * 65536 + c[1], r);
  }
}

int64_t lowering::RegIndex::at(int64_t row, int64_t col) const {
  auto it = map.find(row * 65536 + col);
  return it == map.end() ? -1 : it->second;
}

Value lowering::elementCoord(OpBuilder &b, Location loc, Value threadPart,
                             LayoutAttr l, int64_t reg, unsigned dim) {
  int64_t c = regCoords(l, reg)[dim];
  if (!c)
    return threadPart;
  return arith::XOrIOp::create(b, loc, threadPart, i32Const(b, loc, c));
}

Value lowering::isOwner(OpBuilder &b, Location loc, KernelInfo &k,
                        LayoutAttr l) {
  unsigned rank = l.getRank();
  int64_t laneMask = 0, warpMask = 0;
  auto zero = [&](ArrayRef<int64_t> bases, unsigned i) {
    return llvm::all_of(bases.slice(i * rank, rank),
                        [](int64_t v) { return v == 0; });
  };
  for (unsigned i = 0; i < l.getNumLaneBits(); ++i)
    if (zero(l.getLanes(), i))
      laneMask |= int64_t(1) << i;
  for (unsigned i = 0; i < l.getNumWarpBits(); ++i)
    if (zero(l.getWarps(), i))
      warpMask |= int64_t(1) << i;
  Value lanePart = arith::AndIOp::create(b, loc, k.lane, i32Const(b, loc, laneMask));
  Value warpPart = arith::AndIOp::create(b, loc, k.warp, i32Const(b, loc, warpMask));
  Value any = arith::OrIOp::create(b, loc, lanePart, warpPart);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, any,
                               i32Const(b, loc, 0));
}

Value lowering::isLane0(OpBuilder &b, Location loc, KernelInfo &k) {
  return arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k.lane,
                            i32Const(b, loc, 0)));
}

Value lowering::firstThread(KernelInfo &k) {
  if (k.isFirstThread)
    return k.isFirstThread;
  OpBuilder b(k.warp.getContext());
  b.setInsertionPointAfterValue(k.warp);
  Location loc = k.warp.getLoc();
  Value tid = arith::AddIOp::create(
      b, loc, k.lane, arith::MulIOp::create(b, loc, k.ctaWarp, i32Const(b, loc, 32)));
  k.isFirstThread = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                            i32Const(b, loc, 0)));
  return k.isFirstThread;
}

Value lowering::dynamicSharedBase(OpBuilder &b, Location loc) {
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, wg);
  Value smem = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  return arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem));
}

Value lowering::linearIndex(OpBuilder &b, Location loc,
                            ArrayRef<Value> threadPart, LayoutAttr l,
                            int64_t reg, ArrayRef<int64_t> shape,
                            int64_t minor, int64_t rowStride) {
  unsigned last = minor >= 0 ? unsigned(minor) : shape.size() - 1;
  Value major = i32Const(b, loc, 0);
  for (unsigned d = 0; d < shape.size(); ++d)
    if (d != last)
      major = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, major, i32Const(b, loc, shape[d])),
          elementCoord(b, loc, threadPart[d], l, reg, d));
  Value idx = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, major,
                            i32Const(b, loc, rowStride ? rowStride : shape[last])),
      elementCoord(b, loc, threadPart[last], l, reg, last));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), idx);
}

SmallVector<Value> lowering::threadParts(OpBuilder &b, Location loc,
                                         KernelInfo &k, LayoutAttr l) {
  SmallVector<Value> out;
  for (unsigned d = 0; d < l.getRank(); ++d)
    out.push_back(threadCoord(b, loc, k, l, d));
  return out;
}

int64_t lowering::sharedVectorWidth(LayoutAttr l, int64_t eltBytes, unsigned last) {
  unsigned rank = l.getRank();
  int64_t w = std::min<int64_t>(leadingRegsAlong(l, last), 16 / eltBytes);
  if (w * eltBytes < 4)
    return 1;
  unsigned skip = llvm::Log2_64(w);
  auto aligned = [&](ArrayRef<int64_t> flat, unsigned n, unsigned from) {
    for (unsigned i = from; i < n; ++i)
      if (basisAt(flat, rank, i)[last] % w)
        return false;
    return true;
  };
  if (!aligned(l.getRegs(), l.getNumRegBits(), skip) ||
      !aligned(l.getLanes(), 5, 0) ||
      !aligned(l.getWarps(), l.getNumWarpBits(), 0))
    return 1;
  return w;
}

Value lowering::sharedBuffer(OpBuilder &b, Location loc, KernelInfo &k,
                             Type elemType, int64_t numElems) {
  int64_t bytes = numElems * byteSize(elemType);
  k.sharedBytes = std::max(k.sharedBytes, k.persistentBytes + bytes);
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, wg);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  auto typed = MemRefType::get({numElems}, elemType,
                               MemRefLayoutAttrInterface{}, wg);
  // Temporaries start after the persistent part (TMA slots); each program
  // of a CTA (cta_programs) has its own.
  Value shift = arith::ConstantIndexOp::create(b, loc, k.persistentBytes);
  if (k.members > 1)
    shift = arith::AddIOp::create(
        b, loc, shift,
        arith::MulIOp::create(
            b, loc, k.scratchStride,
            arith::IndexCastUIOp::create(b, loc, b.getIndexType(), k.member)));
  return memref::ViewOp::create(b, loc, typed, base, shift, ValueRange{});
}

SmallVector<Value> lowering::unpack(OpBuilder &b, Location loc, Value vec) {
  auto t = cast<VectorType>(vec.getType());
  SmallVector<Value> out;
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return out;
}

Value lowering::pack(OpBuilder &b, Location loc, VectorType t,
                     ArrayRef<Value> elems) {
  return vector::FromElementsOp::create(b, loc, t, elems);
}

SmallVector<Value> lowering::toWords(OpBuilder &b, Location loc,
                                     ArrayRef<Value> vals, Type elt,
                                     int64_t words) {
  auto v = vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(vals.size())}, elt), vals);
  auto w = vector::BitCastOp::create(
      b, loc, VectorType::get({words}, b.getI32Type()), v);
  return unpack(b, loc, w);
}

SmallVector<Value> lowering::fromWords(OpBuilder &b, Location loc,
                                       ArrayRef<Value> words, Type elt,
                                       int64_t vec) {
  auto w = vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(words.size())}, b.getI32Type()), words);
  auto v = vector::BitCastOp::create(b, loc, VectorType::get({vec}, elt), w);
  return unpack(b, loc, v);
}

Value lowering::ptx(OpBuilder &b, Location loc, Type result,
                    ValueRange operands, StringRef asmText,
                    StringRef constraints, bool sideEffects) {
  auto dialect = LLVM::AsmDialectAttr::get(b.getContext(),
                                           LLVM::AsmDialect::AD_ATT);
  auto op = LLVM::InlineAsmOp::create(
      b, loc, result ? TypeRange{result} : TypeRange{}, operands, asmText,
      constraints, sideEffects, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, dialect,
      /*operand_attrs=*/ArrayAttr());
  return result ? op.getResult(0) : Value();
}

void lowering::annotateVectorAccesses(Operation *root, bool vectorRed) {
  AxisAnalysis axes(root);
  auto annotate = [&](Operation *op, Value ptr, Value mask, Value other) {
    auto t = cast<TileType>(ptr.getType());
    Type elt = cast<PtrType>(t.getElementType()).getPointeeType();
    std::optional<unsigned> dim = axes.contiguousDim(ptr);
    if (!dim || elt.isInteger(1) || !t.getLayout())
      return;
    int64_t bytes = byteSize(elt);
    int64_t maxVec = std::min(leadingRegsAlong(t.getLayout(), *dim), 16 / bytes);
    int64_t vec = axes.vectorWidth(ptr, mask, other, *dim, maxVec);
    if (vec > 1 && vec * bytes >= 4)
      op->setAttr(kVectorAttr,
                  IntegerAttr::get(IntegerType::get(op->getContext(), 64), vec));
  };
  root->walk([&](Operation *op) {
    if (auto ld = dyn_cast<LoadOp>(op))
      annotate(op, ld.getPtr(), ld.getMask(), ld.getOther());
    else if (auto st = dyn_cast<StoreOp>(op))
      annotate(op, st.getPtr(), st.getMask(), Value());
    else if (auto c = dyn_cast<AsyncCopyOp>(op))
      annotate(op, c.getPtr(), c.getMask(), Value());
    else if (auto at = dyn_cast<AtomicAddOp>(op); at && at->use_empty()) {
      op->setAttr(kReductionAttr, UnitAttr::get(op->getContext()));
      auto vt = cast<TileType>(at.getValue().getType());
      if (vectorRed && vt.getElementType().isF32())
        annotate(op, at.getPtr(), at.getMask(), Value());
    }
  });
}
