//===- TmaBox.h - which accesses are TMA boxes, and where they start -*- C++ -*-===//
//
// Shared by tile-tma-loads (TmaLoads.cpp), its copies (TmaCopies.cpp) and
// its stores (TmaStores.cpp). An access is a TMA box (matchBox) when it
//   * reads or writes a 2-D f16/bf16 box of a row-major tensor: stride 1
//     along one dimension (a row, a multiple of 64 elements), rows a stride
//     apart along the other: a constant, or a run-time product of integer
//     kernel arguments and a constant (`heads * D`) that is a multiple of 16
//     bytes, which the launcher multiplies out (manifest `strideArgs`);
//   * moves in its loop only through the row index Y (pointer =
//     loop-invariant base + Y * stride + invariant offsets);
//   * is masked exactly by `Y < bound` (bound loop-invariant, Y with stride
//     1 and, for loads, a provably non-negative start) with `other` zero
//     or absent;
//   * starts at a pointer argument of the kernel plus whole rows, or plus
//     whole rows and a first column where the offset and the row stride
//     are multiples of the box's width (a head's columns in a row of
//     [B, S, H, D]): no box straddles two rows, as TMA reads columns past a
//     row as zero where the load would read the next row.
// A ring's box may instead move along its rows (TmaColumns.cpp): masked
// exactly by `X < bound` with X the column index (stride 1, non-negative),
// rows a loop-invariant `Y * stride`, the base whole rows, and the bound
// provably at most the row stride (a constant, or `require(stride >=
// bound)` on kernel arguments): every column the mask keeps lies in its
// row, and the wait zeroes the columns from the bound on.
// The launcher maps the whole allocation behind the argument as rows of the
// stride (rows as long as the stride where boxes start at a column).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "lib/Analysis/AxisInfo.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile::tma {

/// What a load must look like to become a TMA copy.
struct Match {
  LoadOp load;      ///< null for a store (then `ptr` is the store's)
  Value ptr;        ///< the access's pointer tile
  DotOp dot;
  unsigned inner;   ///< contiguous dimension of the tile
  int64_t stride;   ///< elements between rows (with strideArgs: a factor)
  Value rowIndex;   ///< 1-D tile Y: the row of each element along the outer dim
  Value bound;      ///< scalar i32: rows >= bound are masked off
  /// A row stride known at run time: the scalar (null for a constant one)
  /// and the integer kernel arguments whose product times `stride` it is
  /// (the launcher builds the tensor map from them).
  Value strideValue;
  SmallVector<int64_t> strideArgs;
  /// Elements of a row of the tensor where fewer than the box's (a box
  /// tile-pad-shapes padded: the copy reads zeros past them); 0 otherwise.
  int64_t rowElems = 0;
  /// A ring's readers, `dot` first (B operands, some through tile.trans).
  SmallVector<DotOp> dots = {};
  /// A box moving along its rows: X, the column of each element along the
  /// inner dim (the mask is `X < bound`; `rowIndex` is loop-invariant).
  Value colIndex = {};
  /// The index the loop moves the box by: X for such a box, else Y.
  Value moving() const { return colIndex ? colIndex : rowIndex; }
};

/// Where the copies of `mt` read: the kernel argument, the row of it where
/// the masked tensor's row 0 sits, and the box's first row `y0` (the
/// induction variable mapped by `map`; no loop: a load outside loops),
/// built at `b`.
struct BoxOrigin {
  Value arg, rowBase, y0;
  Value col; ///< first column (null: 0, the map spans the box's columns)
  Value x0 = {}; ///< a box moving along its rows: its first X
  /// The moving index's first value (x0 or y0).
  Value first() const { return x0 ? x0 : y0; }
};

/// Without a loop (an access outside loops) every value counts as defined
/// outside.
bool definedOutside(scf::ForOp loop, Value v);
/// Defined outside `loop`, or by pure ops of its body from such values.
bool isInvariant(scf::ForOp loop, Value v);
/// Whether `c` widens an integer tile (i32 -> i64: offsets computed in i32
/// and added to an i64 base).
bool widensInt(CastOp c);
/// The integer constant `v` is (scalar, or a splat or full tile).
std::optional<int64_t> constantOf(Value v);

/// The box of an access through `ptr` (a load's mask and other, or a
/// store's mask) in `loop` (null: outside loops); on failure `why` says
/// what does not hold.
/// With `allowColumns` (rings) also a box moving along its rows.
std::optional<Match> matchBox(scf::ForOp loop, Value ptr, Value mask,
                              Value other, TileType type,
                              const AxisAnalysis &axes,
                              bool needNonNegativeRows = true,
                              std::string *why = nullptr,
                              bool allowColumns = false);
/// The box check of matchBox for a mask `X < bound` along the rows
/// (TmaColumns.cpp); `stride` is the constant row stride where known.
std::optional<Match> matchColumnBox(scf::ForOp loop, Value ptr, Value mask,
                                    TileType type, const AxisAnalysis &axes,
                                    unsigned inner,
                                    std::optional<int64_t> stride,
                                    std::string *why);
/// The run-time row stride of `ptr` (row index `y`): `strideValue`, its
/// argument numbers `strideArgs` and constant factor (returned), or a
/// failure with `why`; `bytes` per element.
std::optional<int64_t> runtimeStride(scf::ForOp loop, Value ptr, Value y,
                                     unsigned inner, int64_t bytes,
                                     const AxisAnalysis &axes,
                                     Value &strideValue,
                                     SmallVectorImpl<int64_t> &strideArgs,
                                     std::string &why);
/// Whether `v` is computed from `y` (TmaRows.cpp).
bool dependsOn(Value v, Value y);
/// Scalars a row or column index may start at: provably >= 0.
bool nonNegative(Value v);
/// The row stride of the pointer chain `ptr` where its row term is
/// `Y * splat(s)` with `s` not a constant: `s`; null otherwise (TmaRows.cpp).
Value runtimeRowStride(Value ptr, Value y, unsigned inner);
/// `s` as a constant times a product of integer (i32/i64, signed) kernel
/// arguments, whose numbers are appended to `args`.
std::optional<int64_t> strideMonomial(Value s, SmallVectorImpl<int64_t> &args);
/// Every addend of the pointer chain `ptr` is loop-invariant except exactly
/// one row offset of `y` (`stride`, or a splat of `strideValue`, rows).
bool pointerMovesOnlyByRow(scf::ForOp loop, Value ptr, Value y, unsigned inner,
                           int64_t stride, Value strideValue);
/// Every addend of the pointer chain `ptr` is loop-invariant except exactly
/// one addend that depends on `y`, for which `isTerm` holds.
bool pointerMovesOnlyBy(scf::ForOp loop, Value ptr, Value y,
                        function_ref<bool(Value)> isTerm);

/// matchBox of a load that `dot` reads.
std::optional<Match> matchLoadBox(scf::ForOp loop, LoadOp load, DotOp dot,
                                  const AxisAnalysis &axes,
                                  std::string *why = nullptr,
                                  bool allowColumns = false);

/// The loop over programs of a persistent kernel (tile-persistent's, in
/// the kernel's body) whose body holds `op`; null otherwise.
scf::ForOp programLoopOf(Operation *op);

/// The scalar value of tile `v` at coordinate 0 (iota -> 0), built at `b`
/// with the values of `map` substituted (the induction variable).
FailureOr<Value> originOf(OpBuilder &b, scf::ForOp loop, Value v,
                          IRMapping &map);
/// Where the copies or the store of `mt` read or write, built at `b`.
FailureOr<BoxOrigin> boxOrigin(OpBuilder &b, scf::ForOp loop, Match mt,
                               IRMapping &map, std::string *why = nullptr);
/// Why boxOrigin cannot be built for `mt` (empty when it can): a dry run
/// (matchBox refuses such a box with this reason).
std::string originProblem(scf::ForOp loop, const Match &mt);
/// What the slot of a ring holds, as the lowering's tensor map and buffer
/// see it (the argument read, a first column or not, the box, its strides
/// and element type): rings whose keys are equal may share a slot.
struct SlotKey {
  unsigned arg;
  bool col, columns;
  SmallVector<int64_t> box;
  unsigned inner;
  int64_t stride;
  SmallVector<int64_t> strideArgs;
  int64_t rowElems;
  Type elt;
  bool operator==(const SlotKey &o) const {
    return std::tie(arg, col, columns, box, inner, stride, strideArgs,
                    rowElems, elt) == std::tie(o.arg, o.col, o.columns, o.box,
                                               o.inner, o.stride, o.strideArgs,
                                               o.rowElems, o.elt);
  }
};
/// The key of the ring of `mt` in `loop`; none where its origin cannot be
/// built (matchRing refuses such a load).
std::optional<SlotKey> slotKey(scf::ForOp loop, const Match &mt);
/// The `stride_args` attribute of `mt`'s ops (null for a constant stride).
DenseI64ArrayAttr strideArgsAttr(OpBuilder &b, const Match &mt);

/// The box a copy of `mt` fills: the load's tile, less the 128-byte slabs
/// along its contiguous dimension that no reader uses (every reader a dot
/// that records the K or N it uses there, tile-pad-shapes' k_used/n_used).
SmallVector<int64_t> boxShape(const Match &mt);
/// The `row_elems` attribute of `mt`'s ops (null unless padded).
IntegerAttr rowElemsAttr(OpBuilder &b, const Match &mt);

/// Loads as copies (TmaCopies.cpp).
/// A load in a loop body that only B operands of dots read (directly or
/// through tile.trans), as a ring.
std::optional<Match> matchRing(scf::ForOp loop, LoadOp load,
                               const AxisAnalysis &axes,
                               std::string *why = nullptr);
/// Whether `load` is outside loops (or once per program in the loop over
/// programs) and read as the A operand of dots in `slotDots`, and otherwise
/// only as the B operand of dots.
/// Otherwise false, with the reason in `why`.
bool readOnlyAsSlotDotA(LoadOp load, const DenseSet<Operation *> &slotDots,
                        std::string *why = nullptr);
/// Such a load, K contiguous, as one copy into a one-stage slot; on
/// failure `why` says what does not hold.
std::optional<Match> matchA(LoadOp load, const AxisAnalysis &axes,
                            std::string *why = nullptr);
/// Whether `loop` may hold a ring: in no loop, or in the body of a loop
/// itself in no loop (`nested`: the ring continues across it).
bool ringPlacement(scf::ForOp loop, bool &nested);
/// Slots of rings (TmaRingSlots.cpp): `slotOf` each ring's, `members` the
/// rings of each slot in program order. A ring shares the slot of rings of
/// loops that run before its own (siblings in one block) where their
/// SlotKeys are equal; otherwise it gets its own.
struct RingSlots {
  SmallVector<int64_t> slotOf;
  SmallVector<SmallVector<unsigned>> members;
};
RingSlots assignRingSlots(ArrayRef<std::pair<scf::ForOp, Match>> rings);
/// The count each ring's copies start from (null: 0): the iterations that
/// the earlier loops of its slot ran, plus, for a loop in the loop over
/// programs (`nestedLoops`), the count that loop carries (a new iter_arg).
SmallVector<Value> ringBases(ArrayRef<std::pair<scf::ForOp, Match>> rings,
                             const RingSlots &slots,
                             const llvm::SetVector<Operation *> &nestedLoops);
/// `mt` as a ring of `stages` stages in slot `slot`, copies counted from
/// `base` (null: 0).
LogicalResult rewriteRing(scf::ForOp loop, Match mt, int64_t slot,
                          int64_t stages, Value base);
/// A load of matchA as one copy into one-stage slot `slot` and its wait.
LogicalResult rewriteA(Match mt, int64_t slot);

/// Pieces of the rewrites (TmaCopies.cpp), shared with TmaSlotA.cpp.
/// Copy `iter` of the box whose first row (first column, for a box moving
/// along its rows) is `y`, where `pred` holds.
void createCopy(OpBuilder &b, Match mt, const BoxOrigin &o, Value y,
                Value iter, Value pred, int64_t slot, int64_t stages);
/// The load becomes a wait for stage `stage` (barrier parity `parity`),
/// keeping the rows before `mt.bound` of the box whose first row is `y`
/// (the columns, of a box moving along its rows whose first column is y).
void replaceByWait(OpBuilder &b, Match mt, Value stage, Value parity,
                   Value y, int64_t slot);
/// A new i32 iter_arg of `loop`, 0 at entry, that each iteration adds
/// `step(b, loc)` to (built at the end of the body); returns it. The
/// loop's discardable attributes (tile.persistent) stay.
Value addCounter(scf::ForOp loop,
                 function_ref<Value(OpBuilder &, Location)> step);

/// A store outside loops (or once per program) of a box along its rows.
std::optional<Match> matchStore(StoreOp st, const AxisAnalysis &axes);
/// `if (0 <= y0 && y0 + rows <= bound) tma_store else store` in slot `slot`.
LogicalResult rewriteStore(StoreOp st, Match mt, int64_t slot);

} // namespace mlir::tile::tma
