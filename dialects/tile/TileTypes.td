//===- TileTypes.td - tile types and the layout attribute --*- tablegen -*-===//
#ifndef TILE_TYPES_TD
#define TILE_TYPES_TD

include "TileBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

//===----------------------------------------------------------------------===//
// Layout attribute
//===----------------------------------------------------------------------===//

def Tile_LayoutAttr : AttrDef<Tile_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "A linear distribution of tile elements over a CTA";
  let description = [{
    A layout maps (register, lane, warp) indices to tile coordinates as a
    linear map over GF(2): each set bit of the register index, of the lane id
    and of the warp id contributes its basis vector, and the contributions are
    XOR-ed (for power-of-two shapes this is addition without carries). A zero
    lane or warp basis means the element is replicated across those threads.

    ```mlir
    // The m16n8 accumulator of one warp:
    #tile.layout<regs = [[0, 1], [8, 0]],
                 lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                 warps = []>
    ```
  }];
  let parameters = (ins "unsigned":$rank,
                        ArrayRefParameter<"int64_t">:$regs,
                        ArrayRefParameter<"int64_t">:$lanes,
                        ArrayRefParameter<"int64_t">:$warps);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getNumRegBits() const { return getRegs().size() / getRank(); }
    unsigned getNumLaneBits() const { return getLanes().size() / getRank(); }
    unsigned getNumWarpBits() const { return getWarps().size() / getRank(); }
    /// Number of elements each thread holds.
    int64_t getNumRegs() const { return int64_t(1) << getNumRegBits(); }
    int64_t getNumWarps() const { return int64_t(1) << getNumWarpBits(); }
  }];
}

//===----------------------------------------------------------------------===//
// Schedule attribute
//===----------------------------------------------------------------------===//

def Tile_ScheduleAttr : AttrDef<Tile_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "How a kernel runs: warps, stages, memory paths, roles, order";
  let description = [{
    The typed schedule of a kernel (`tile::Schedule`, docs/schedule.md), on
    its `func.func` as `tile.schedule`. Passes read their knobs from it;
    a kernel without one runs the defaults. Fields equal to their default
    are omitted in print.

    ```mlir
    func.func @k(...) attributes {tile.kernel,
        tile.schedule = #tile.schedule<num_warps = 8, producer = true>}
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "4">:$num_warps,
    DefaultValuedParameter<"int64_t", "0">:$min_blocks,
    DefaultValuedParameter<"int64_t", "3">:$num_stages,
    DefaultValuedParameter<"bool", "true">:$tma,
    DefaultValuedParameter<"bool", "false">:$tma_a,
    DefaultValuedParameter<"bool", "true">:$tma_store,
    DefaultValuedParameter<"bool", "true">:$pingpong,
    DefaultValuedParameter<"bool", "false">:$producer,
    DefaultValuedParameter<"bool", "false">:$persistent,
    DefaultValuedParameter<"int64_t", "1">:$cta_programs,
    DefaultValuedParameter<"int64_t", "0">:$l2_group,
    DefaultValuedParameter<"bool", "false">:$reverse_x,
    DefaultValuedParameter<"bool", "false">:$index_ahead,
    DefaultValuedParameter<"bool", "false">:$cp_async);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Tile_PtrType : TypeDef<Tile_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "A pointer to global memory";
  let description = [{
    A scalar pointer into global memory, typed by what it points to.

    ```mlir
    func.func @k(%q: !tile.ptr<bf16>)
    ```
  }];
  let parameters = (ins "Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
}

def Tile_TileType : TypeDef<Tile_Dialect, "Tile", [ShapedTypeInterface]> {
  let mnemonic = "tile";
  let summary = "A statically shaped tile of scalars or pointers";
  let description = [{
    A block-level value with a static shape whose element type is an integer,
    a float or a `!tile.ptr`. An optional encoding (a `#tile.layout`) says how
    the elements are spread over the threads; it is set by layout assignment.

    ```mlir
    !tile.tile<128x64xf32>
    !tile.tile<64x!tile.ptr<bf16>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "Type":$elementType,
                        OptionalParameter<"Attribute">:$encoding);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "ArrayRef<int64_t>":$shape,
        "Type":$elementType, CArg<"Attribute", "{}">:$encoding), [{
      return $_get(elementType.getContext(), shape, elementType, encoding);
    }]>
  ];
  let extraClassDeclaration = [{
    using ShapedType::Trait<TileType>::getElementTypeBitWidth;
    using ShapedType::Trait<TileType>::getRank;
    using ShapedType::Trait<TileType>::getNumElements;
    using ShapedType::Trait<TileType>::isDynamicDim;
    using ShapedType::Trait<TileType>::hasStaticShape;
    using ShapedType::Trait<TileType>::getNumDynamicDims;
    using ShapedType::Trait<TileType>::getDimSize;
    using ShapedType::Trait<TileType>::getDynamicDimIndex;
    bool hasRank() const { return true; }
    TileType cloneWith(std::optional<ArrayRef<int64_t>> shape, Type elementType) const {
      return TileType::get(shape ? *shape : getShape(), elementType, getEncoding());
    }
    /// The same tile with another element type (layout kept).
    TileType withElementType(Type t) const {
      return TileType::get(getShape(), t, getEncoding());
    }
    /// The same tile with another layout.
    TileType withEncoding(Attribute e) const {
      return TileType::get(getShape(), getElementType(), e);
    }
    LayoutAttr getLayout() const {
      return ::llvm::dyn_cast_or_null<LayoutAttr>(getEncoding());
    }
  }];
}

def Tile_AnyTile : Type<CPred<"::llvm::isa<::mlir::tile::TileType>($_self)">,
                        "tile", "::mlir::tile::TileType">;

class Tile_TileOf<list<Type> allowed> : Type<
  And<[CPred<"::llvm::isa<::mlir::tile::TileType>($_self)">,
       Concat<"[](::mlir::Type t) { return ",
              SubstLeaves<"$_self", "t", AnyTypeOf<allowed>.predicate>,
              "; }(::llvm::cast<::mlir::tile::TileType>($_self).getElementType())">]>,
  "tile of " # AnyTypeOf<allowed>.summary, "::mlir::tile::TileType">;

def Tile_FloatLike : AnyTypeOf<[F16, BF16, F32, F64]>;
def Tile_IntLike : AnyTypeOf<[I1, I8, I16, I32, I64]>;
def Tile_Scalar : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, Tile_PtrType]>;
def Tile_FloatTile : Tile_TileOf<[F16, BF16, F32, F64]>;
def Tile_IntTile : Tile_TileOf<[I1, I8, I16, I32, I64]>;
def Tile_BoolTile : Tile_TileOf<[I1]>;
def Tile_IntNumTile : Tile_TileOf<[I8, I16, I32, I64]>;
def Tile_IndexTile : Tile_TileOf<[I32, I64]>;
def Tile_NumTile : Tile_TileOf<[F16, BF16, F32, F64, I8, I16, I32, I64]>;
def Tile_PtrTile : Tile_TileOf<[Tile_PtrType]>;
// fp8 tiles (e4m3 "FN": no infinities, NaN = S.1111.111; e5m2) are loaded,
// stored, moved, selected, cast and multiplied by `dot`; no arithmetic.
def Tile_ValueTile : Tile_TileOf<[F16, BF16, F32, F64, F8E4M3FN, F8E5M2, I1,
                                  I8, I16, I32, I64]>;
def Tile_DotOperandTile : Tile_TileOf<[F16, BF16, F32, F64, F8E4M3FN, F8E5M2]>;

#endif // TILE_TYPES_TD
