//===- TileLayout.cpp - building and querying #tile.layout ----------------===//
#include "dialects/tile/TileLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::tile;

static SmallVector<int64_t> flatten(ArrayRef<Basis> bases) {
  SmallVector<int64_t> out;
  for (const Basis &b : bases)
    out.append(b.begin(), b.end());
  return out;
}

LayoutAttr mlir::tile::makeLayout(MLIRContext *ctx, unsigned rank,
                                  ArrayRef<Basis> regs, ArrayRef<Basis> lanes,
                                  ArrayRef<Basis> warps) {
  return LayoutAttr::get(ctx, rank, flatten(regs), flatten(lanes),
                         flatten(warps));
}

Basis mlir::tile::basisAt(ArrayRef<int64_t> flat, unsigned rank, unsigned i) {
  return Basis(flat.slice(i * rank, rank));
}

static SmallVector<Basis> unflatten(ArrayRef<int64_t> flat, unsigned rank) {
  SmallVector<Basis> out;
  for (unsigned i = 0; i < flat.size() / rank; ++i)
    out.push_back(basisAt(flat, rank, i));
  return out;
}

bool mlir::tile::isPowerOfTwoShape(ArrayRef<int64_t> shape) {
  return llvm::all_of(shape, [](int64_t d) { return llvm::isPowerOf2_64(d); });
}

namespace {
/// Builds a layout for `shape` from preferred bases: a basis that falls
/// outside the shape is dropped (registers) or zeroed (lanes, warps, which
/// then replicate); the uncovered part of each dimension is then covered by
/// extra register bases, dimensions taken in `fillOrder`.
struct LayoutBuilder {
  ArrayRef<int64_t> shape;
  SmallVector<Basis> regs, lanes, warps;

  bool fits(const Basis &b) const {
    for (size_t d = 0; d < b.size(); ++d)
      if (b[d] >= shape[d])
        return false;
    return true;
  }
  void reg(Basis b) {
    if (fits(b))
      regs.push_back(b);
  }
  void lane(Basis b) { lanes.push_back(fits(b) ? b : Basis(b.size(), 0)); }
  void warp(Basis b) { warps.push_back(fits(b) ? b : Basis(b.size(), 0)); }

  int64_t covered(unsigned d) const {
    int64_t c = 1;
    for (auto *kind : {&regs, &lanes, &warps})
      for (const Basis &b : *kind)
        if (b[d])
          c *= 2;
    return c;
  }
  void fill(ArrayRef<unsigned> order) {
    for (unsigned d : order)
      for (int64_t c = covered(d); c < shape[d]; c *= 2) {
        Basis b(shape.size(), 0);
        b[d] = c;
        regs.push_back(b);
      }
  }
  LayoutAttr get(MLIRContext *ctx) {
    return makeLayout(ctx, shape.size(), regs, lanes, warps);
  }
};

Basis b2(int64_t r, int64_t c) { return Basis{r, c}; }
} // namespace

/// log2 of the warp count.
static unsigned warpBits(int64_t numWarps) { return llvm::Log2_64(numWarps); }

LayoutAttr mlir::tile::getAccumulatorLayout(MLIRContext *ctx,
                                            ArrayRef<int64_t> shape,
                                            int64_t numWarps) {
  if (shape.size() == 1) {
    SmallVector<int64_t> s2 = {shape[0], 1};
    return sliceLayout(getAccumulatorLayout(ctx, s2, numWarps), 1);
  }
  // For an M x K tile with K % 16 == 0 this is also the mma.sync m16k16
  // A-fragment layout (a0a1: row g, cols 2t..2t+1; a2a3: row g+8; a4..a7:
  // cols +8), so P moves from one GEMM's result to the next's A operand
  // without data movement.
  LayoutBuilder b{shape};
  b.reg(b2(0, 1));
  b.reg(b2(8, 0));
  for (Basis l : {b2(0, 2), b2(0, 4), b2(1, 0), b2(2, 0), b2(4, 0)})
    b.lane(l);
  for (unsigned i = 0; i < warpBits(numWarps); ++i)
    b.warp(b2(16 << i, 0));
  b.fill({1, 0});
  return b.get(ctx);
}

LayoutAttr mlir::tile::getFp8DotALayout(MLIRContext *ctx,
                                        ArrayRef<int64_t> shape,
                                        int64_t numWarps) {
  LayoutBuilder b{shape};
  b.reg(b2(0, 1));
  b.reg(b2(0, 2));
  b.reg(b2(8, 0));
  b.reg(b2(0, 16));
  for (Basis l : {b2(0, 4), b2(0, 8), b2(1, 0), b2(2, 0), b2(4, 0)})
    b.lane(l);
  for (unsigned i = 0; i < warpBits(numWarps); ++i)
    b.warp(b2(16 << i, 0));
  b.fill({1, 0});
  return b.get(ctx);
}

LayoutAttr mlir::tile::getBlockedLayout(MLIRContext *ctx,
                                        ArrayRef<int64_t> shape,
                                        int64_t numWarps, unsigned dim,
                                        int64_t vec) {
  unsigned rank = shape.size();
  LayoutBuilder b{shape};
  auto along = [&](unsigned d, int64_t v) {
    Basis x(rank, 0);
    x[d] = v;
    return x;
  };
  int64_t c = 1;
  for (; c < vec && c < shape[dim]; c *= 2)
    b.reg(along(dim, c));
  // Lanes: along `dim` while it lasts, then along the other dimension.
  unsigned other = rank == 2 ? 1 - dim : dim;
  int64_t o = rank == 2 ? 1 : c;
  for (int i = 0; i < 5; ++i) {
    if (c < shape[dim]) {
      b.lane(along(dim, c));
      c *= 2;
    } else {
      b.lane(along(other, o));
      o *= 2;
    }
  }
  for (unsigned i = 0; i < warpBits(numWarps); ++i) {
    if (rank == 2 && o < shape[other]) {
      b.warp(along(other, o));
      o *= 2;
    } else {
      b.warp(along(dim, c));
      c *= 2;
    }
  }
  b.fill({dim, other});
  return b.get(ctx);
}

int64_t mlir::tile::leadingRegsAlong(LayoutAttr l, unsigned dim) {
  unsigned rank = l.getRank();
  int64_t n = 1;
  for (unsigned i = 0; i < l.getNumRegBits(); ++i) {
    Basis b = basisAt(l.getRegs(), rank, i);
    for (unsigned d = 0; d < rank; ++d)
      if (b[d] != (d == dim ? n : 0))
        return n;
    n *= 2;
  }
  return n;
}

LayoutAttr mlir::tile::getSplitColumnsLayout(MLIRContext *ctx,
                                             ArrayRef<int64_t> shape,
                                             int64_t numWarps) {
  int64_t m = shape[0], n = shape[1];
  int64_t warpsM = std::max<int64_t>(1, std::min(numWarps, m / 16));
  int64_t warpsN = numWarps / warpsM;
  while (warpsN > 1 && n / warpsN < 8)
    warpsN /= 2;
  int64_t perWarp = n / warpsN; // columns of one warp, a multiple of 8
  LayoutBuilder b{shape};
  b.reg(b2(0, 1));
  b.reg(b2(8, 0));
  for (Basis l : {b2(0, 2), b2(0, 4), b2(1, 0), b2(2, 0), b2(4, 0)})
    b.lane(l);
  for (int64_t c = 8; c < perWarp; c *= 2)
    b.reg(b2(0, c));
  for (int64_t w = 1; w < warpsM; w *= 2)
    b.warp(b2(16 * w, 0));
  for (int64_t w = 1; w < numWarps / warpsM; w *= 2)
    b.warp(w < warpsN ? b2(0, perWarp * w) : b2(m, 0)); // m: replicated
  b.fill({1, 0});
  return b.get(ctx);
}

LayoutAttr mlir::tile::getDefaultLayout(MLIRContext *ctx,
                                        ArrayRef<int64_t> shape,
                                        int64_t numWarps) {
  // 16 rows: the accumulator layout would copy the tile into every warp
  // (M = 16 decode rows: four copies at 4 warps, each warp doing all the
  // MMAs); split the columns among them instead. (Tiles of 32 or 48 rows
  // keep the accumulator layout: GPU-verified only for one row of warps.)
  if (shape.size() == 2 && shape[0] == 16 && numWarps > 1 && shape[1] >= 16)
    return getSplitColumnsLayout(ctx, shape, numWarps);
  return getAccumulatorLayout(ctx, shape, numWarps);
}

LayoutAttr mlir::tile::sliceLayout(LayoutAttr l, unsigned dim) {
  unsigned rank = l.getRank();
  auto drop = [&](ArrayRef<int64_t> flat, bool dropZero) {
    SmallVector<Basis> out;
    for (Basis b : unflatten(flat, rank)) {
      bool onlyDim = llvm::all_of(llvm::seq<unsigned>(0, rank), [&](unsigned d) {
        return d == dim || b[d] == 0;
      });
      b.erase(b.begin() + dim);
      if (dropZero && onlyDim)
        continue;
      out.push_back(b);
    }
    return out;
  };
  return makeLayout(l.getContext(), rank - 1, drop(l.getRegs(), true),
                    drop(l.getLanes(), false), drop(l.getWarps(), false));
}

LayoutAttr mlir::tile::expandLayout(LayoutAttr l, unsigned axis) {
  unsigned rank = l.getRank();
  auto ins = [&](ArrayRef<int64_t> flat) {
    SmallVector<Basis> out = unflatten(flat, rank);
    for (Basis &b : out)
      b.insert(b.begin() + axis, 0);
    return out;
  };
  return makeLayout(l.getContext(), rank + 1, ins(l.getRegs()),
                    ins(l.getLanes()), ins(l.getWarps()));
}

LayoutAttr mlir::tile::transposeLayout(LayoutAttr l) {
  auto swap = [&](ArrayRef<int64_t> flat) {
    SmallVector<Basis> out = unflatten(flat, 2);
    for (Basis &b : out)
      std::swap(b[0], b[1]);
    return out;
  };
  return makeLayout(l.getContext(), 2, swap(l.getRegs()), swap(l.getLanes()),
                    swap(l.getWarps()));
}

LayoutAttr mlir::tile::broadcastSourceLayout(LayoutAttr dst,
                                             ArrayRef<int64_t> srcShape) {
  unsigned rank = dst.getRank();
  auto fix = [&](ArrayRef<int64_t> flat, bool dropZero) {
    SmallVector<Basis> out;
    for (Basis b : unflatten(flat, rank)) {
      bool touched = false;
      for (unsigned d = 0; d < rank; ++d)
        if (srcShape[d] == 1 && b[d]) {
          b[d] = 0;
          touched = true;
        }
      bool zero = llvm::all_of(b, [](int64_t v) { return v == 0; });
      if (dropZero && touched && zero)
        continue;
      out.push_back(b);
    }
    return out;
  };
  return makeLayout(dst.getContext(), rank, fix(dst.getRegs(), true),
                    fix(dst.getLanes(), false), fix(dst.getWarps(), false));
}

SmallVector<int64_t> mlir::tile::regCoords(LayoutAttr l, int64_t reg) {
  unsigned rank = l.getRank();
  SmallVector<int64_t> c(rank, 0);
  for (unsigned i = 0; i < l.getNumRegBits(); ++i)
    if (reg & (int64_t(1) << i))
      for (unsigned d = 0; d < rank; ++d)
        c[d] ^= l.getRegs()[i * rank + d];
  return c;
}

bool mlir::tile::sameThreadMapping(LayoutAttr a, LayoutAttr b) {
  return a.getRank() == b.getRank() && a.getLanes() == b.getLanes() &&
         a.getWarps() == b.getWarps();
}

std::optional<SmallVector<int64_t>>
mlir::tile::registerPermutation(LayoutAttr src, LayoutAttr dst) {
  if (!sameThreadMapping(src, dst))
    return std::nullopt;
  llvm::DenseMap<int64_t, int64_t> byCoord;
  auto key = [](ArrayRef<int64_t> c) {
    int64_t k = 0;
    for (int64_t v : c)
      k = k * (int64_t(1) << 24) + v;
    return k;
  };
  for (int64_t r = 0; r < src.getNumRegs(); ++r)
    byCoord.try_emplace(key(regCoords(src, r)), r);
  SmallVector<int64_t> perm;
  for (int64_t r = 0; r < dst.getNumRegs(); ++r) {
    auto it = byCoord.find(key(regCoords(dst, r)));
    if (it == byCoord.end())
      return std::nullopt;
    perm.push_back(it->second);
  }
  return perm;
}

static bool isZero(const Basis &b) {
  return llvm::all_of(b, [](int64_t v) { return v == 0; });
}

LayoutAttr mlir::tile::vectorizeAlong(LayoutAttr l, unsigned dim, int64_t vec) {
  unsigned rank = l.getRank();
  SmallVector<Basis> regs = unflatten(l.getRegs(), rank);
  SmallVector<Basis> lanes = unflatten(l.getLanes(), rank);
  SmallVector<Basis> lead;
  for (int64_t n = 1; n < vec; n *= 2) {
    Basis b(rank, 0);
    b[dim] = n;
    lead.push_back(b);
  }
  auto isLead = [&](const Basis &b) { return llvm::is_contained(lead, b); };
  // Only along `dim`: the value along it (0 for other bases).
  auto along = [&](const Basis &b) {
    for (unsigned d = 0; d < rank; ++d)
      if (d != dim && b[d])
        return int64_t(0);
    return b[dim];
  };
  for (const Basis &t : lead) {
    if (llvm::is_contained(regs, t))
      continue;
    auto lane = llvm::find(lanes, t);
    if (lane == lanes.end())
      return {};
    // The partner: the smallest register basis along `dim` that is not a
    // lead one (lanes then cover consecutive vectors), else any other.
    auto cost = [&](unsigned k) {
      int64_t v = along(regs[k]);
      return v ? v : std::numeric_limits<int64_t>::max();
    };
    int best = -1;
    for (unsigned i = 0; i < regs.size(); ++i)
      if (!isLead(regs[i]) && !isZero(regs[i]) &&
          (best < 0 || cost(i) < cost(unsigned(best))))
        best = int(i);
    if (best < 0)
      return {};
    std::swap(regs[best], *lane);
  }
  SmallVector<Basis> ordered(lead);
  for (const Basis &b : regs)
    if (!isLead(b))
      ordered.push_back(b);
  return makeLayout(l.getContext(), rank, ordered, lanes,
                    unflatten(l.getWarps(), rank));
}

std::optional<SmallVector<std::pair<unsigned, unsigned>>>
mlir::tile::laneSwaps(LayoutAttr src, LayoutAttr dst, LayoutAttr &after) {
  unsigned rank = src.getRank();
  if (dst.getRank() != rank || src.getWarps() != dst.getWarps() ||
      src.getRegs().size() != dst.getRegs().size() ||
      src.getLanes().size() != dst.getLanes().size())
    return std::nullopt;
  SmallVector<Basis> regs = unflatten(src.getRegs(), rank);
  SmallVector<Basis> lanes = unflatten(src.getLanes(), rank);
  SmallVector<std::pair<unsigned, unsigned>> swaps;
  for (unsigned j = 0; j < lanes.size(); ++j) {
    Basis want = basisAt(dst.getLanes(), rank, j);
    if (lanes[j] == want)
      continue;
    auto reg = llvm::find(regs, want);
    if (reg == regs.end() || isZero(want) || isZero(lanes[j]))
      return std::nullopt;
    swaps.push_back({unsigned(reg - regs.begin()), j});
    std::swap(*reg, lanes[j]);
  }
  after = makeLayout(src.getContext(), rank, regs, lanes,
                     unflatten(src.getWarps(), rank));
  return swaps;
}
