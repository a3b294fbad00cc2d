// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// Round trip of the unsigned, shift, mulhi and bitcast ops, the unsigned
// comparison predicates and tile.cast {is_unsigned}.

// CHECK-LABEL: func.func @unsigned_ops
func.func @unsigned_ops(%a: !tile.tile<64xi32>, %b: !tile.tile<64xi32>,
                        %c: !tile.tile<64xi8>) {
  // CHECK: tile.divu %{{.*}}, %{{.*}} : <64xi32>
  %0 = tile.divu %a, %b : !tile.tile<64xi32>
  // CHECK: tile.remu %{{.*}}, %{{.*}} : <64xi32>
  %1 = tile.remu %a, %b : !tile.tile<64xi32>
  // CHECK: tile.maxu %{{.*}}, %{{.*}} : <64xi32>
  %2 = tile.maxu %a, %b : !tile.tile<64xi32>
  // CHECK: tile.minu %{{.*}}, %{{.*}} : <64xi8>
  %3 = tile.minu %c, %c : !tile.tile<64xi8>
  // CHECK: tile.shl %{{.*}}, %{{.*}} : <64xi32>
  %4 = tile.shl %a, %b : !tile.tile<64xi32>
  // CHECK: tile.shrs %{{.*}}, %{{.*}} : <64xi32>
  %5 = tile.shrs %a, %b : !tile.tile<64xi32>
  // CHECK: tile.shru %{{.*}}, %{{.*}} : <64xi32>
  %6 = tile.shru %a, %b : !tile.tile<64xi32>
  // CHECK: tile.mulhiu %{{.*}}, %{{.*}} : <64xi32>
  %7 = tile.mulhiu %a, %b : !tile.tile<64xi32>
  // CHECK: tile.cmp ult %{{.*}}, %{{.*}} : <64xi32> -> <64xi1>
  %8 = tile.cmp ult %a, %b : !tile.tile<64xi32> -> !tile.tile<64xi1>
  // CHECK: tile.cmp uge %{{.*}}, %{{.*}} : <64xi32> -> <64xi1>
  %9 = tile.cmp uge %a, %b : !tile.tile<64xi32> -> !tile.tile<64xi1>
  // CHECK: tile.cast %{{.*}} {is_unsigned} : <64xi32> -> <64xi64>
  %10 = tile.cast %a {is_unsigned} : !tile.tile<64xi32> -> !tile.tile<64xi64>
  // CHECK: tile.bitcast %{{.*}} : <64xi32> -> <64xf32>
  %11 = tile.bitcast %a : !tile.tile<64xi32> -> !tile.tile<64xf32>
  return
}
