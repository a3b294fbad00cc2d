//===- TileOps.td - tile dialect operations ---------------*- tablegen -*-===//
#ifndef TILE_OPS_TD
#define TILE_OPS_TD

include "TileTypes.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Program ids
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "Index of this program along a grid axis";
  let description = [{
    Returns the index of the running program (CTA) along grid axis 0, 1 or 2.

    ```mlir
    %pid = tile.program_id 0 : i32
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "Number of programs along a grid axis";
  let description = [{
    Returns the grid size along axis 0, 1 or 2.

    ```mlir
    %n = tile.num_programs 1 : i32
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Tile creation
//===----------------------------------------------------------------------===//

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "The tile [0, 1, …, N-1]";
  let description = [{
    A one-dimensional integer tile holding 0 … N-1.

    ```mlir
    %r = tile.iota : !tile.tile<128xi32>
    ```
  }];
  let results = (outs Tile_IndexTile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_FullOp : Tile_Op<"full", [Pure, ConstantLike]> {
  let summary = "A tile filled with one constant";
  let description = [{
    A tile whose every element is `value` (`zeros` is `full` with 0).

    ```mlir
    %m = tile.full -0x7F800000 : !tile.tile<128xf32>   // -inf
    %z = tile.full 0.0 : !tile.tile<128x64xf32>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Tile_ValueTile:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"element type matches the scalar", "result", "src",
                   "::llvm::cast<::mlir::tile::TileType>($_self).getElementType()">]> {
  let summary = "A tile filled with a scalar value";
  let description = [{
    Broadcasts a run-time scalar (or pointer) to every element of a tile.

    ```mlir
    %t = tile.splat %x : !tile.tile<64xf32>
    ```
  }];
  let arguments = (ins Tile_Scalar:$src);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure]> {
  let summary = "Insert a dimension of size 1";
  let description = [{
    `x[:, None]` is `expand_dims` with axis 1, `x[None, :]` axis 0.

    ```mlir
    %c = tile.expand_dims %r {axis = 1 : i32} : !tile.tile<128xi32> -> !tile.tile<128x1xi32>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$src, I32Attr:$axis);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "Stretch dimensions of size 1";
  let description = [{
    Repeats the operand along every dimension where its size is 1 and the
    result's is larger. Ranks must agree; other sizes must match.

    ```mlir
    %b = tile.broadcast %c : !tile.tile<128x1xi32> -> !tile.tile<128x64xi32>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$src);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure]> {
  let summary = "Transpose a 2-D tile";
  let description = [{
    ```mlir
    %t = tile.trans %k : !tile.tile<64x128xbf16> -> !tile.tile<128x64xbf16>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$src);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure]> {
  let summary = "Move a tile to another thread distribution";
  let description = [{
    Same shape and element type, another `#tile.layout`. Inserted by layout
    assignment; lowered to register moves when the lanes and warps agree and
    through shared memory otherwise.

    ```mlir
    %b = tile.convert_layout %a : !tile.tile<64x64xbf16, #l0> -> !tile.tile<64x64xbf16, #l1>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$src);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Tile_AddPtrOp : Tile_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "Pointer plus an element offset";
  let description = [{
    Advances pointers by a number of elements (not bytes). Works on scalar
    pointers with scalar offsets and on pointer tiles with offset tiles of
    the same shape.

    ```mlir
    %p = tile.addptr %q, %off : !tile.ptr<bf16>, i64
    %t = tile.addptr %pt, %offt : !tile.tile<64x!tile.ptr<bf16>>, !tile.tile<64xi32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[Tile_PtrType, Tile_PtrTile]>:$ptr,
                       AnyTypeOf<[I32, I64, Tile_IndexTile]>:$offset);
  let results = (outs AnyTypeOf<[Tile_PtrType, Tile_PtrTile]>:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)";
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>]> {
  let summary = "Gather a tile from global memory";
  let description = [{
    Loads one element per pointer. Where `mask` is false nothing is read and
    the element is `other` (zero when absent).

    ```mlir
    %q = tile.load %ptrs, %mask, %zero : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi1>, !tile.tile<128x64xbf16> -> !tile.tile<128x64xbf16>
    %k = tile.load %ptrs : !tile.tile<64x!tile.ptr<f32>> -> !tile.tile<64xf32>
    ```
  }];
  let arguments = (ins Tile_PtrTile:$ptr, Optional<Tile_BoolTile>:$mask,
                       Optional<Tile_ValueTile>:$other);
  let results = (outs Tile_ValueTile:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)
    (`,` type($mask)^)? (`,` type($other)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_TmaCopyOp : Tile_Op<"tma_copy", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Start a bulk tensor copy (TMA) of a 2-D box into a shared-memory slot";
  let description = [{
    Made by `tile-tma-loads` (sm_90a). `base` is a pointer argument of the
    kernel, seen as a row-major tensor with rows `row_stride` elements
    apart (the launcher encodes its tensor map on the host, from the
    allocation `base` points into, and passes it as a hidden kernel
    parameter). The box is the tile `shape`, whose dimension `inner_dim`
    runs along a row (contiguous, from element `col` of the row: 0 when
    absent) and whose other
    dimension covers rows `coord` .. `coord + extent - 1`, counted from
    `base`. Where `pred` is false nothing is copied. `iter` numbers the
    copies of the slot (0, 1, 2, ...): the copy lands in stage
    `iter % stages` of shared-memory slot `slot` (128-byte swizzled rows,
    in slabs of 128 bytes along a row) and completes on that stage's
    barrier; `tile.tma_wait` waits for it. Every copy of a slot has the same
    `base` and attributes.

    With `stride_args` the row stride is known only at launch:
    `row_stride` times the product of those integer arguments of the kernel
    (their numbers). A tensor map with `col` spans whole rows (from element
    0 to the row stride), so a box starting at column `col` reads inside
    its row; columns past the row stride read as zero. With `row_elems` the
    tensor's rows are that many elements, fewer than the box's (a tile
    padded by tile-pad-shapes): the box's columns past them read as zero
    (and a store does not write them).

    Reuse of a stage: every warp that reaches a copy marks it passed (an
    arrival on the stage's "empty" mbarrier, counted per warp); the copy
    numbered `iter` starts once every warp has passed copy
    `iter - (stages - 2)`. The copies are placed after the waits for the
    dots that read the stage two copies back, so with two stages a copy
    waits for every warp to reach it (a barrier for the issuing warp
    only), and with three or four the issuing warp runs up to one or two
    copies ahead of the slowest warp. A slot of one stage holds a dot's A
    operand read in place: a single copy (`iter` 0) made outside loops, or
    in the loop over programs of a persistent kernel one copy per program
    (`iter` counting them), issued by the program's own warps even in a
    warp-specialized kernel, into a buffer of its own per program of the
    CTA (cta_programs).

    `producer` (set by `tile-warp-specialize`, inside the producer region
    of `tile.warp_specialize`): the producer warp issues the copy; the
    stage is free once every consumer warp is done with the copy it held,
    `iter - stages` (`tile.tma_release` after the dot that read it), so
    the producer runs as far ahead as the stages allow.

    ```mlir
    tile.tma_copy %k, %row, %iter, %ok {slot = 0 : i64, stages = 3 : i64, shape = array<i64: 64, 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>
    ```
  }];
  let arguments = (ins Tile_PtrType:$base, I32:$coord, I32:$iter, I1:$pred,
                       Optional<I32>:$col,
                       I64Attr:$slot, DefaultValuedAttr<I64Attr, "2">:$stages,
                       DenseI64ArrayAttr:$shape,
                       I64Attr:$inner_dim, I64Attr:$row_stride,
                       OptionalAttr<DenseI64ArrayAttr>:$stride_args,
                       OptionalAttr<I64Attr>:$row_elems,
                       UnitAttr:$producer);
  let assemblyFormat = [{
    $base `,` $coord `,` $iter `,` $pred (`col` $col^)? attr-dict `:` type($base)
  }];
  let hasVerifier = 1;
}

def Tile_TmaReleaseOp : Tile_Op<"tma_release", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "A consumer warp is done with a stage of a TMA ring (warp specialization)";
  let description = [{
    Made by `tile-warp-specialize` in the consumer region of
    `tile.warp_specialize`, after each `tile.tma_wait` of a ring's stage,
    where the dot reading the stage is complete (its `tile.dot_wait`, or
    the dot itself when synchronous): each consumer warp marks stage
    `stage` of slot `slot` free (one arrival on its "empty" mbarrier), so
    the producer's next copy into the stage may start. A negative `stage`
    releases nothing (a loop that carries a dot to its wait in the next
    iteration carries its stage too, -1 before the first). It never waits.

    ```mlir
    tile.tma_release %stage {slot = 0 : i64}
    ```
  }];
  let arguments = (ins I32:$stage, I64Attr:$slot);
  let assemblyFormat = "$stage attr-dict";
}

def Tile_CtaMemberOp : Tile_Op<"cta_member", [Pure]> {
  let summary = "Which of its CTA's programs this one is (cta_programs)";
  let description = [{
    Made by `tile-persistent` in kernels whose schedule has
    cta_programs = G > 1: each CTA runs G programs at once, consecutive
    along grid axis 0, each on its own num_warps warps, and they share the
    copies of one producer warpgroup (`tile-warp-specialize`). The result
    is this program's index among them, in [0, G): its num_warps warps are
    warps `member * num_warps` ... of the CTA. Only the consumer region may
    depend on it.

    ```mlir
    %m = tile.cta_member : i32
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tile_ProgramTicketOp : Tile_Op<"program_ticket", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Take the launch's next logical program (dynamic persistent order)";
  let description = [{
    Made by `tile-dynamic-persistent` where the program's tickets are
    taken (not in a consumer region). One thread of the program (thread 0;
    lane 0 of the producer warp in a warp-specialized kernel, whose
    producer region holds the op) atomically takes the next ticket of the
    launch, a counter in global memory that the module holds per kernel:
    tickets 0, 1, 2, ... are the logical programs in launch order. Every
    program takes tickets until one is `>= total`; the last program to do
    so (counted in the same global) sets both counters back to 0 for the
    next launch. The result is the ticket in that thread, 0 elsewhere;
    `tile.share_program {publisher}` hands it to the other threads.

    ```mlir
    %ticket = tile.program_ticket %total : i32
    ```
  }];
  let arguments = (ins I32:$total);
  let results = (outs I32:$result);
  let assemblyFormat = "$total attr-dict `:` type($result)";
}

def Tile_ShareProgramOp : Tile_Op<"share_program", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Every thread of the program gets the publisher's ticket";
  let description = [{
    Made by `tile-dynamic-persistent`: publication `seq` (0, 1, 2, ... in
    every thread) of the program's next logical program. Where `publisher`
    is set, the publishing thread (that of `tile.program_ticket`) waits
    until every thread has read publication `seq - 1`, writes `ticket`
    into a shared-memory word and arrives on a "full" mbarrier; every
    thread waits for publication `seq`, reads it and arrives on the
    "empty" mbarrier. In a warp-specialized kernel the producer region
    publishes and the consumer warps only read, so neither side waits for
    the other except for one publication.

    ```mlir
    %t = tile.share_program %ticket, %seq {publisher} : i32
    ```
  }];
  let arguments = (ins I32:$ticket, I32:$seq, UnitAttr:$publisher);
  let results = (outs I32:$result);
  let assemblyFormat = "$ticket `,` $seq attr-dict `:` type($result)";
}

def Tile_WarpSpecializeOp : Tile_Op<"warp_specialize", [NoTerminator, SingleBlock,
    RecursiveMemoryEffects]> {
  let summary = "A producer warpgroup issues the TMA copies; the kernel's warps consume";
  let description = [{
    Made by `tile-warp-specialize` (sm_90a, kernels with `producer = true`)
    as the whole body of a kernel. The program gets one more warpgroup (4
    warps) after its `num_warps` warps (the schedule's): the kernel's warps run the
    `consumer` region (the kernel's code, with each copy point a
    `tile.tma_release`) and the first warp of the new warpgroup runs the
    `producer` region (the loops and scalars that the copies need and the
    `tile.tma_copy {producer}` ops). Where registers allow, `setmaxnreg`
    moves registers from the producer warpgroup (24 per thread) to the
    consumers. Each region is one block with no terminator.

    ```mlir
    tile.warp_specialize producer {
      tile.tma_copy %k, %row, %iter, %ok {producer, ...} : !tile.ptr<bf16>
    } consumer {
      tile.tma_release %iter {slot = 0 : i64, stages = 3 : i64}
      ...
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$consumer);
  let assemblyFormat = "`producer` $producer `consumer` $consumer attr-dict";
}

def Tile_TmaWaitOp : Tile_Op<"tma_wait", [MemoryEffects<[MemRead]>]> {
  let summary = "Wait for a slot's bulk tensor copy and use the tile it holds";
  let description = [{
    Waits until the copy into stage `stage` of `slot` whose barrier phase
    has parity `phase` (copy `iter` of a slot with S stages lands in stage
    iter % S with parity (iter / S) % 2) has landed;
    the result is the tile in the stage. Only the first `valid` rows of the
    box (along the dimension that is not `inner_dim`) are kept: rows from
    `valid` on (all of them when `valid` <= 0) are set to zero in shared
    memory first, as a masked load would read them. With `clip_columns`
    `valid` counts elements along the copies' rows instead (a box that
    moves along its rows, clipped at a column): the elements of every row
    from `valid` on are set to zero. Its uses must be
    `tile.dot` B operands, or A operands when `inner_dim` is 1 (K
    contiguous), read in place by wgmma. `inner_dim` repeats the copies'
    contiguous dimension.

    ```mlir
    %kt = tile.tma_wait %stage, %parity, %valid {slot = 0 : i64, inner_dim = 0 : i64} : i32, i32, i32 -> !tile.tile<64x64xbf16>
    ```
  }];
  let arguments = (ins I32:$stage, I32:$phase, I32:$valid, I64Attr:$slot,
                       I64Attr:$inner_dim, UnitAttr:$clip_columns);
  let results = (outs Tile_ValueTile:$result);
  let assemblyFormat = [{
    $stage `,` $phase `,` $valid attr-dict `:` type($stage) `,` type($phase) `,` type($valid) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_AsyncCopyOp : Tile_Op<"async_copy", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Start copying a tile from global memory into a shared-memory ring stage (cp.async)";
  let description = [{
    Made by `tile-async-copies` (schedule cp_async = true) from a
    `tile.load` whose only readers are mma.sync dots' B operands (directly
    or through a `tile.trans`). Each
    element's pointer is `ptr`; where `mask` is false nothing is read and
    the element becomes zero. The tile lands in stage `stage` (in
    [0, stages)) of shared-memory slot `slot`: row-major along dimension
    `inner_dim` (the contiguous one in global memory), rows 8 elements
    longer than the tile's (16 bytes, so that the 8 rows an ldmatrix
    reads fall in different banks). Nothing waits for it: the copy joins
    the thread's open group of copies, which `tile.async_commit` closes
    and `tile.async_wait` waits for.

    ```mlir
    tile.async_copy %ptrs, %stage, %mask {slot = 0 : i64, stages = 3 : i64, inner_dim = 1 : i64} : !tile.tile<64x128x!tile.ptr<bf16>>, !tile.tile<64x128xi1>
    ```
  }];
  let arguments = (ins Tile_PtrTile:$ptr, I32:$stage, Optional<Tile_BoolTile>:$mask,
                       I64Attr:$slot, I64Attr:$stages, I64Attr:$inner_dim);
  let assemblyFormat = [{
    $ptr `,` $stage (`,` $mask^)? attr-dict `:` type($ptr) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tile_AsyncCommitOp : Tile_Op<"async_commit", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Close the thread's open group of tile.async_copy copies";
  let description = [{
    `cp.async.commit_group`: the copies started since the last commit form
    one group, which `tile.async_wait` counts.

    ```mlir
    tile.async_commit
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_AsyncWaitOp : Tile_Op<"async_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait for all but the newest groups of copies, then a CTA barrier";
  let description = [{
    `cp.async.wait_group pending` (every group but the `pending` most
    recently committed has landed), then a barrier of the program's
    threads: after it, every thread's landed copies are visible to all,
    and every thread is done with what it read before it (so a stage
    read before the barrier may be copied into after it).

    ```mlir
    tile.async_wait {pending = 1 : i64}
    ```
  }];
  let arguments = (ins I64Attr:$pending);
  let assemblyFormat = "attr-dict";
}

def Tile_AsyncViewOp : Tile_Op<"async_view", [MemoryEffects<[MemRead]>]> {
  let summary = "The tile in a stage of a cp.async ring, read in place by mma.sync dots";
  let description = [{
    The tile `tile.async_copy` put in stage `stage` of slot `slot`, once a
    `tile.async_wait` has seen it land. Its uses must be `tile.dot` B
    operands lowered to mma.sync, directly or through one `tile.trans`,
    which read it from shared memory with ldmatrix (no registers, no
    staging). `inner_dim` repeats the copies'.

    ```mlir
    %v = tile.async_view %stage {slot = 0 : i64, inner_dim = 1 : i64} : i32 -> !tile.tile<64x128xbf16>
    ```
  }];
  let arguments = (ins I32:$stage, I64Attr:$slot, I64Attr:$inner_dim);
  let results = (outs Tile_ValueTile:$result);
  let assemblyFormat = "$stage attr-dict `:` type($stage) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_TmaStoreOp : Tile_Op<"tma_store", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Store a 2-D tile to global memory with a bulk tensor copy (TMA)";
  let description = [{
    Made by `tile-tma-loads` (sm_90a, tma = true, tma_store = true) from a
    `tile.store` of whole rows (see tile.tma_copy for how `base`,
    `row_stride`, `stride_args`, `coord` and `col` name them: rows `coord`
    .. `coord + rows - 1` of the argument, columns `col` (0 when absent) ..
    `col` + row length - 1, `inner_dim` 1). The
    program's threads write `value` into the shared-memory buffer of slot
    `slot` (one stage, 128-byte swizzled rows in slabs of 64 elements), and
    one thread starts one bulk copy per slab to global memory; nobody waits
    for it to finish. Where each warpgroup holds its own block of rows (the
    wgmma accumulator layout of 8 or more warps) each warpgroup does this
    for its rows on its own (its first thread copies, its barriers are
    named barriers of its 128 threads); otherwise thread 0 copies and the
    barriers are the program's. Before the buffer is written again, the
    copying thread waits until its previous copy has read it, then a
    barrier; the kernel's exit waits for the copies too. The whole box is
    written: the pass keeps the masked store for boxes that reach past the
    mask's bound.

    ```mlir
    tile.tma_store %o, %row, %val {slot = 2 : i64, inner_dim = 1 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>, !tile.tile<128x64xbf16>
    ```
  }];
  let arguments = (ins Tile_PtrType:$base, I32:$coord, Tile_ValueTile:$value,
                       Optional<I32>:$col,
                       I64Attr:$slot, I64Attr:$inner_dim, I64Attr:$row_stride,
                       OptionalAttr<DenseI64ArrayAttr>:$stride_args,
                       OptionalAttr<I64Attr>:$row_elems);
  let assemblyFormat = [{
    $base `,` $coord `,` $value (`col` $col^)? attr-dict `:` type($base) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "Scatter a tile to global memory";
  let description = [{
    Stores each element to its pointer where `mask` is true (everywhere when
    absent).

    ```mlir
    tile.store %ptrs, %o, %mask : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xbf16>, !tile.tile<128x64xi1>
    ```
  }];
  let arguments = (ins Tile_PtrTile:$ptr, Tile_ValueTile:$value,
                       Optional<Tile_BoolTile>:$mask);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr) `,` type($value)
    (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Atomically add a tile into global memory";
  let description = [{
    For each element where `mask` holds, atomically adds it to the memory at
    its pointer and returns the previous value.

    ```mlir
    %old = tile.atomic_add %ptrs, %dq : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32> -> !tile.tile<64xf32>
    ```
  }];
  let arguments = (ins Tile_PtrTile:$ptr, Tile_NumTile:$value,
                       Optional<Tile_BoolTile>:$mask);
  let results = (outs Tile_NumTile:$result);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr) `,` type($value)
    (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix product and reductions
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "Matrix product with an accumulator";
  let description = [{
    `result = a · b + acc` for `a: MxK`, `b: KxN`, `acc: MxN`. f16 and bf16
    operands accumulate in f32 on tensor cores; f32 operands stay IEEE fp32
    unless `allow_tf32` is set. fp8 operands (both e4m3 or both e5m2)
    accumulate in f32: wgmma k32 where the target has fp8 tensor cores and
    the operands fit it, else as f16 (every fp8 value is exact in f16).

    `async` (set by `tile-async-dots` on sm_90a, only when `b` is read in
    place from a TMA slot): the product is issued and committed as one
    wgmma group without waiting; the result must reach its users through a
    `tile.dot_wait`.

    `k_used`, `n_used` (set by `tile-pad-shapes` when it pads K or N to a
    power of two): only the first `k_used` columns of `a` (rows of `b`)
    may be non-zero, and only the first `n_used` columns of the result
    are ever read; the columns past them are padding. A lowering may skip
    the padded k steps and leave the padded result columns at any value
    (wgmma issues an N of the used columns, rounded up to what it takes).

    ```mlir
    %s = tile.dot %q, %k, %zero : !tile.tile<128x64xbf16>, !tile.tile<64x64xbf16>, !tile.tile<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_DotOperandTile:$a, Tile_DotOperandTile:$b,
                       Tile_FloatTile:$acc, UnitAttr:$allow_tf32,
                       UnitAttr:$async, OptionalAttr<I64Attr>:$k_used,
                       OptionalAttr<I64Attr>:$n_used);
  let results = (outs Tile_FloatTile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_DotWaitOp : Tile_Op<"dot_wait", [AllTypesMatch<["src", "result"]>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "The value of an asynchronous dot, once it is complete";
  let description = [{
    Waits until at most `pending` asynchronous dots (wgmma groups) issued
    after the one that produced `src` may still be running, then yields
    `src`. `pending` must not exceed the number of groups committed after
    that dot on every path to the wait. On targets without asynchronous
    products it is the identity.

    ```mlir
    %r = tile.dot_wait %s {pending = 1 : i64} : !tile.tile<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_FloatTile:$src, I64Attr:$pending);
  let results = (outs Tile_FloatTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def Tile_TurnWaitOp : Tile_Op<"turn_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait until the other warpgroup passes the turn (sm_90a ping-pong)";
  let description = [{
    Made by `tile-pingpong-dots` in kernels of two warpgroups (8 warps).
    The two warpgroups take turns issuing their asynchronous dots: each
    group of dots starts with `turn_wait` and ends with `tile.turn_pass`,
    so the tensor cores run one warpgroup's products while the other does
    its elementwise work. Warpgroup g waits on named barrier 1 + g (256
    threads). Only a schedule: the values computed do not depend on it.

    ```mlir
    tile.turn_wait
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_TurnPassOp : Tile_Op<"turn_pass", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Pass the turn to the other warpgroup (sm_90a ping-pong)";
  let description = [{
    Ends a group of dots started by `tile.turn_wait`: warpgroup g arrives on
    the other warpgroup's named barrier (2 - g). With `first`, only
    warpgroup 1 arrives: placed once at kernel entry, it gives warpgroup 0
    the first turn.

    ```mlir
    tile.turn_pass {first}
    tile.turn_pass
    ```
  }];
  let arguments = (ins UnitAttr:$first);
  let assemblyFormat = "attr-dict";
}

def Tile_ReduceKindAttr : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"Max", 0, "max">, I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"Min", 2, "min">]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "Reduce a tile along one axis";
  let description = [{
    Combines the elements along `axis` with `max`, `min` or `sum`; the result
    drops that dimension (`reduce_max(s, axis: 1)` of `MxN` is `M`).

    ```mlir
    %m = tile.reduce max %s {axis = 1 : i32} : !tile.tile<128x64xf32> -> !tile.tile<128xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind, Tile_NumTile:$src, I32Attr:$axis);
  let results = (outs Tile_NumTile:$result);
  let assemblyFormat = "$kind $src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Tile_BinaryOp<string mnemonic, Type operand, string doc>
    : Tile_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = doc;
  let description = "Elementwise `" # mnemonic # "` of two tiles of one type.\n\n"
    # "```mlir\n%r = tile." # mnemonic # " %a, %b : !tile.tile<64xf32>\n```";
  let arguments = (ins operand:$lhs, operand:$rhs);
  let results = (outs operand:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Tile_AddOp : Tile_BinaryOp<"add", Tile_NumTile, "Elementwise sum">;
def Tile_SubOp : Tile_BinaryOp<"sub", Tile_NumTile, "Elementwise difference">;
def Tile_MulOp : Tile_BinaryOp<"mul", Tile_NumTile, "Elementwise product">;
def Tile_DivOp : Tile_BinaryOp<"div", Tile_NumTile,
  "Elementwise quotient (signed and truncating for integers)">;
def Tile_RemOp : Tile_BinaryOp<"rem", Tile_NumTile,
  "Elementwise remainder (signed for integers)">;
def Tile_MaxOp : Tile_BinaryOp<"max", Tile_NumTile,
  "Elementwise maximum (NaN-propagating for floats)">;
def Tile_MinOp : Tile_BinaryOp<"min", Tile_NumTile,
  "Elementwise minimum (NaN-propagating for floats)">;
def Tile_AndOp : Tile_BinaryOp<"and", Tile_IntTile, "Elementwise bitwise and">;
def Tile_OrOp : Tile_BinaryOp<"or", Tile_IntTile, "Elementwise bitwise or">;
def Tile_XOrOp : Tile_BinaryOp<"xor", Tile_IntTile, "Elementwise bitwise xor">;

class Tile_UnaryOp<string mnemonic, Type operand, string doc>
    : Tile_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = doc;
  let description = "Elementwise `" # mnemonic # "` of a tile.\n\n"
    # "```mlir\n%r = tile." # mnemonic # " %a : !tile.tile<64xf32>\n```";
  let arguments = (ins operand:$src);
  let results = (outs operand:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
}

def Tile_ExpOp : Tile_UnaryOp<"exp", Tile_FloatTile, "Natural exponential">;
def Tile_Exp2Op : Tile_UnaryOp<"exp2", Tile_FloatTile, "Base-2 exponential">;
def Tile_LogOp : Tile_UnaryOp<"log", Tile_FloatTile, "Natural logarithm">;
def Tile_Log2Op : Tile_UnaryOp<"log2", Tile_FloatTile, "Base-2 logarithm">;
def Tile_SqrtOp : Tile_UnaryOp<"sqrt", Tile_FloatTile, "Square root">;
def Tile_RsqrtOp : Tile_UnaryOp<"rsqrt", Tile_FloatTile, "Reciprocal square root">;
def Tile_TanhOp : Tile_UnaryOp<"tanh", Tile_FloatTile, "Hyperbolic tangent">;
def Tile_AbsOp : Tile_UnaryOp<"abs", Tile_NumTile, "Absolute value">;
def Tile_NegOp : Tile_UnaryOp<"neg", Tile_NumTile, "Negation">;

def Tile_CmpPredicateAttr : I32EnumAttr<"CmpPredicate", "comparison", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>, I32EnumAttrCase<"lt", 2>,
    I32EnumAttrCase<"le", 3>, I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>,
    I32EnumAttrCase<"ult", 6>, I32EnumAttrCase<"ule", 7>,
    I32EnumAttrCase<"ugt", 8>, I32EnumAttrCase<"uge", 9>]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_CmpOp : Tile_Op<"cmp", [Pure, SameTypeOperands]> {
  let summary = "Elementwise comparison";
  let description = [{
    Compares two tiles of one type (signed for integers with `lt le gt ge`,
    unsigned with `ult ule ugt uge`, which need integers; ordered for
    floats) and yields an `i1` tile of the same shape.

    ```mlir
    %m = tile.cmp lt %rows, %n : !tile.tile<128xi32> -> !tile.tile<128xi1>
    ```
  }];
  let arguments = (ins Tile_CmpPredicateAttr:$predicate, Tile_NumTile:$lhs,
                       Tile_NumTile:$rhs);
  let results = (outs Tile_BoolTile:$result);
  let assemblyFormat = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_WhereOp : Tile_Op<"where", [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "Elementwise select";
  let description = [{
    `cond ? lhs : rhs` per element.

    ```mlir
    %s = tile.where %m, %x, %ninf : !tile.tile<128x64xi1>, !tile.tile<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_BoolTile:$cond, Tile_AnyTile:$lhs, Tile_AnyTile:$rhs);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)";
  let hasVerifier = 1;
}

def Tile_FmaOp : Tile_Op<"fma", [Pure, AllTypesMatch<["a", "b", "c", "result"]>]> {
  let summary = "Fused multiply-add: a * b + c, rounded once";
  let description = [{
    Elementwise `a * b + c` with a single rounding (`fma.rn`), from the
    language's `fma(a, b, c)`. tilec never contracts a multiply and an add
    by itself: kernels ask for it.

    ```mlir
    %y = tile.fma %s, %scale, %neg_m : !tile.tile<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_FloatTile:$a, Tile_FloatTile:$b, Tile_FloatTile:$c);
  let results = (outs Tile_FloatTile:$result);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($result)";
}

def Tile_CastOp : Tile_Op<"cast", [Pure]> {
  let summary = "Convert the element type";
  let description = [{
    Converts between f32, f16, bf16, f64, i1, i8, i16, i32 and i64
    elementwise (round-to-nearest-even for narrowing floats; float to int
    truncates toward zero). Integers are signed unless `is_unsigned` is set,
    which makes the integer side unsigned: the source of an int-to-int or
    int-to-float cast (zero extension, `uitofp`), the result of a
    float-to-int cast (`fptoui`).

    ```mlir
    %p16 = tile.cast %p : !tile.tile<128x64xf32> -> !tile.tile<128x64xbf16>
    %w = tile.cast %u {is_unsigned} : !tile.tile<128xi32> -> !tile.tile<128xi64>
    ```
  }];
  let arguments = (ins Tile_ValueTile:$src, UnitAttr:$is_unsigned);
  let results = (outs Tile_ValueTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

include "TileScalarOps.td"
include "TileIntOps.td"

#endif // TILE_OPS_TD
