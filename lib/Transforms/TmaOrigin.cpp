//===- TmaOrigin.cpp - where a TMA box starts: argument, row, column ------===//
//
// The scalars a copy or store of a matched box (TmaBox.h) needs, built once
// before its loop (or at the access): the kernel argument, the row of the
// argument where the masked tensor's row 0 sits, and where that is not
// provably whole rows the first column (offset % stride, once per program).
// Cost model: a few integer ops per program; a 64-bit division where the
// offset is not provably whole rows or the stride is known at run time.
//
//===----------------------------------------------------------------------===//
#include "lib/Transforms/TmaBox.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

namespace mlir::tile::tma {

/// Whether scalar `v` is provably a multiple of `k`.
bool multipleOf(Value v, int64_t k) {
  if (auto c = constantOf(v))
    return *c % k == 0;
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<arith::MulIOp>(def))
    return multipleOf(def->getOperand(0), k) || multipleOf(def->getOperand(1), k);
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
    return multipleOf(def->getOperand(0), k) && multipleOf(def->getOperand(1), k);
  if (isa_and_nonnull<arith::ExtSIOp>(def))
    return multipleOf(def->getOperand(0), k);
  return false;
}

/// Whether scalar `v` is provably a multiple of the scalar `s` (both
/// through sign extension): a product with s as a factor, sums of them, 0.
static bool multipleOfScalar(Value v, Value s) {
  while (auto e = s.getDefiningOp<arith::ExtSIOp>())
    s = e.getIn();
  while (auto e = v.getDefiningOp<arith::ExtSIOp>())
    v = e.getIn();
  if (v == s || constantOf(v) == std::optional<int64_t>(0))
    return true;
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<arith::MulIOp>(def))
    return multipleOfScalar(def->getOperand(0), s) ||
           multipleOfScalar(def->getOperand(1), s);
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
    return multipleOfScalar(def->getOperand(0), s) &&
           multipleOfScalar(def->getOperand(1), s);
  return false;
}

/// Where a box's masked tensor starts, counted from the kernel argument
/// `arg`: its first row, and its first column (null when the offset is
/// provably whole rows: the tensor map then spans only the box's columns).
struct ArgumentRows {
  Value arg, row, col;
};

/// Splits the scalar pointer `p` (a chain of tile.addptr) into the kernel
/// argument it starts from and its offset in rows of `stride` elements
/// (`stride64`, i64, when known only at run time), building at `b` the i32
/// row (offset / stride) and, unless every offset is provably whole rows,
/// the i32 column (offset % stride: once per program, where a head's
/// columns sit inside a row of [B, S, H, D]).
/// With `columns` (a box moving along its rows) the offset must be
/// provably whole rows (the box's columns are counted from 0).
FailureOr<ArgumentRows> splitRows(OpBuilder &b, Location loc, Value p,
                                  int64_t stride, Value stride64,
                                  int64_t width, std::string *why,
                                  bool columns) {
  auto fail = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return failure();
  };
  SmallVector<Value> offsets;
  bool wholeRows = !stride64, inWidths = stride % width == 0;
  if (columns)
    wholeRows = true;
  while (auto add = p.getDefiningOp<AddPtrOp>()) {
    wholeRows = wholeRows && (stride64 && columns
                                  ? multipleOfScalar(add.getOffset(), stride64)
                                  : multipleOf(add.getOffset(), stride));
    inWidths = inWidths && multipleOf(add.getOffset(), width);
    offsets.push_back(add.getOffset());
    p = add.getPtr();
  }
  auto arg = dyn_cast<BlockArgument>(p);
  if (!arg || !arg.getOwner()->isEntryBlock() ||
      !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return fail("its address does not start at a pointer argument of the "
                "kernel");
  if (columns && !wholeRows)
    return fail("it moves along its rows from a base the compiler cannot "
                "prove is whole rows (its columns must count from a row's "
                "start)");
  // A box that starts inside a row must end there (TMA reads columns past
  // the row as zero, where the load would read the next row): provable
  // when the row stride and the offset are multiples of the box's width.
  if (!wholeRows && !inWidths)
    return fail("its box may straddle two rows: the offset from the "
                "argument is not provably whole rows, nor are it and the "
                "row stride multiples of the box's " +
                std::to_string(width) + " columns");
  auto i64 = b.getI64Type();
  Value sum = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  for (Value o : offsets) {
    if (!o.getType().isInteger(64))
      o = arith::ExtSIOp::create(b, loc, i64, o);
    sum = arith::AddIOp::create(b, loc, sum, o);
  }
  Value s = stride64 ? stride64
                     : Value(arith::ConstantOp::create(
                           b, loc, b.getI64IntegerAttr(stride)));
  Value rows = arith::DivSIOp::create(b, loc, sum, s);
  Value col;
  if (!wholeRows)
    col = arith::TruncIOp::create(b, loc, b.getI32Type(),
                                  arith::RemSIOp::create(b, loc, sum, s));
  return ArgumentRows{arg, arith::TruncIOp::create(b, loc, b.getI32Type(), rows),
                      col};
}

/// `p` addresses row `y` of a box of rows `stride` (or `stride64`) elements
/// apart: splitRows of p - y * stride.
FailureOr<ArgumentRows> argumentRows(OpBuilder &b, Location loc, Value p,
                                     Value y, int64_t stride, Value stride64,
                                     int64_t width, std::string *why,
                                     bool columns) {
  Value s = stride64 ? stride64
                     : Value(arith::ConstantOp::create(
                           b, loc, b.getI64IntegerAttr(stride)));
  Value back = arith::SubIOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)),
      arith::MulIOp::create(
          b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), y), s));
  return splitRows(b, loc, AddPtrOp::create(b, loc, p.getType(), p, back),
                   stride, stride64, width, why, columns);
}

/// True when nothing in `loop` writes global memory (shared-memory copies
/// of other rings may already be there).
static bool writesGlobal(scf::ForOp loop) {
  return loop.getBody()
      ->walk([](Operation *op) {
        return isa<StoreOp, AtomicAddOp, ScalarStoreOp, TmaStoreOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// A scalar load in the loop body (a block index read from a table, as a
/// block-sparse kernel's K/V rows are): read again for the iteration `map`
/// gives, which is allowed where the loop writes no global memory (the
/// table cannot change). The copy of an iteration past the loop's end is
/// never issued, but its address is computed, so the read is masked by
/// `iv < ub` (it would otherwise read past a table's last row).
FailureOr<Value> loadedOrigin(OpBuilder &b, scf::ForOp loop, ScalarLoadOp l,
                              IRMapping &map) {
  if (l->getParentRegion() != &loop.getRegion() || writesGlobal(loop))
    return failure();
  Location loc = l.getLoc();
  SmallVector<Value> ops;
  for (Value o : l->getOperands()) {
    FailureOr<Value> x = originOf(b, loop, o, map);
    if (failed(x))
      return failure();
    ops.push_back(*x);
  }
  Value iv = map.lookupOrDefault(loop.getInductionVar());
  Value inRange = arith::CmpIOp::create(
      b, loc,
      loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                            : arith::CmpIPredicate::slt,
      iv, loop.getUpperBound());
  Value mask = l.getMask() ? Value(arith::AndIOp::create(
                                 b, loc, map.lookupOrDefault(l.getMask()),
                                 inRange))
                           : inRange;
  Value out = ScalarLoadOp::create(
      b, loc, l.getType(), map.lookupOrDefault(l.getPtr()), mask,
      l.getOther() ? map.lookupOrDefault(l.getOther()) : Value());
  map.map(l.getResult(), out);
  return out;
}

bool widensInt(CastOp c) {
  auto from = dyn_cast<IntegerType>(
      cast<TileType>(c.getOperand().getType()).getElementType());
  auto to = dyn_cast<IntegerType>(cast<TileType>(c.getType()).getElementType());
  return from && to && from.getWidth() < to.getWidth();
}

/// Builds the scalar value of tile `v` at coordinate 0 (iota -> 0), with
/// the values of `map` substituted (the induction variable).
FailureOr<Value> originOf(OpBuilder &b, scf::ForOp loop, Value v,
                          IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Location loc = v.getLoc();
  auto recur = [&](Value x) { return originOf(b, loop, x, map); };
  if (!isa<TileType>(v.getType())) {
    if (definedOutside(loop, v))
      return v;
    Operation *def = v.getDefiningOp();
    if (auto l = dyn_cast_or_null<ScalarLoadOp>(def); l && loop)
      return loadedOrigin(b, loop, l, map);
    if (!def || !isPure(def) || def->getNumRegions() || def->getNumResults() != 1)
      return failure();
    for (Value o : def->getOperands())
      if (failed(recur(o)))
        return failure();
    Operation *c = b.clone(*def, map);
    return c->getResult(0);
  }
  Operation *def = v.getDefiningOp();
  Value out;
  if (auto s = dyn_cast_or_null<SplatOp>(def)) {
    FailureOr<Value> x = recur(s.getOperand());
    if (failed(x))
      return failure();
    out = *x;
  } else if (isa_and_nonnull<IotaOp>(def)) {
    out = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(cast<TileType>(v.getType()).getElementType(), 0));
  } else if (auto f = dyn_cast_or_null<FullOp>(def)) {
    out = arith::ConstantOp::create(b, loc, cast<TypedAttr>(f.getValue()));
  } else if (isa_and_nonnull<ExpandDimsOp, BroadcastOp>(def)) {
    FailureOr<Value> x = recur(def->getOperand(0));
    if (failed(x))
      return failure();
    out = *x;
  } else if (auto c = dyn_cast_or_null<CastOp>(def); c && widensInt(c)) {
    // An integer widening: offsets computed in i32 and added to an i64
    // base.
    FailureOr<Value> x = recur(c.getOperand());
    if (failed(x))
      return failure();
    Type to = cast<TileType>(c.getType()).getElementType();
    out = c.getIsUnsigned() ? Value(arith::ExtUIOp::create(b, loc, to, *x))
                            : Value(arith::ExtSIOp::create(b, loc, to, *x));
  } else if (isa_and_nonnull<AddOp, MulOp, AddPtrOp>(def)) {
    FailureOr<Value> l = recur(def->getOperand(0));
    FailureOr<Value> r = failed(l) ? l : recur(def->getOperand(1));
    if (failed(r))
      return failure();
    if (isa<AddPtrOp>(def))
      out = AddPtrOp::create(b, loc, l->getType(), *l, *r);
    else if (isa<AddOp>(def))
      out = arith::AddIOp::create(b, loc, *l, *r);
    else
      out = arith::MulIOp::create(b, loc, *l, *r);
  } else {
    return failure();
  }
  map.map(v, out);
  return out;
}

FailureOr<BoxOrigin> boxOrigin(OpBuilder &b, scf::ForOp loop, Match mt,
                               IRMapping &map, std::string *why) {
  // A box moving along its rows: its first column x0, and the pointer of
  // column 0 (whose offset must be whole rows).
  Value x0;
  IRMapping atColumn0;
  if (mt.colIndex) {
    FailureOr<Value> x = originOf(b, loop, mt.colIndex, map);
    if (failed(x)) {
      if (why)
        *why = "its first column is not computed by pure integer ops the "
               "pass can rebuild";
      return failure();
    }
    x0 = *x;
    atColumn0 = map;
    atColumn0.map(mt.colIndex, arith::ConstantOp::create(
                                   b, mt.ptr.getLoc(), b.getI32IntegerAttr(0)));
  }
  FailureOr<Value> p0 = originOf(b, loop, mt.ptr, mt.colIndex ? atColumn0 : map);
  FailureOr<Value> y0 = failed(p0) ? p0 : originOf(b, loop, mt.rowIndex, map);
  if (failed(y0)) {
    if (why)
      *why = "its first address is not computed by pure integer and pointer "
             "ops the pass can rebuild";
    return failure();
  }
  Value stride64;
  if (mt.strideValue) {
    FailureOr<Value> s = originOf(b, loop, mt.strideValue, map);
    if (failed(s))
      return failure();
    stride64 = s->getType().isInteger(64)
                   ? *s
                   : arith::ExtSIOp::create(b, mt.ptr.getLoc(), b.getI64Type(), *s);
  }
  auto type = cast<TileType>(mt.ptr.getType());
  FailureOr<ArgumentRows> split =
      argumentRows(b, mt.ptr.getLoc(), *p0, *y0, mt.stride, stride64,
                   type.getDimSize(mt.inner), why, bool(mt.colIndex));
  if (failed(split))
    return failure();
  // Past a padded box's W columns TMA must read zeros: the end of a row,
  // not the next columns of a longer one.
  if (split->col && mt.rowElems) {
    if (why)
      *why = "its box is padded (rows of " + std::to_string(mt.rowElems) +
             " elements) and starts inside a longer row";
    return failure();
  }
  return BoxOrigin{split->arg, split->row, *y0, split->col, x0};
}

/// boxOrigin of `mt` built into a scratch block and erased after: `seen`
/// gets the origin while it exists; returns why it cannot be built (empty
/// when it can).
static std::string dryOrigin(scf::ForOp loop, const Match &mt,
                             function_ref<void(const BoxOrigin &)> seen) {
  Block scratch;
  OpBuilder b(mt.ptr.getContext());
  b.setInsertionPointToEnd(&scratch);
  IRMapping map;
  if (loop)
    map.map(loop.getInductionVar(), loop.getLowerBound());
  std::string why;
  FailureOr<BoxOrigin> o = boxOrigin(b, loop, mt, map, &why);
  if (succeeded(o))
    seen(*o);
  for (Operation &op : scratch)
    op.dropAllReferences();
  while (!scratch.empty())
    scratch.back().erase();
  return succeeded(o) ? std::string() : why;
}

/// Why boxOrigin cannot be built for `mt` (empty when it can): a dry run
/// into a scratch block, erased after.
std::string originProblem(scf::ForOp loop, const Match &mt) {
  return dryOrigin(loop, mt, [](const BoxOrigin &) {});
}

std::optional<SlotKey> slotKey(scf::ForOp loop, const Match &mt) {
  std::optional<SlotKey> key;
  (void)dryOrigin(loop, mt, [&](const BoxOrigin &o) {
    key = SlotKey{cast<BlockArgument>(o.arg).getArgNumber(),
                  bool(o.col),
                  bool(mt.colIndex),
                  boxShape(mt),
                  mt.inner,
                  mt.stride,
                  mt.strideArgs,
                  mt.rowElems,
                  cast<TileType>(mt.ptr.getType()).getElementType()};
  });
  return key;
}

IntegerAttr rowElemsAttr(OpBuilder &b, const Match &mt) {
  return mt.rowElems ? b.getI64IntegerAttr(mt.rowElems) : IntegerAttr();
}

DenseI64ArrayAttr strideArgsAttr(OpBuilder &b, const Match &mt) {
  return mt.strideArgs.empty() ? DenseI64ArrayAttr()
                               : b.getDenseI64ArrayAttr(mt.strideArgs);
}


} // namespace mlir::tile::tma
