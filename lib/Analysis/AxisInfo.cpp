//===- AxisInfo.cpp - strides and alignment of index and pointer tiles ----===//
#include "lib/Analysis/AxisInfo.h"

#include "dialects/tile/Params.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

static constexpr int64_t kHuge = int64_t(1) << 30;

/// Largest power of two dividing `v` (kHuge for 0).
static int64_t pow2Of(int64_t v) {
  if (v == 0)
    return kHuge;
  return std::min<int64_t>(kHuge, int64_t(1) << llvm::countr_zero(uint64_t(v)));
}

static std::optional<int64_t> constantInt(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getInt();
  if (auto f = v.getDefiningOp<FullOp>())
    if (auto i = dyn_cast<IntegerAttr>(f.getValue()))
      return i.getInt();
  return std::nullopt;
}

int64_t AxisAnalysis::scalarDivisibility(Value v) const {
  if (auto c = constantInt(v))
    return pow2Of(*c);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto loop = dyn_cast<scf::ForOp>(owner);
        loop && arg == loop.getInductionVar())
      return std::min(scalarDivisibility(loop.getLowerBound()),
                      scalarDivisibility(loop.getStep()));
    if (auto p = dyn_cast<PtrType>(v.getType()))
      return std::max<int64_t>(
          1, kPointerArgAlignment /
                 std::max<int64_t>(1, p.getPointeeType().getIntOrFloatBitWidth() / 8));
    // An integer argument the kernel's require(x % C == 0) makes divisible
    // (the launcher refuses other values).
    if (auto fn = dyn_cast<FunctionOpInterface>(owner))
      if (auto d = fn.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                    kDivisibilityAttr))
        return std::min(kHuge, std::max<int64_t>(1, d.getInt()));
    return 1;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return 1;
  if (isa<arith::MulIOp>(def))
    return std::min(kHuge, scalarDivisibility(def->getOperand(0)) *
                               scalarDivisibility(def->getOperand(1)));
  if (isa<arith::AddIOp, arith::SubIOp, AddPtrOp>(def))
    return std::min(scalarDivisibility(def->getOperand(0)),
                    scalarDivisibility(def->getOperand(1)));
  if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(def))
    return scalarDivisibility(def->getOperand(0));
  return 1;
}

AxisAnalysis::AxisAnalysis(Operation *root) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) { visit(op); });
}

const AxisInfo *AxisAnalysis::lookup(Value v) const {
  auto it = infos.find(v);
  return it == infos.end() ? nullptr : &it->second;
}

/// Unknown strides, nothing constant.
static AxisInfo unknown(unsigned rank) {
  AxisInfo i;
  i.stride.assign(rank, std::nullopt);
  i.strideDivisibility.assign(rank, 0);
  i.constant.assign(rank, false);
  i.uniformRun.assign(rank, 1);
  return i;
}

/// A power of two dividing the difference of any two elements along `d`:
/// the stride's where the value is affine along it, else 1 (so that a
/// gathered index times a uniform `c`, `page_ids * PAGE_STRIDE`, still has
/// differences divisible by c and keeps its rows' vector accesses).
static int64_t differenceDivisibility(const AxisInfo &x, unsigned d) {
  return x.strideDivisibility[d] ? x.strideDivisibility[d] : 1;
}

static bool allConstant(const AxisInfo &i) {
  return llvm::all_of(i.constant, [](bool c) { return c; });
}

static AxisInfo uniform(unsigned rank, int64_t div) {
  AxisInfo i;
  i.stride.assign(rank, int64_t(0));
  i.strideDivisibility.assign(rank, kHuge);
  i.constant.assign(rank, true);
  i.uniformRun.assign(rank, kHuge);
  i.divisibility = div;
  return i;
}

void AxisAnalysis::visit(Operation *op) {
  if (op->getNumResults() != 1)
    return;
  auto type = dyn_cast<TileType>(op->getResult(0).getType());
  if (!type)
    return;
  unsigned rank = type.getRank();
  auto get = [&](Value v) {
    auto it = infos.find(v);
    return it == infos.end()
               ? unknown(cast<TileType>(v.getType()).getRank())
               : it->second;
  };
  auto combineConst = [&](const AxisInfo &a, const AxisInfo &b, AxisInfo &out) {
    for (unsigned d = 0; d < rank; ++d)
      out.constant[d] = a.constant[d] && b.constant[d];
  };
  // Runs of a comparison, a logical op or a select: the least of its
  // operands'; `x < n` with x affine of stride 1 along d and n uniform
  // along it flips only where x crosses n, at a multiple of both
  // divisibilities (of each one's value at the start of a run).
  auto uniformRuns = [&](Operation *o, unsigned rank, auto &&get) {
    SmallVector<int64_t> runs(rank, kHuge);
    SmallVector<AxisInfo, 2> ins;
    for (Value v : o->getOperands())
      if (isa<TileType>(v.getType()))
        ins.push_back(get(v));
    for (unsigned d = 0; d < rank; ++d) {
      auto startDiv = [&](const AxisInfo &x) {
        int64_t g = x.divisibility;
        for (unsigned e = 0; e < rank; ++e)
          if (e != d)
            g = std::min(g, x.strideDivisibility[e] ? x.strideDivisibility[e]
                                                    : int64_t(1));
        return g;
      };
      if (isa<CmpOp>(o) && ins.size() == 2) {
        const AxisInfo &a = ins[0], &b = ins[1];
        bool aStep = a.stride[d] && *a.stride[d] == 1 && b.constant[d];
        bool bStep = b.stride[d] && *b.stride[d] == 1 && a.constant[d];
        if (aStep || bStep) {
          runs[d] = std::min(startDiv(a), startDiv(b));
          continue;
        }
      }
      for (const AxisInfo &x : ins)
        runs[d] = std::min(runs[d], x.constant[d] ? kHuge : x.uniformRun[d]);
    }
    return runs;
  };
  AxisInfo info =
      TypeSwitch<Operation *, AxisInfo>(op)
          .Case([&](IotaOp) {
            AxisInfo i = uniform(1, kHuge);
            i.stride[0] = 1;
            i.uniformRun[0] = 1;
            i.strideDivisibility[0] = 1;
            i.constant[0] = type.getDimSize(0) == 1;
            return i;
          })
          .Case([&](SplatOp s) {
            return uniform(rank, scalarDivisibility(s.getSrc()));
          })
          .Case([&](FullOp f) {
            auto i = dyn_cast<IntegerAttr>(f.getValue());
            return uniform(rank, i ? pow2Of(i.getInt()) : 1);
          })
          .Case([&](ExpandDimsOp e) {
            AxisInfo i = get(e.getSrc());
            i.stride.insert(i.stride.begin() + e.getAxis(), int64_t(0));
            i.strideDivisibility.insert(
                i.strideDivisibility.begin() + e.getAxis(), kHuge);
            i.uniformRun.insert(i.uniformRun.begin() + e.getAxis(), kHuge);
            i.constant.insert(i.constant.begin() + e.getAxis(), true);
            return i;
          })
          .Case([&](BroadcastOp b) { return get(b.getSrc()); })
          .Case([&](ConvertLayoutOp c) { return get(c.getSrc()); })
          .Case([&](CastOp c) {
            // Integer widening keeps the affine form; anything else keeps
            // only constancy.
            AxisInfo i = get(c.getSrc());
            Type from = cast<TileType>(c.getSrc().getType()).getElementType();
            if (!(isa<IntegerType>(from) && isa<IntegerType>(type.getElementType()) &&
                  from.getIntOrFloatBitWidth() <= type.getElementTypeBitWidth()))
              for (unsigned d = 0; d < i.stride.size(); ++d)
                if (!i.stride[d] || *i.stride[d]) {
                  i.stride[d].reset();
                  i.strideDivisibility[d] = 0;
                }
            return i;
          })
          .Case<AddOp, SubOp, AddPtrOp>([&](Operation *o) {
            AxisInfo a = get(o->getOperand(0)), b = get(o->getOperand(1));
            AxisInfo i = unknown(rank);
            for (unsigned d = 0; d < rank; ++d) {
              if (a.stride[d] && b.stride[d])
                i.stride[d] = isa<SubOp>(o) ? *a.stride[d] - *b.stride[d]
                                            : *a.stride[d] + *b.stride[d];
              if (a.strideDivisibility[d] && b.strideDivisibility[d])
                i.strideDivisibility[d] =
                    std::min(a.strideDivisibility[d], b.strideDivisibility[d]);
            }
            combineConst(a, b, i);
            i.divisibility = std::min(a.divisibility, b.divisibility);
            return i;
          })
          .Case([&](MulOp m) {
            AxisInfo a = get(m.getLhs()), b = get(m.getRhs());
            std::optional<int64_t> ca = constantInt(m.getLhs()),
                                   cb = constantInt(m.getRhs());
            if (auto s = m.getRhs().getDefiningOp<SplatOp>())
              cb = constantInt(s.getSrc());
            if (auto s = m.getLhs().getDefiningOp<SplatOp>())
              ca = constantInt(s.getSrc());
            AxisInfo i = unknown(rank);
            combineConst(a, b, i);
            if (cb || ca) {
              const AxisInfo &x = cb ? a : b;
              int64_t c = cb ? *cb : *ca;
              for (unsigned d = 0; d < rank; ++d) {
                if (x.stride[d])
                  i.stride[d] = *x.stride[d] * c;
                i.strideDivisibility[d] =
                    std::min(kHuge, differenceDivisibility(x, d) * pow2Of(c));
              }
              i.divisibility = std::min(kHuge, x.divisibility * pow2Of(c));
            } else if (allConstant(a) && allConstant(b)) {
              i = uniform(rank, std::min(kHuge, a.divisibility * b.divisibility));
            } else if (allConstant(a) || allConstant(b)) {
              // x * s, s uniform at run time: still affine, each stride
              // (and the base) times s, so divisible by s's divisibility.
              const AxisInfo &x = allConstant(b) ? a : b;
              int64_t ds = allConstant(b) ? b.divisibility : a.divisibility;
              for (unsigned d = 0; d < rank; ++d)
                i.strideDivisibility[d] =
                    std::min(kHuge, differenceDivisibility(x, d) * ds);
              i.divisibility = std::min(kHuge, x.divisibility * ds);
            }
            return i;
          })
          .Case<CmpOp, AndOp, OrOp, XOrOp, WhereOp, MaxOp, MinOp, DivOp,
                RemOp>([&](Operation *o) {
            AxisInfo i = unknown(rank);
            i.constant.assign(rank, true);
            for (Value v : o->getOperands())
              if (isa<TileType>(v.getType())) {
                AxisInfo x = get(v);
                for (unsigned d = 0; d < rank; ++d)
                  i.constant[d] = i.constant[d] && x.constant[d];
              }
            for (unsigned d = 0; d < rank; ++d)
              if (i.constant[d])
                i.stride[d] = 0;
            i.uniformRun = uniformRuns(o, rank, get);
            return i;
          })
          .Default([&](Operation *) { return unknown(rank); });
  // A constant dimension has stride 0, and a stride of 0 is a constant
  // dimension (rows * stride with a run-time stride: constant along the
  // columns, so rows * stride + cols is contiguous along them).
  if (info.uniformRun.size() != rank)
    info.uniformRun.assign(rank, 1);
  for (unsigned d = 0; d < rank; ++d) {
    if (info.stride[d] && *info.stride[d] == 0)
      info.constant[d] = true;
    if (info.constant[d])
      info.stride[d] = 0;
    if (info.stride[d])
      info.strideDivisibility[d] = pow2Of(*info.stride[d]);
    if (info.constant[d])
      info.uniformRun[d] = kHuge;
  }
  infos[op->getResult(0)] = info;
}

std::optional<unsigned> AxisAnalysis::contiguousDim(Value ptr) const {
  const AxisInfo *p = lookup(ptr);
  if (!p)
    return std::nullopt;
  for (unsigned d = 0; d < p->stride.size(); ++d)
    if (p->stride[d] && *p->stride[d] == 1)
      return d;
  return std::nullopt;
}

int64_t AxisAnalysis::vectorWidth(Value ptr, Value mask, Value other,
                                  unsigned dim, int64_t maxVec) const {
  const AxisInfo *p = lookup(ptr);
  if (!p || !p->stride[dim] || *p->stride[dim] != 1)
    return 1;
  int64_t v = std::min(maxVec, p->divisibility);
  for (unsigned d = 0; d < p->stride.size(); ++d)
    if (d != dim) {
      // Each run along `dim` starts at base + k * stride[d]: aligned as
      // far as both are (a run-time row stride: as far as it is known to
      // be divisible).
      if (!p->strideDivisibility[d])
        return 1;
      v = std::min(v, p->strideDivisibility[d]);
    }
  for (Value m : {mask, other})
    if (m) {
      const AxisInfo *i = lookup(m);
      if (!i)
        return 1;
      v = std::min(v, i->uniformRun[dim]);
    }
  return std::max<int64_t>(1, v);
}
