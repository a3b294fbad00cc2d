//===- TileScalarOps.td - scalar memory access and tile-to-scalar -*- tablegen -*-===//
//
// Ops on single values, not tiles: a uniform load or store through a scalar
// pointer, and the element of a one-element tile. Every thread of a program
// computes scalars redundantly, so these ops have no layout.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_SCALAR_OPS_TD
#define TILE_SCALAR_OPS_TD

def Tile_ScalarValue : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64]>;

def Tile_ScalarLoadOp : Tile_Op<"scalar_load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>]> {
  let summary = "Load one value through a scalar pointer";
  let description = [{
    Every thread of the program loads the value at `ptr` (one address: the
    warp's requests merge into one transaction, served from L1 after the
    first warp). Where `mask` is false nothing is read and the result is
    `other` (zero when absent).

    ```mlir
    %n = tile.scalar_load %p : !tile.ptr<i32> -> i32
    %m = tile.scalar_load %q, %ok, %zero : !tile.ptr<f32>, i1, f32 -> f32
    ```
  }];
  let arguments = (ins Tile_PtrType:$ptr, Optional<I1>:$mask,
                       Optional<Tile_ScalarValue>:$other);
  let results = (outs Tile_ScalarValue:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)
    (`,` type($mask)^)? (`,` type($other)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScalarStoreOp : Tile_Op<"scalar_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "Store one value through a scalar pointer";
  let description = [{
    Every thread of the program stores the same `value` to `ptr` where
    `mask` holds (scalars are uniform in a program): one transaction per
    warp, no extra predicate or barrier.

    ```mlir
    tile.scalar_store %p, %v : !tile.ptr<f32>, f32
    tile.scalar_store %p, %v, %ok : !tile.ptr<f32>, f32, i1
    ```
  }];
  let arguments = (ins Tile_PtrType:$ptr, Tile_ScalarValue:$value,
                       Optional<I1>:$mask);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr) `,` type($value)
    (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tile_ToScalarOp : Tile_Op<"to_scalar", [Pure]> {
  let summary = "The element of a one-element tile";
  let description = [{
    Every thread holds the single element of a tile whose dimensions are
    all 1 (its layout replicates it), so this is a register move. Reductions
    of a 1-D tile to a scalar and scalar math end with it.

    ```mlir
    %s = tile.to_scalar %t : !tile.tile<1xf32> -> f32
    ```
  }];
  let arguments = (ins Tile_ValueTile:$src);
  let results = (outs Tile_ScalarValue:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TILE_SCALAR_OPS_TD
