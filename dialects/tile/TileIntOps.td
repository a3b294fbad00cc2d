//===- TileIntOps.td - unsigned and bit-level tile ops ------*- tablegen -*-===//
//
// Integers are signless, as in `arith`: the unsigned forms of the ops whose
// result depends on signedness (division, remainder, max/min, right shift,
// high half of a product) are separate ops, so that no pass that matches
// the signed op can mistake one for the other. Comparisons take the
// unsigned predicates `ult ule ugt uge`; `tile.cast {is_unsigned}` zero-extends.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_INT_OPS_TD
#define TILE_INT_OPS_TD

def Tile_DivUOp : Tile_BinaryOp<"divu", Tile_IntNumTile,
  "Elementwise unsigned quotient">;
def Tile_RemUOp : Tile_BinaryOp<"remu", Tile_IntNumTile,
  "Elementwise unsigned remainder">;
def Tile_MaxUOp : Tile_BinaryOp<"maxu", Tile_IntNumTile,
  "Elementwise unsigned maximum">;
def Tile_MinUOp : Tile_BinaryOp<"minu", Tile_IntNumTile,
  "Elementwise unsigned minimum">;
def Tile_ShlOp : Tile_BinaryOp<"shl", Tile_IntNumTile,
  "Elementwise shift left (amounts >= the bit width give an undefined value)">;
def Tile_ShrSOp : Tile_BinaryOp<"shrs", Tile_IntNumTile,
  "Elementwise arithmetic shift right (amounts >= the bit width give an undefined value)">;
def Tile_ShrUOp : Tile_BinaryOp<"shru", Tile_IntNumTile,
  "Elementwise logical shift right (amounts >= the bit width give an undefined value)">;
def Tile_MulHiUOp : Tile_BinaryOp<"mulhiu", Tile_IntNumTile,
  "High half of the unsigned product (PTX mul.hi.u32 / mul.hi.u64)">;

def Tile_BitcastOp : Tile_Op<"bitcast", [Pure]> {
  let summary = "Reinterpret the bits of each element";
  let description = [{
    Same shape, another element type of the same bit width (f32 <-> i32,
    bf16 <-> i16, f8E4M3FN <-> i8, ...). Free: no instruction.

    ```mlir
    %u = tile.bitcast %x : !tile.tile<128xf32> -> !tile.tile<128xi32>
    ```
  }];
  let arguments = (ins Tile_ValueTile:$src);
  let results = (outs Tile_ValueTile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TILE_INT_OPS_TD
