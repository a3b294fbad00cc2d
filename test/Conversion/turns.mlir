// Warpgroup turns lower only in kernels of 8 warps on sm_90a.
// RUN: not tile-opt %s -split-input-file -convert-tile-to-gpu 2>&1 | FileCheck %s

// CHECK: error: warpgroup turns need 8 warps (256 threads)
module attributes {tile.arch = "sm_90a"} {
  func.func @four_warps() attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
    tile.turn_wait
    return
  }
}

// -----

// CHECK: error: warpgroup turns need sm_90a, not sm_80
module attributes {tile.arch = "sm_80"} {
  func.func @sm80() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
    tile.turn_pass
    return
  }
}

// -----

// 8 warps on sm_90a: bar.sync on barrier 1 + warpgroup, bar.arrive on 2 - it.
// (the other cases fail, so tile-opt exits non-zero: `not`)
// RUN: not tile-opt %s -split-input-file -convert-tile-to-gpu 2>/dev/null | FileCheck %s --check-prefix=OK
// OK-LABEL: gpu.func @eight_warps
// OK: bar.sync $0, 256;
// OK: @p bar.arrive $0, 256;
module attributes {tile.arch = "sm_90a"} {
  func.func @eight_warps() attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
    tile.turn_wait
    tile.turn_pass
    return
  }
}
