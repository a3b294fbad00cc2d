//===- Registers.cpp - a lower bound of a kernel's registers per thread ---===//
//
// After lowering to the GPU dialect every value is per thread: a tile is a
// vector of the elements one thread holds. The bound counts the 32-bit
// registers of the data values live at once, at the busiest point of the
// kernel, with a liveness walk over its structured control flow:
//
// - Only data counts: float scalars, vectors and structs (accumulators,
//   scores, softmax statistics, loaded fragments), and the results of
//   inline PTX (wgmma accumulators, ldmatrix fragments, loads). Integers and
//   pointers (addresses, masks, loop counters) do not: ptxas may
//   recompute them, and a lower bound must not count what it need not hold.
// - Values that only rename registers (vector.extract / insert / shuffle /
//   from_elements / broadcast / bitcast, llvm.extractvalue / insertvalue)
//   are not new registers: liveness runs over the values they rename (the
//   "roots"), each live from its definition to the last use of any value
//   that renames it. Constants are immediates: no register.
// - The pressure is measured after each op (an operand that dies at an op
//   lends its registers to the result), inside loops: a value defined
//   outside a loop and read in it is live through every iteration.
//
// What ptxas needs is at least this (it also holds addresses, predicates
// and temporaries). The second bound counts only wgmma accumulators and
// register operands (and the loop values that carry them): ptxas fails
// ("Register allocation failed") rather than spill them when a budget below
// 255 cannot hold them (Resources.cpp, which refuses those kernels).
// Cost: one pass over the kernel's ops with a set of live roots.
//
//===----------------------------------------------------------------------===//
#include "lib/Pipeline/Resources.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {
/// Registers (32-bit) of the data in a value of type `t`; 0 for
/// integers and pointers unless `integers`.
int64_t dataRegisters(Type t, bool integers) {
  if (auto v = dyn_cast<VectorType>(t)) {
    Type e = v.getElementType();
    if (!isa<FloatType>(e) && !(integers && e.isIntOrFloat()))
      return 0;
    return (v.getNumElements() * e.getIntOrFloatBitWidth() + 31) / 32;
  }
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t)) {
    int64_t n = 0;
    for (Type f : s.getBody())
      n += dataRegisters(f, integers);
    return n;
  }
  if (isa<FloatType>(t) || (integers && t.isIntOrFloat() && !t.isInteger(1)))
    return (t.getIntOrFloatBitWidth() + 31) / 32;
  return 0;
}

bool renames(Operation *op) {
  return isa<vector::ExtractOp, vector::InsertOp, vector::ShuffleOp,
             vector::FromElementsOp, vector::BroadcastOp, vector::BitCastOp,
             vector::ExtractStridedSliceOp, vector::InsertStridedSliceOp,
             LLVM::ExtractValueOp, LLVM::InsertValueOp, LLVM::BitcastOp,
             arith::BitcastOp, UnrealizedConversionCastOp>(op);
}

struct Pressure {
  DenseMap<Value, SmallVector<Value, 2>> rootsOf;
  DenseMap<Value, int64_t> size; ///< registers of each root
  int64_t peak = 0;

  ArrayRef<Value> roots(Value v) {
    auto it = rootsOf.find(v);
    if (it != rootsOf.end())
      return it->second;
    SmallVector<Value, 2> r;
    Operation *def = v.getDefiningOp();
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp())) {
      // kernel parameters: the constant bank
    } else if (def && renames(def)) {
      for (Value o : def->getOperands())
        for (Value x : roots(o))
          if (!llvm::is_contained(r, x))
            r.push_back(x);
    } else if (!def || !def->hasTrait<OpTrait::ConstantLike>()) {
      int64_t n = dataRegisters(v.getType(), isa_and_nonnull<LLVM::InlineAsmOp>(def));
      if (n > 0) {
        size[v] = n;
        r.push_back(v);
      }
    }
    return rootsOf[v] = r;
  }

  /// Roots of wgmma accumulators and register operands, and the loop
  /// values that carry them.
  llvm::DenseSet<Value> wgmma;
  int64_t wgmmaPeak = 0;

  void markWgmma(Operation *root) {
    root->walk([&](LLVM::InlineAsmOp a) {
      if (!a.getAsmString().contains("wgmma.mma_async"))
        return;
      for (Value v : a->getOperands())
        for (Value r : roots(v))
          wgmma.insert(r);
      for (Value v : a->getResults())
        for (Value r : roots(v))
          wgmma.insert(r);
    });
    // A loop-carried value is an accumulator where what it carries is.
    for (bool changed = true; changed;) {
      changed = false;
      root->walk([&](scf::ForOp f) {
        auto yield = cast<scf::YieldOp>(f.getBody()->getTerminator());
        for (auto [i, y] : llvm::enumerate(yield.getOperands())) {
          bool acc = llvm::any_of(roots(y), [&](Value r) { return wgmma.contains(r); });
          if (!acc)
            continue;
          for (Value v : {Value(f.getRegionIterArg(i)), Value(f.getResult(i))})
            for (Value r : roots(v))
              changed |= wgmma.insert(r).second;
        }
      });
    }
  }

  using Live = llvm::SmallDenseSet<Value, 32>;
  int64_t total(const Live &live, bool onlyWgmma) const {
    int64_t n = 0;
    for (Value v : live)
      if (!onlyWgmma || wgmma.contains(v))
        n += size.lookup(v);
    return n;
  }

  /// Adds the roots of what `op` reads from outside it: its operands (with
  /// `own`) and what ops in its regions read.
  void addUses(Operation *op, Live &live, bool own = true) {
    op->walk([&](Operation *inner) {
      if (inner == op && !own)
        return;
      for (Value o : inner->getOperands())
        if (inner == op || !op->isAncestor(o.getParentBlock()->getParentOp()))
          for (Value r : roots(o))
            live.insert(r);
    });
  }

  /// Walks `block` backwards from `live` (the roots live after it).
  void walk(Block &block, Live live, bool inLoop) {
    for (Operation &op : llvm::reverse(block)) {
      if (inLoop) {
        peak = std::max(peak, total(live, false));
        wgmmaPeak = std::max(wgmmaPeak, total(live, true));
      }
      for (Value r : op.getResults())
        for (Value x : roots(r))
          if (x == r)
            live.erase(x);
      bool loop = isa<scf::ForOp, scf::WhileOp>(op);
      for (Region &region : op.getRegions())
        for (Block &inner : region) {
          Live after = live;
          if (loop) // read from outside: live through every iteration
            addUses(&op, after, /*own=*/false);
          walk(inner, after, inLoop || loop);
        }
      addUses(&op, live);
    }
  }
};
} // namespace

namespace tile {
RegisterBound minRegistersPerThread(gpu::GPUFuncOp fn) {
  Pressure p;
  p.markWgmma(fn);
  for (Block &b : fn.getBody())
    p.walk(b, {}, /*inLoop=*/false);
  return {p.peak, p.wgmmaPeak};
}
} // namespace tile
