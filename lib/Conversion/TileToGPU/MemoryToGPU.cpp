//===- MemoryToGPU.cpp - global loads, stores and atomics -----------------===//
//
// Each element a thread holds becomes one predicated PTX access (the mask
// turns into a predicate; masked-out loads yield `other`), or one per
// `tile.vec` consecutive elements. Replicated copies of an element (zero
// lane/warp bases) store and add only once. An atomic_add whose old values
// are unused is a `red`: the thread does not wait for the memory system's
// answer, and on sm_90 two or four f32 go in one instruction.
//
//===----------------------------------------------------------------------===//
#include "lib/Conversion/TileToGPU/ThreadLayout.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::lowering;

namespace {
/// How an element travels through a PTX register.
struct RegClass {
  Type regType;       ///< integer type of the PTX register
  StringRef c;        ///< constraint letter
  StringRef bits;     ///< b16 / b32 / b64 / u8
  StringRef mov;      ///< width for mov
};

RegClass regClassFor(OpBuilder &b, Type elt) {
  unsigned w = isa<IntegerType, FloatType>(elt) ? elt.getIntOrFloatBitWidth() : 64;
  if (w <= 8)
    return {b.getI16Type(), "h", "u8", "b16"};
  if (w == 16)
    return {b.getI16Type(), "h", "b16", "b16"};
  if (w == 32)
    return {b.getI32Type(), "r", "b32", "b32"};
  return {b.getI64Type(), "l", "b64", "b64"};
}

/// Element value -> register integer.
Value toReg(OpBuilder &b, Location loc, Value v, const RegClass &rc) {
  Type t = v.getType();
  if (t == rc.regType)
    return v;
  if (isFp8(t)) // an 8-bit register value: its bits, zero-extended
    return arith::ExtUIOp::create(
        b, loc, rc.regType, arith::BitcastOp::create(b, loc, b.getI8Type(), v));
  if (isa<FloatType>(t))
    return arith::BitcastOp::create(b, loc, rc.regType, v);
  return arith::ExtUIOp::create(b, loc, rc.regType, v);
}

/// Register integer -> element value.
Value fromReg(OpBuilder &b, Location loc, Value r, Type elt) {
  if (r.getType() == elt)
    return r;
  if (isFp8(elt))
    return arith::BitcastOp::create(
        b, loc, elt, arith::TruncIOp::create(b, loc, b.getI8Type(), r));
  if (isa<FloatType>(elt))
    return arith::BitcastOp::create(b, loc, elt, r);
  if (elt.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r,
                                 arith::ConstantIntOp::create(b, loc, r.getType(), 0));
  return arith::TruncIOp::create(b, loc, elt, r);
}

Value predicateI32(OpBuilder &b, Location loc, Value i1) {
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), i1);
}

/// Registers a group of `vec` elements travels in: 32-bit words.
int64_t wordsOf(int64_t vec, Type elt) {
  return vec * elt.getIntOrFloatBitWidth() / 32;
}

/// "{$a, $b, …}" for operands first..first+n-1, or "$a" for one.
std::string operandList(int first, int n) {
  if (n == 1)
    return "$" + std::to_string(first);
  std::string s = "{";
  for (int i = 0; i < n; ++i)
    s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}

std::string vecSuffix(int n) {
  return n == 1 ? "" : ".v" + std::to_string(n);
}

/// The vector width tile-annotated accesses use (1: element by element).
int64_t vecOf(Operation *op) {
  if (auto a = op->getAttrOfType<IntegerAttr>(kVectorAttr))
    return a.getInt();
  return 1;
}

/// One ld.global of `vec` consecutive elements at `addr`.
SmallVector<Value> loadVector(OpBuilder &b, Location loc, Value addr,
                              Value pred, ArrayRef<Value> others, Type elt,
                              int64_t vec, bool afterWrite) {
  int n = int(wordsOf(vec, elt));
  Type i32 = b.getI32Type();
  SmallVector<Type> words(n, i32);
  Type resTy = n == 1 ? i32
                      : Type(LLVM::LLVMStructType::getLiteral(b.getContext(), words));
  std::string outs;
  for (int i = 0; i < n; ++i)
    outs += "=r,";
  Value res;
  if (!pred) {
    std::string text = "ld.global" + vecSuffix(n) + ".b32 " + operandList(0, n) +
                       ", [$" + std::to_string(n) + "];";
    res = ptx(b, loc, resTy, addr, text, outs + "l", afterWrite);
  } else {
    SmallVector<Value> operands = {addr, pred};
    SmallVector<Value> otherWords =
        others.empty() ? SmallVector<Value>(n, arith::ConstantIntOp::create(b, loc, i32, 0))
                       : toWords(b, loc, others, elt, n);
    operands.append(otherWords);
    std::string text = "{\n .reg .pred p;\n setp.ne.b32 p, $" +
                       std::to_string(n + 1) + ", 0;\n";
    for (int i = 0; i < n; ++i)
      text += " mov.b32 $" + std::to_string(i) + ", $" + std::to_string(n + 2 + i) + ";\n";
    text += " @p ld.global" + vecSuffix(n) + ".b32 " + operandList(0, n) + ", [$" +
            std::to_string(n) + "];\n}";
    std::string cons = outs + "l,r";
    for (int i = 0; i < n; ++i)
      cons += ",r";
    res = ptx(b, loc, resTy, operands, text, cons, afterWrite);
  }
  SmallVector<Value> w;
  if (n == 1)
    w.push_back(res);
  else
    for (int i = 0; i < n; ++i)
      w.push_back(LLVM::ExtractValueOp::create(b, loc, res, i));
  return fromWords(b, loc, w, elt, vec);
}

/// One predicated st.global of `vals` (consecutive elements) at `addr`.
void storeVector(OpBuilder &b, Location loc, Value addr, Value pred,
                 ArrayRef<Value> vals, Type elt) {
  int n = int(wordsOf(vals.size(), elt));
  SmallVector<Value> operands = {addr, pred};
  operands.append(toWords(b, loc, vals, elt, n));
  std::string text = "{\n .reg .pred p;\n setp.ne.b32 p, $1, 0;\n @p st.global" +
                     vecSuffix(n) + ".b32 [$0], " + operandList(2, n) + ";\n}";
  std::string cons = "l,r";
  for (int i = 0; i < n; ++i)
    cons += ",r";
  ptx(b, loc, Type(), operands, text, cons, /*sideEffects=*/true);
}

struct LoadLowering : TilePattern<LoadOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    Type elt = vt.getElementType();
    RegClass rc = regClassFor(rw, elt);
    SmallVector<Value> ptrs = unpack(rw, loc, a.getPtr());
    SmallVector<Value> masks, others;
    if (a.getMask())
      masks = unpack(rw, loc, a.getMask());
    if (a.getOther())
      others = unpack(rw, loc, a.getOther());
    SmallVector<Value> out;
    bool afterWrite = op->hasAttr(kAfterWriteAttr);
    if (int64_t vec = vecOf(op); vec > 1) {
      for (size_t g = 0; g < ptrs.size(); g += vec) {
        Value pred = masks.empty() ? Value() : predicateI32(rw, loc, masks[g]);
        ArrayRef<Value> other =
            others.empty() ? ArrayRef<Value>() : ArrayRef(others).slice(g, vec);
        out.append(loadVector(rw, loc, ptrs[g], pred, other, elt, vec,
                              afterWrite));
      }
      rw.replaceOp(op, pack(rw, loc, vt, out));
      return success();
    }
    for (size_t i = 0; i < ptrs.size(); ++i) {
      Value r;
      if (masks.empty()) {
        std::string text = ("ld.global." + rc.bits + " $0, [$1];").str();
        r = ptx(rw, loc, rc.regType, ptrs[i], text, ("=" + rc.c + ",l").str(),
                afterWrite);
      } else {
        Value other = others.empty()
                          ? arith::ConstantOp::create(rw, loc, rw.getZeroAttr(rc.regType))
                          : toReg(rw, loc, others[i], rc);
        std::string text =
            ("{\n .reg .pred p;\n setp.ne.b32 p, $2, 0;\n mov." + rc.mov +
             " $0, $3;\n @p ld.global." + rc.bits + " $0, [$1];\n}")
                .str();
        std::string cons = ("=" + rc.c + ",l,r," + rc.c).str();
        r = ptx(rw, loc, rc.regType,
                ValueRange{ptrs[i], predicateI32(rw, loc, masks[i]), other},
                text, cons, afterWrite);
      }
      out.push_back(fromReg(rw, loc, r, elt));
    }
    rw.replaceOp(op, pack(rw, loc, vt, out));
    return success();
  }
};

/// Mask of each element, and-ed with "this thread owns it".
SmallVector<Value> ownedMasks(OpBuilder &b, Location loc, KernelInfo &k,
                              LayoutAttr l, Value maskVec, int64_t n) {
  Value owner = isOwner(b, loc, k, l);
  SmallVector<Value> out;
  SmallVector<Value> masks;
  if (maskVec)
    masks = unpack(b, loc, maskVec);
  for (int64_t i = 0; i < n; ++i)
    out.push_back(masks.empty() ? owner
                                : Value(arith::AndIOp::create(b, loc, owner, masks[i])));
  return out;
}

struct StoreLowering : TilePattern<StoreOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    SmallVector<Value> ptrs = unpack(rw, loc, a.getPtr());
    SmallVector<Value> vals = unpack(rw, loc, a.getValue());
    Type elt = cast<VectorType>(a.getValue().getType()).getElementType();
    RegClass rc = regClassFor(rw, elt);
    SmallVector<Value> masks = ownedMasks(rw, loc, kernel(op), layoutOf(op.getPtr()),
                                          a.getMask(), ptrs.size());
    if (int64_t vec = vecOf(op); vec > 1) {
      for (size_t g = 0; g < ptrs.size(); g += vec)
        storeVector(rw, loc, ptrs[g], predicateI32(rw, loc, masks[g]),
                    ArrayRef(vals).slice(g, vec), elt);
      rw.eraseOp(op);
      return success();
    }
    std::string text = ("{\n .reg .pred p;\n setp.ne.b32 p, $2, 0;\n @p st.global." +
                        rc.bits + " [$0], $1;\n}")
                           .str();
    std::string cons = ("l," + rc.c + ",r").str();
    for (size_t i = 0; i < ptrs.size(); ++i)
      ptx(rw, loc, Type(),
          ValueRange{ptrs[i], toReg(rw, loc, vals[i], rc),
                     predicateI32(rw, loc, masks[i])},
          text, cons, /*sideEffects=*/true);
    rw.eraseOp(op);
    return success();
  }
};

struct AtomicAddLowering : TilePattern<AtomicAddOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(AtomicAddOp op, OpAdaptor a,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto vt = cast<VectorType>(a.getValue().getType());
    Type elt = vt.getElementType();
    StringRef insn, c;
    if (elt.isF32()) {
      insn = "atom.global.add.f32";
      c = "f";
    } else if (elt.isInteger(32)) {
      insn = "atom.global.add.u32";
      c = "r";
    } else {
      return op.emitError() << "atomic_add supports f32 and i32 elements, got "
                            << elt;
    }
    SmallVector<Value> ptrs = unpack(rw, loc, a.getPtr());
    SmallVector<Value> vals = unpack(rw, loc, a.getValue());
    SmallVector<Value> masks = ownedMasks(rw, loc, kernel(op), layoutOf(op.getPtr()),
                                          a.getMask(), ptrs.size());
    if (op->hasAttr(kReductionAttr)) {
      // No old values: `red`, `vec` consecutive f32 per instruction (sm_90).
      int64_t vec = vecOf(op);
      StringRef type = elt.isF32() ? ".f32" : ".u32";
      for (size_t g = 0; g < ptrs.size(); g += vec) {
        SmallVector<Value> operands = {ptrs[g], predicateI32(rw, loc, masks[g])};
        for (int64_t i = 0; i < vec; ++i)
          operands.push_back(vals[g + i]);
        std::string text = ("{\n .reg .pred p;\n setp.ne.b32 p, $1, 0;\n @p red.global.add" +
                            vecSuffix(int(vec)) + type + " [$0], " +
                            operandList(2, int(vec)) + ";\n}")
                               .str();
        std::string cons = "l,r";
        for (int64_t i = 0; i < vec; ++i)
          cons += ("," + c).str();
        ptx(rw, loc, Type(), operands, text, cons, /*sideEffects=*/true);
      }
      rw.eraseOp(op);
      return success();
    }
    std::string text = ("{\n .reg .pred p;\n setp.ne.b32 p, $3, 0;\n mov.b32 $0, 0;\n @p " +
                        insn + " $0, [$1], $2;\n}")
                           .str();
    std::string cons = ("=" + c + ",l," + c + ",r").str();
    SmallVector<Value> out;
    for (size_t i = 0; i < ptrs.size(); ++i)
      out.push_back(ptx(rw, loc, elt,
                        ValueRange{ptrs[i], vals[i], predicateI32(rw, loc, masks[i])},
                        text, cons, /*sideEffects=*/true));
    rw.replaceOp(op, pack(rw, loc, vt, out));
    return success();
  }
};
} // namespace

void lowering::populateMemoryPatterns(TypeConverter &tc, RewritePatternSet &p,
                                      LoweringState &s) {
  p.add<LoadLowering, StoreLowering, AtomicAddLowering>(tc, p.getContext(), s);
}
