//===- WgmmaOperands.cpp - wgmma operands in swizzled shared memory -------===//
//
// wgmma reads B (and A from a TMA slot) from shared memory through a matrix
// descriptor. The layout is the 128-byte swizzle: 16-byte chunk c of row r
// is stored at chunk c ^ (r % 8), in slabs of 64 two-byte elements along the
// contiguous dimension, each slab 1024-byte aligned. A thread stores its
// 4-16 byte pieces of a row as single vector stores (a piece never crosses
// a 16-byte chunk, so the swizzle keeps it contiguous) and the eight rows of
// a swizzle atom land in different banks: no conflicts.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/WgmmaOperands.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// Byte offset of B element (outer, inner) in the swizzled slabs.
Value swizzledOffset(OpBuilder &b, Location loc, Value outer, Value inner,
                     int64_t outerSize, int64_t eltBytes) {
  auto c = [&](int64_t v) { return i32Const(b, loc, v); };
  int64_t perRow = kSwizzleBytes / eltBytes;
  Value slab = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, inner, c(perRow)),
      c(outerSize * kSwizzleBytes));
  Value rowAt = arith::MulIOp::create(b, loc, outer, c(kSwizzleBytes));
  Value inRow = arith::RemUIOp::create(b, loc, inner, c(perRow));
  Value chunk = arith::XOrIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, inRow, c(16 / eltBytes)),
      arith::AndIOp::create(b, loc, outer, c(7)));
  Value within = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, inRow, c(16 / eltBytes)),
      c(eltBytes));
  return arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, slab, rowAt),
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, chunk, c(16)), within));
}
} // namespace

/// wgmma matrix descriptor of the 128-byte swizzled operand at shared
/// address `base` + `off`: start >> 4 (bits 0-13), leading byte offset >> 4
/// (16-29), stride byte offset >> 4 (32-45: 8-row groups 1024 bytes apart),
/// 128-byte swizzle (62-63). K-major: a k step of 16 moves 32 bytes inside
/// the swizzle row (the next 64-element slab every 64; LBO unused, 16);
/// N-major: the 64-column slabs are LBO apart. The low word is
/// ((base >> 4) | LBO field) + (off >> 4): `off` is a multiple of 16 and
/// shared addresses stay below 256 KB, so the sum never carries out of the
/// start field, and the k steps of a dot compute the same (base >> 4) |
/// LBO field, which CSE merges (one add per wgmma instead of add, shift and
/// or).

Value lowering::wgmmaDescriptor(OpBuilder &b, Location loc, Value base,
                                int64_t off, int64_t lbo) {
  assert(off % 16 == 0 && "descriptor offsets are 16-byte multiples");
  int64_t loFixed = ((lbo >> 4) & 0x3FFF) << 16;
  uint64_t hiFixed = (uint64_t((kAtomBytes >> 4) & 0x3FFF) << 32) |
                     (uint64_t(1) << 62);
  Value start = arith::OrIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, base, i32Const(b, loc, 4)),
      i32Const(b, loc, loFixed));
  Value lo = arith::AddIOp::create(b, loc, start, i32Const(b, loc, off >> 4));
  return arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), lo),
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(int64_t(hiFixed))));
}

Value lowering::storeSwizzled(ConversionPatternRewriter &rw, Location loc,
                              KernelInfo &ki, Type elt, LayoutAttr lb, Value bv,
                              bool kMajor, int64_t outerSize,
                              int64_t numElems) {
  int64_t eltBytes = byteSize(elt);
  unsigned inner = kMajor ? 0 : 1;
  Value buf = sharedBuffer(rw, loc, ki, elt, numElems + kAtomBytes / eltBytes);
  Value raw = arith::IndexCastOp::create(
      rw, loc, rw.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, buf));
  Value base = arith::AndIOp::create(
      rw, loc, arith::AddIOp::create(rw, loc, raw, i32Const(rw, loc, kAtomBytes - 1)),
      i32Const(rw, loc, -kAtomBytes));
  ctaBarrier(rw, loc, ki);
  SmallVector<Value> bvals = unpack(rw, loc, bv);
  Value t0 = threadCoord(rw, loc, ki, lb, 0), t1 = threadCoord(rw, loc, ki, lb, 1);
  // 4-16 byte pieces of a row stay contiguous under the 16-byte swizzle.
  int64_t vec = sharedVectorWidth(lb, eltBytes, inner);
  int64_t words = vec * eltBytes / 4;
  auto i16 = rw.getI16Type();
  for (int64_t r = 0; r < lb.getNumRegs(); r += vec) {
    Value c0 = elementCoord(rw, loc, t0, lb, r, 0);
    Value c1 = elementCoord(rw, loc, t1, lb, r, 1);
    Value in = kMajor ? c0 : c1, out = kMajor ? c1 : c0;
    Value addr = arith::AddIOp::create(
        rw, loc, base, swizzledOffset(rw, loc, out, in, outerSize, eltBytes));
    if (vec > 1) {
      SmallVector<Value> ops = {addr};
      llvm::append_range(ops, toWords(rw, loc, ArrayRef(bvals).slice(r, vec),
                                      elt, words));
      ptx(rw, loc, Type(), ops,
          words == 4   ? "st.shared.v4.b32 [$0], {$1, $2, $3, $4};"
          : words == 2 ? "st.shared.v2.b32 [$0], {$1, $2};"
                       : "st.shared.b32 [$0], $1;",
          words == 4 ? "r,r,r,r,r" : words == 2 ? "r,r,r" : "r,r",
          /*sideEffects=*/true);
    } else if (eltBytes == 1) {
      Value bits = arith::ExtUIOp::create(
          rw, loc, i16, arith::BitcastOp::create(rw, loc, rw.getI8Type(), bvals[r]));
      ptx(rw, loc, Type(), ValueRange{addr, bits}, "st.shared.b8 [$0], $1;",
          "r,h", /*sideEffects=*/true);
    } else {
      Value bits = LLVM::BitcastOp::create(rw, loc, i16, bvals[r]);
      ptx(rw, loc, Type(), ValueRange{addr, bits}, "st.shared.b16 [$0], $1;",
          "r,h", /*sideEffects=*/true);
    }
  }
  // wgmma reads through the async proxy: make the stores visible to it.
  ptx(rw, loc, Type(), ValueRange{}, "fence.proxy.async.shared::cta;", "",
      /*sideEffects=*/true);
  ctaBarrier(rw, loc, ki);
  return base;
}
