//===- TileBase.td - the tile dialect definition -----------*- tablegen -*-===//
#ifndef TILE_BASE_TD
#define TILE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tile";
  let summary = "Value-semantics tiles for attention kernels";
  let description = [{
    The `tile` dialect models block-level kernels in the style of Triton: a
    kernel is a `func.func` marked `tile.kernel`, run by many programs (CTAs);
    each program manipulates statically shaped tiles of scalars or pointers.
    Loops are `scf.for` with loop-carried tiles. After layout assignment every
    tile type carries a `#tile.layout` encoding that distributes its elements
    over the registers, lanes and warps of the CTA.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TILE_BASE_TD
