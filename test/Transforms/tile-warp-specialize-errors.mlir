// tile-warp-specialize: a copy whose operands the producer warpgroup cannot
// compute (here a loop bound from an op with a region, which the slice does
// not copy) is an error at that op, not a silently wrong producer. No .tile
// program reaches this (every scalar there is pure); the pass's contract
// still holds for IR from elsewhere.
//
// RUN: not tile-opt %s -tile-warp-specialize 2>&1 | FileCheck %s

module attributes {tile.arch = "sm_90a"} {
  func.func @k(%k: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<producer = true>} {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %true = arith.constant true
    // CHECK: tile-warp-specialize-errors.mlir:[[@LINE+1]]:11: error: schedule producer = true: a TMA copy needs this value, which the producer warpgroup cannot compute (a tile, or an op with memory effects or regions)
    %ub = scf.execute_region -> i32 {
      scf.yield %n : i32
    }
    scf.for %i = %c0 to %ub step %c64 : i32 {
      tile.tma_copy %k, %i, %c0, %true {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
    }
    return
  }
}
