//===- ProducerSlice.cpp - the producer region's slice of a kernel -------===//
//
// What tile-warp-specialize's producer region re-creates from the body:
// the TMA copies, the loops and ifs around them with only the iter_args
// and results the copies need, and the scalar ops (memory-effect free, or
// tile.scalar_load) computing their operands. A tile or any other op is
// a value the producer cannot compute (Slice::add returns it).
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/WarpSpecialize.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::wspec;

/// Adds `copy` and everything it needs; the op the producer could not
/// run, if any.
Operation *Slice::add(TmaCopyOp copy) {
  keep.insert(copy);
  keepAncestors(copy);
  for (Value o : copy->getOperands())
    need(o);
  while (!work.empty() && !bad)
    visit(work.pop_back_val());
  return bad;
}

void Slice::need(Value v) {
  if (needed.insert(v).second)
    work.push_back(v);
}

/// Loops and ifs around `op` run in the producer too.
void Slice::keepAncestors(Operation *op) {
  for (Operation *p = op->getParentOp(); p && p != fn; p = p->getParentOp()) {
    if (!keep.insert(p).second)
      return;
    if (auto f = dyn_cast<scf::ForOp>(p)) {
      need(f.getLowerBound());
      need(f.getUpperBound());
      need(f.getStep());
    } else if (auto i = dyn_cast<scf::IfOp>(p)) {
      need(i.getCondition());
    } else {
      bad = p;
      return;
    }
  }
}

void Slice::visit(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (owner == fn)
      return; // a kernel argument
    auto loop = dyn_cast<scf::ForOp>(owner);
    if (!loop) {
      bad = owner;
      return;
    }
    keep.insert(loop);
    keepAncestors(loop);
    if (v == loop.getInductionVar()) {
      need(loop.getLowerBound());
      need(loop.getUpperBound());
      need(loop.getStep());
      return;
    }
    unsigned i = arg.getArgNumber() - 1;
    need(loop.getInitArgs()[i]);
    need(loop.getBody()->getTerminator()->getOperand(i));
    return;
  }
  Operation *def = v.getDefiningOp();
  if (isa<TileType>(v.getType()) || isa<CtaMemberOp>(def)) {
    bad = def;
    return;
  }
  unsigned i = cast<OpResult>(v).getResultNumber();
  if (auto loop = dyn_cast<scf::ForOp>(def)) {
    keep.insert(loop);
    keepAncestors(loop);
    need(loop.getLowerBound());
    need(loop.getUpperBound());
    need(loop.getStep());
    need(loop.getInitArgs()[i]);
    need(loop.getBody()->getTerminator()->getOperand(i));
    return;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
    keep.insert(ifOp);
    keepAncestors(ifOp);
    need(ifOp.getCondition());
    need(ifOp.thenYield().getOperand(i));
    need(ifOp.elseYield().getOperand(i));
    return;
  }
  if (def->getNumRegions() ||
      !(isMemoryEffectFree(def) || isa<ScalarLoadOp>(def))) {
    bad = def;
    return;
  }
  keep.insert(def);
  keepAncestors(def);
  for (Value o : def->getOperands())
    need(o);
}

void wspec::emit(const Slice &s, Block &src, OpBuilder &b, IRMapping &map) {
  auto lookup = [&](Value v) { return map.lookupOrDefault(v); };
  for (Operation &op : src) {
    if (op.hasTrait<OpTrait::IsTerminator>() || !s.kept(&op))
      continue;
    Location loc = op.getLoc();
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      SmallVector<unsigned> carried;
      SmallVector<Value> inits;
      for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs()))
        if (s.isNeeded(arg) || s.isNeeded(loop.getResult(i))) {
          carried.push_back(i);
          inits.push_back(lookup(loop.getInitArgs()[i]));
        }
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      auto copy = scf::ForOp::create(
          b, loc, lookup(loop.getLowerBound()), lookup(loop.getUpperBound()),
          lookup(loop.getStep()), inits,
          [&](OpBuilder &bb, Location l, Value iv, ValueRange args) {
            map.map(loop.getInductionVar(), iv);
            for (auto [k, i] : llvm::enumerate(carried))
              map.map(loop.getRegionIterArgs()[i], args[k]);
            emit(s, *loop.getBody(), bb, map);
            SmallVector<Value> out;
            for (unsigned i : carried)
              out.push_back(lookup(yield.getOperand(i)));
            scf::YieldOp::create(bb, l, out);
          });
      // tile.persistent (tile-dynamic-persistent finds both copies).
      copy->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
      for (auto [k, i] : llvm::enumerate(carried))
        map.map(loop.getResult(i), copy.getResult(k));
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      SmallVector<unsigned> results;
      for (OpResult r : ifOp.getResults())
        if (s.isNeeded(r))
          results.push_back(r.getResultNumber());
      // Each branch: its kept ops, then the needed results (the builder
      // takes the if's result types from the yields).
      auto branch = [&](Block *from) {
        return [&, from](OpBuilder &bb, Location l) {
          emit(s, *from, bb, map);
          SmallVector<Value> out;
          for (unsigned i : results)
            out.push_back(lookup(from->getTerminator()->getOperand(i)));
          scf::YieldOp::create(bb, l, out);
        };
      };
      auto thenBranch = branch(ifOp.thenBlock());
      auto copy =
          ifOp.getElseRegion().empty()
              ? scf::IfOp::create(b, loc, lookup(ifOp.getCondition()), thenBranch)
              : scf::IfOp::create(b, loc, lookup(ifOp.getCondition()), thenBranch,
                                  branch(ifOp.elseBlock()));
      for (auto [k, i] : llvm::enumerate(results))
        map.map(ifOp.getResult(i), copy.getResult(k));
      continue;
    }
    Operation *c = b.clone(op, map);
    if (auto tc = dyn_cast<TmaCopyOp>(c))
      tc.setProducer(true);
  }
}
