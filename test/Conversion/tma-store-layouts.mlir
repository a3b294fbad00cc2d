// RUN: tile-opt %s -split-input-file -convert-tile-to-gpu=arch=sm_90a | FileCheck %s

// tile.tma_store writes each thread's elements into the 128-byte-swizzled
// buffer before the bulk copy (TmaStoreToGPU.cpp). In a layout whose register
// pairs hold columns (c, c + 1) of a row it writes words; where they do
// not (here register 1 is the next row), one 16-bit store per element.
// 64 x 64 bf16 over 4 warps: 32 elements per thread.

// Pairs along rows: 16 words per thread.
#pairs = #tile.layout<regs = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = [[16, 0], [32, 0]]>
// CHECK-LABEL: gpu.func @words
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-COUNT-16: st.shared.b32 [$0], $1;
// CHECK-NOT: st.shared
// CHECK: fence.proxy.async.shared::cta;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK: cp.async.bulk.wait_group 0;
func.func @words(%o: !tile.ptr<bf16>, %row: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
  %v = tile.full 1.0 : bf16 : !tile.tile<64x64xbf16, #pairs>
  tile.tma_store %o, %row, %v {inner_dim = 1 : i64, row_stride = 64 : i64, slot = 0 : i64} : !tile.ptr<bf16>, !tile.tile<64x64xbf16, #pairs>
  return
}

// -----

// Register 1 is the next row: 32 halves per thread.
#rows = #tile.layout<regs = [[1, 0], [0, 8], [8, 0], [16, 0], [32, 0]], lanes = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warps = [[0, 16], [0, 32]]>
// CHECK-LABEL: gpu.func @halves
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-COUNT-32: st.shared.b16 [$0], $1;
// CHECK-NOT: st.shared
// CHECK: fence.proxy.async.shared::cta;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
func.func @halves(%o: !tile.ptr<bf16>, %row: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<>} {
  %v = tile.full 1.0 : bf16 : !tile.tile<64x64xbf16, #rows>
  tile.tma_store %o, %row, %v {inner_dim = 1 : i64, row_stride = 64 : i64, slot = 0 : i64} : !tile.ptr<bf16>, !tile.tile<64x64xbf16, #rows>
  return
}
