//===- Passes.td - tile transform passes ------------------*- tablegen -*-===//
#ifndef TILE_TRANSFORMS_PASSES
#define TILE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TileAssignLayouts : Pass<"tile-assign-layouts", "mlir::ModuleOp"> {
  let summary = "Give every tile value a #tile.layout";
  let description = [{
    Pipeline stage 4. Every tile value gets a distribution over the threads
    of the program: the mma.sync accumulator layout for 2-D tiles, its row
    slice for 1-D tiles, the mma A-fragment layout for f16/bf16 `dot` A operands (B and f32
    operands keep the default layout: the IEEE fp32 product reads them from
    shared memory), the slice of its consumer for
    `expand_dims` and `broadcast` operands, 16 bytes per thread for loads
    along a contiguous dimension, and for 2-D stores that would take 32 or
    more accesses per thread (with pointers and mask that
    tile-remove-layout-conversions recomputes in any layout) the
    accumulator layout with lanes and registers
    traded inside each warp (16 bytes per thread; the conversion is a few
    rounds of lane shuffles). Where an op needs another layout
    than its operand has, an explicit `tile.convert_layout` is inserted.
    The warp count is the kernel schedule's `num_warps` (`#tile.schedule`).
  }];
  let dependentDialects = ["mlir::tile::TileDialect"];
}

def TileRemoveLayoutConversions : Pass<"tile-remove-layout-conversions",
                                       "mlir::ModuleOp"> {
  let summary = "Rematerialise cheap ops in the layout their users need";
  let description = [{
    Moves `tile.convert_layout` towards the leaves of the computation: a
    conversion of an elementwise op, an `iota`, `full`, `splat`,
    `expand_dims`, `broadcast` or a single-use `load` is replaced by the same
    op computed directly in the wanted layout (but not past a narrowing
    `cast` of costly data: the narrow values move). Conversions of
    conversions are folded. A reduction of an elementwise tree over
    converted loads runs in the loads' layout instead (they keep their
    16-byte accesses) and only its result is converted. What remains needs
    data movement between threads.
  }];
  let dependentDialects = ["mlir::tile::TileDialect"];
}

def TileHoistInvariantLoads : Pass<"tile-hoist-invariant-loads",
                                   "mlir::ModuleOp"> {
  let summary = "Loads that read the same values on every trip leave their loop";
  let description = [{
    Pipeline stage 3. In an scf.for that writes no memory, a `tile.load` or
    `tile.scalar_load` of its body whose operands are computed by pure ops
    from values defined outside the loop runs once before it (those ops
    cloned with it), masked by `lb < ub` so that a loop of no trip still
    reads nothing. Inner loops first.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect"];
}

def TileSinkScale : Pass<"tile-sink-scale", "mlir::ModuleOp"> {
  let summary = "Move a positive scale past max/where to the next scalar multiply";
  let description = [{
    Pipeline stage 3, before tile-fold-scale. `y = x * splat(a)` with `a`
    provably positive (a kernel argument under `require(a > 0.0)`, a
    positive constant) whose uses all reach, through where / max / min
    (with ±inf or 0 constants), reduce max/min, expand_dims and broadcast,
    multiplies or fmas by a scalar `b`: those take `a * b` and the chain
    runs on `x`. One multiply per element fewer where scores are scaled
    before a softmax's max.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect"];
}

def TileFoldScale : Pass<"tile-fold-scale", "mlir::ModuleOp"> {
  let summary = "Fold exp2(x * a) * ... scale chains into one multiply";
  let description = [{
    Pipeline stage 3. `mul(mul(x, splat(a)), splat(b))` with scalar factors
    becomes `mul(x, splat(a * b))`, so a softmax scale and log2(e) cost one
    multiply per element.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect"];
}

def TileProgramOrder : Pass<"tile-program-order", "mlir::ModuleOp"> {
  let summary = "Programs take grid ids in the schedule's order (l2_group, reverse_x)";
  let description = [{
    Pipeline stage 3, first pass; only in kernels whose schedule sets
    `l2_group` > 0 or `reverse_x`. Every `tile.program_id` of axis 0 or 1
    becomes a logical (X, Y) computed once at the kernel's entry from the
    launch's program ids: groups of max(1, l2_group / num_programs(0))
    consecutive Y values run X-major (their data stays in L2), and
    `reverse_x` counts X down (longest programs first where X sets the
    length). A bijection of the grid: every logical program runs once.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect"];
}

def TilePersistent : Pass<"tile-persistent", "mlir::ModuleOp"> {
  let summary = "Resident programs loop over the launch grid (persistent)";
  let description = [{
    Pipeline stage 3, first pass; only in kernels whose schedule has
    `persistent = true`. The kernel takes three more i32
    parameters, the logical grid (x, y, z), and its body becomes an
    `scf.for` marked `tile.persistent` over the logical programs
    `t = program_id(0), + num_programs(0), ... < gx * gy * gz`, in which
    `program_id(d)` is the d-th coordinate of t (x fastest) and
    `num_programs(d)` the logical grid's size. The launcher starts as many
    programs as are resident at once.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::LLVM::LLVMDialect"];
}

def TileGridOffsets : Pass<"tile-grid-offsets", "mlir::ModuleOp"> {
  let summary = "Grid y and z of any size: program_id(1|2) plus a launch offset";
  let description = [{
    Pipeline stage 6a, before `convert-tile-to-gpu`. The hardware launches
    at most 65535 programs along y and z; the launcher splits a larger grid
    into launches of at most that many and tells each one where it starts.
    In a kernel that is not persistent, for d = 1 (y) and 2 (z):
    `program_id(d)` becomes `program_id(d) + offset_d` and
    `num_programs(d)` becomes `size_d`, i32 parameters appended to the
    kernel's (after the persistent grid, before the tensor maps) in the
    order y offset, y size, z offset, z size, each only where the kernel
    reads it. The kernel's `tile.grid_args` lists them ("offset_y",
    "size_y", "offset_z", "size_z"); the manifest's "gridArgs" carries it
    to the launcher. Cost: one add per `program_id(1|2)` and 4 bytes of
    parameters each; a kernel that reads neither axis is unchanged.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect"];
}

def TileDynamicPersistent : Pass<"tile-dynamic-persistent", "mlir::ModuleOp"> {
  let summary = "Persistent programs take logical programs from a launch-wide counter";
  let description = [{
    Pipeline stage 4, last pass (after `tile-warp-specialize`). Each loop
    over logical programs that `tile-persistent` made (`scf.for` marked
    `tile.persistent`, in either region of a `tile.warp_specialize`)
    becomes an `scf.while` over the logical programs the program takes, in
    turn, from a counter of the launch (`tile.program_ticket`, taken one
    ahead by thread 0 or the producer warp) and hands to its threads
    (`tile.share_program`): a program that finishes early takes the next
    one, as an ordinary launch's do, so causal kernels stay balanced.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def TileTmaLoads : Pass<"tile-tma-loads", "mlir::ModuleOp"> {
  let summary = "Turn loop loads of dot B operands into pipelined TMA copies (sm_90a)";
  let description = [{
    Pipeline stage 3, before `tile-pipeline-loads`; does nothing unless the
    target (`arch`, else the module's `tile.arch`) is sm_90a, and only in
    kernels whose schedule has `tma` (the default). A `tile.load`
    in an `scf.for` body that only feeds a `tile.dot` B operand, reads a 2-D
    f16/bf16 box of a row-major tensor (rows a multiple of 64 elements, a
    constant row stride, the loop moving it only through the row index Y)
    and is masked exactly by `Y < bound` becomes `tile.tma_copy` /
    `tile.tma_wait` on a shared-memory ring of `num_stages` stages (a
    schedule field `num_stages`, 2 to 4, default 3, fewer where they would not
    fit in 200 KiB; other values are an error on every target): the first
    copy before the loop, each iteration starting the next copy at its top
    and waiting for its own. Rows past the bound read as zero, as the mask
    made them. A loop directly in the body of another loop (in no loop
    itself) keeps one ring across the outer iterations: the outer loop
    carries the count of copies made as an i32 iter_arg and each copy sits
    in an `scf.if` of its condition; loads in deeper nests stay loads. With
    `tma_a = true`, a load in the kernel's body that only
    the A operands of those dots read (K contiguous, first row provably
    non-negative) becomes one copy into a one-stage slot, where it fits
    with the rings in 224 KiB.

    With `remarks` (or the module's `tile.remarks`, tilec -remarks), every
    load in a loop that a dot reads and that stays a load gets a remark at
    its location saying why.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark at each dot operand load that stays off TMA, with why">
  ];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TileAsyncCopies : Pass<"tile-async-copies", "mlir::ModuleOp"> {
  let summary = "Turn loop loads of mma.sync dots' B operands into cp.async rings";
  let description = [{
    Pipeline stage 3, after `tile-tma-loads` and before
    `tile-pipeline-loads`; only in kernels whose schedule has `cp_async`.
    A `tile.load` in an `scf.for` body whose readers are all B operands
    (directly or through a `tile.trans`) of dots that lower to mma.sync (any dot on sm_80; on sm_90a, dots that
    cannot be wgmma), of a 2-D f16/bf16 tile with a contiguous dimension,
    masked elements zero, and an address computed from the induction
    variable and loop invariants only (index loads included), becomes a
    ring of `num_stages` shared-memory stages (fewer, down to 2, where the
    kernel's rings would not fit): `tile.async_copy` of iterations 0 ..
    S-2 before the loop, at the top of each iteration `tile.async_wait`
    (S-2 pending, then a CTA barrier) and the copy of iteration i + S-1,
    and `tile.async_view` of stage i % S in place of the load. With
    `remarks`, each such load that stays a load says why.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark at each dot operand load that stays off cp.async, with why">
  ];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TileCtaSharedLoops : Pass<"tile-cta-shared-loops", "mlir::ModuleOp"> {
  let summary = "The programs of a CTA run one loop to the largest of their bounds";
  let description = [{
    Pipeline stage 3, before `tile-tma-loads`; only in kernels whose
    schedule has `cta_programs` > 1. A loop whose upper bound depends on
    `tile.cta_member` (program_id(0): a causal query block's key range)
    runs to the largest bound of the CTA's programs, so that all of them
    wait for the same shared copies; the iterations past a program's own
    bound are masked (its stores, atomics and the loads whose address
    depends on the member) and carry every loop-carried value through
    (`where(iv < ub, new, old)`, a mask `tile-split-masked-loops` drops
    below the smallest split point). Loops whose lower bound or step
    depends on the member, with unmaskable memory effects, or with no load
    the programs could share are left alone.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def TileSplitMaskedLoops : Pass<"tile-split-masked-loops", "mlir::ModuleOp"> {
  let summary = "Split loops into unmasked interior iterations and masked ones";
  let description = [{
    Pipeline stage 3, after `tile-pipeline-loads`. For each innermost
    `scf.for`, the masks of its `tile.where`, `tile.load` and `tile.store`
    ops that are provably all true while the induction variable is below a
    loop-invariant bound (comparisons of `iv + iota`-shaped index tiles with
    invariant ones, e.g. `keys < seqlen` or a causal `rows >= keys`) are
    dropped in a first copy of the loop that runs up to that bound; the
    original loop runs the remaining iterations from the first one's
    results (`tile.masked_tail`). Masks that hold from a bound on instead
    (a loop counting down, `range(top, -1, -BN)`: `keys < seqlen` and the
    causal mask fail only in its first blocks) split the other way: the
    masked first iterations (`tile.masked_head`), then the rest without
    them. A mask that fails at both ends is left alone, as are loops with no
    such mask.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TileVersionMasks : Pass<"tile-version-masks", "mlir::ModuleOp"> {
  let summary = "A select whose mask is all true at run time is skipped";
  let description = [{
    Pipeline stage 3, after `tile-split-masked-loops`. In an innermost
    `scf.for` (not a masked head or tail), a `tile.where` whose mask is
    signed comparisons of `scalars + [lo, hi]` index tiles (iota, splat,
    add, sub), joined by `and`, with a scalar computed in the loop (an
    index read from memory) becomes `scf.if (all true) { lhs } else
    { where }`; the mask's ops only the select used move into the else
    branch. A block-sparse kernel's `keys < seqlen` then costs a scalar
    test per block instead of a compare and a select per score.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TileOverlapDots : Pass<"tile-overlap-dots", "mlir::ModuleOp"> {
  let summary = "Run a loop's accumulating dot one iteration late (sm_90a)";
  let description = [{
    Pipeline stage 4, after layouts, before `tile-async-dots`. In an
    `scf.for` whose accumulator is yielded by a `tile.dot` reading a TMA
    slot, that dot and the ops only it needs move one iteration later,
    right after the next iteration's first dot (with a prologue, an
    epilogue and a `lb < ub` guard), so its wgmma overlaps the next block's
    elementwise work. Values it takes from the rest of the iteration become
    iter_args; pure functions of the induction variable are recomputed.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">
  ];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TileAsyncDots : Pass<"tile-async-dots", "mlir::ModuleOp"> {
  let summary = "Issue TMA-fed dots asynchronously and wait where used (sm_90a)";
  let description = [{
    Pipeline stage 4, after layouts. On sm_90a, each `tile.dot` whose B
    operand is a `tile.tma_wait` result becomes `async` (a wgmma group that
    is not waited for) and a `tile.dot_wait` goes before its first user, with
    `pending` counting the asynchronous dots issued in between. A dot that is
    only yielded as a loop's accumulator is waited for at the iter_arg's
    first use in the next iteration and after the loop. TMA copies into the
    slot a dot reads move after its wait.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">
  ];
  let dependentDialects = ["mlir::tile::TileDialect"];
}

def TilePingpongDots : Pass<"tile-pingpong-dots", "mlir::ModuleOp"> {
  let summary = "Two warpgroups take turns issuing their dots (sm_90a)";
  let description = [{
    Pipeline stage 4, after `tile-async-dots`. In kernels of 8 warps (two
    warpgroups) with asynchronous dots, each run of asynchronous dots of a
    block becomes a turn (`tile.turn_wait` ... `tile.turn_pass`), and
    warpgroup 1 passes once at kernel entry: the warpgroups alternate at
    the tensor cores, one's products overlapping the other's softmax.
    `tile.tma_wait`s inside a run move before it with the pure scalars
    they read; layout conversions, reductions, synchronous dots and ops
    with regions end a run. Not applied where a TMA ring has two stages
    (one-stage slots, filled once in the kernel's body, do not count), where
    no run does 256 multiply-adds per element of its
    first product (flash_fwd at D = 64: turns cost more than they hide), or
    where the kernel sets `pingpong = false`.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">
  ];
  let dependentDialects = ["mlir::tile::TileDialect"];
}

def TileWarpSpecialize : Pass<"tile-warp-specialize", "mlir::ModuleOp"> {
  let summary = "A producer warpgroup issues the TMA copies (sm_90a, producer = true)";
  let description = [{
    Pipeline stage 4, after `tile-pingpong-dots`. In kernels that set the
    schedule `producer = true` and have `tile.tma_copy` ops,
    the body becomes the consumer region of a `tile.warp_specialize`; its
    producer region is the slice of the body that the copies need (the
    loops and ifs around them, with only the iter_args and results they
    use, and the scalar ops computing their operands), with the copies
    marked `producer`. In the consumer region each copy of a ring becomes a
    `tile.tma_release`. The program gets one more warpgroup after its
    num_warps warps (a multiple of 4); `setmaxnreg`
    moves registers from it to the consumers where that helps. A value the
    copies need that is a tile or comes from an op with memory effects or
    regions (other than scf.for / scf.if) is an error; without copies the kernel is left as it is.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "Target GPU (sm_80 or sm_90a); empty: the module's tile.arch">
  ];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::scf::SCFDialect"];
}

def TilePipelineLoads : Pass<"tile-pipeline-loads", "mlir::ModuleOp"> {
  let summary = "Prefetch next-iteration loads of scf.for loops";
  let description = [{
    Pipeline stage 5 (register stage). A `tile.load` in a loop body whose
    address, mask and `other` depend only on the induction variable and on
    values defined outside the loop is issued one iteration ahead: the first
    load moves before the loop, each iteration loads for the next one (masked
    off past the upper bound) and uses the value carried from the previous
    one. Global-memory latency then overlaps the current iteration's work.
    With the schedule's `index_ahead`, a gather's index loads (page ids)
    are then loaded one more iteration ahead and carried, so the gather
    does not wait for them.
  }];
  let dependentDialects = ["mlir::tile::TileDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

#endif // TILE_TRANSFORMS_PASSES

def TilePadShapes : Pass<"tile-pad-shapes", "mlir::ModuleOp"> {
  let summary = "Tiles of any size: pad dimensions to powers of two, masked";
  let description = [{
    Pipeline stage 3, first pass. Every tile dimension that is not a power
    of two (a head dim of 96) is padded to the next one. Loads, stores and
    atomic adds are masked to the kernel's lanes (padded loads read zeros
    there), reductions along a padded dimension see their identity there
    and dots contracting over a padded K see zeros, so that the padding
    lanes never reach a result.
  }];
  let dependentDialects = ["mlir::tile::TileDialect"];
}
