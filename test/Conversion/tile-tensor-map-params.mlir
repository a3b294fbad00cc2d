// tile-tensor-map-params: the trailing parameters that `tile.tensor_maps`
// counts become 128-byte by-value grid constants (PTX `.param .align 64
// .b8 [128]`); the other parameters keep their attributes.
// RUN: tile-opt %s -split-input-file -tile-tensor-map-params -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @two_maps(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 16 : i64},
// CHECK-SAME: %{{.*}}: i32,
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
llvm.func @two_maps(%k: !llvm.ptr {llvm.align = 16 : i64}, %n: i32, %mk: !llvm.ptr, %mv: !llvm.ptr)
    attributes {nvvm.kernel, tile.tensor_maps = [array<i64: 0, 2, 64, 64, 64, 64>, array<i64: 0, 2, 64, 64, 64, 64>]} {
  llvm.return
}

// A kernel without maps is left alone.
// CHECK-LABEL: llvm.func @no_maps(
// CHECK-SAME: %{{.*}}: !llvm.ptr)
// CHECK-NOT: byval
llvm.func @no_maps(%p: !llvm.ptr) attributes {nvvm.kernel} {
  llvm.return
}

// -----

// expected-error @+1 {{tensor map parameter 1 is not a pointer}}
llvm.func @not_a_pointer(%p: !llvm.ptr, %m: i64)
    attributes {nvvm.kernel, tile.tensor_maps = [array<i64: 0, 2, 64, 64, 64, 64>]} {
  llvm.return
}

// -----

// expected-error @+1 {{tile.tensor_maps counts more parameters than the kernel has}}
llvm.func @too_many(%m: !llvm.ptr)
    attributes {nvvm.kernel, tile.tensor_maps = [array<i64: 0, 2, 64, 64, 64, 64>, array<i64: 0, 2, 64, 64, 64, 64>]} {
  llvm.return
}
