// RUN: tile-opt %s -split-input-file -tile-grid-offsets | FileCheck %s

// tile-grid-offsets: a grid over 65535 along y or z runs as several
// launches; program_id(1|2) adds the launch's offset and num_programs(1|2)
// is the whole grid's size, i32 parameters appended in the order offset_y,
// size_y, offset_z, size_z where the kernel reads them, listed in
// tile.grid_args for the manifest. program_id(0) and num_programs(0) are
// untouched.

// CHECK-LABEL: func.func @ids(
// CHECK-SAME: %[[O:[^:]*]]: !tile.ptr<i32> {tile.name = "o"},
// CHECK-SAME: %[[OY:[^:]*]]: i32 {tile.name = "program_offset_y"},
// CHECK-SAME: %[[OZ:[^:]*]]: i32 {tile.name = "program_offset_z"},
// CHECK-SAME: %[[NZ:[^:]*]]: i32 {tile.name = "grid_size_z"})
// CHECK-SAME: tile.grid_args = ["offset_y", "offset_z", "size_z"]
// CHECK: %[[X:.*]] = tile.program_id 0 : i32
// CHECK: %[[Y0:.*]] = tile.program_id 1 : i32
// CHECK: %[[Y:.*]] = arith.addi %[[Y0]], %[[OY]] : i32
// CHECK: %[[Z0:.*]] = tile.program_id 2 : i32
// CHECK: %[[Z:.*]] = arith.addi %[[Z0]], %[[OZ]] : i32
// CHECK: %[[NX:.*]] = tile.num_programs 0 : i32
// CHECK-NOT: tile.num_programs 2
// CHECK: %[[S1:.*]] = arith.addi %[[X]], %[[Y]] : i32
// CHECK: %[[S2:.*]] = arith.addi %[[S1]], %[[Z]] : i32
// CHECK: %[[S3:.*]] = arith.addi %[[S2]], %[[NX]] : i32
// CHECK: %[[S4:.*]] = arith.addi %[[S3]], %[[NZ]] : i32
// CHECK: tile.addptr %[[O]], %[[S4]]
func.func @ids(%o: !tile.ptr<i32> {tile.name = "o"}) attributes {tile.kernel} {
  %x = tile.program_id 0 : i32
  %y = tile.program_id 1 : i32
  %z = tile.program_id 2 : i32
  %nx = tile.num_programs 0 : i32
  %nz = tile.num_programs 2 : i32
  %s1 = arith.addi %x, %y : i32
  %s2 = arith.addi %s1, %z : i32
  %s3 = arith.addi %s2, %nx : i32
  %s4 = arith.addi %s3, %nz : i32
  %p = tile.addptr %o, %s4 : !tile.ptr<i32>, i32
  %i = tile.iota : <4xi32>
  %ps = tile.splat %p : <4x!tile.ptr<i32>>
  %pt = tile.addptr %ps, %i : !tile.tile<4x!tile.ptr<i32>>, !tile.tile<4xi32>
  tile.store %pt, %i : <4x!tile.ptr<i32>>, <4xi32>
  return
}

// -----

// A kernel that reads only x gets no parameter and an empty list: its PTX
// is what it was, and the launcher may still split a large y or z.
// CHECK-LABEL: func.func @only_x(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<i32> {tile.name = "o"})
// CHECK-SAME: tile.grid_args = []
// CHECK-NOT: arith.addi
func.func @only_x(%o: !tile.ptr<i32> {tile.name = "o"}) attributes {tile.kernel} {
  %x = tile.program_id 0 : i32
  %p = tile.addptr %o, %x : !tile.ptr<i32>, i32
  %i = tile.iota : <4xi32>
  %ps = tile.splat %p : <4x!tile.ptr<i32>>
  %pt = tile.addptr %ps, %i : !tile.tile<4x!tile.ptr<i32>>, !tile.tile<4xi32>
  tile.store %pt, %i : <4x!tile.ptr<i32>>, <4xi32>
  return
}

// -----

// num_programs(1) alone: the size parameter only.
// CHECK-LABEL: func.func @size_y(
// CHECK-SAME: %[[NY:[^:]*]]: i32 {tile.name = "grid_size_y"})
// CHECK-SAME: tile.grid_args = ["size_y"]
// CHECK-NOT: tile.num_programs
// CHECK: tile.addptr %{{.*}}, %[[NY]]
func.func @size_y(%o: !tile.ptr<i32> {tile.name = "o"}) attributes {tile.kernel} {
  %n = tile.num_programs 1 : i32
  %p = tile.addptr %o, %n : !tile.ptr<i32>, i32
  %i = tile.iota : <4xi32>
  %ps = tile.splat %p : <4x!tile.ptr<i32>>
  %pt = tile.addptr %ps, %i : !tile.tile<4x!tile.ptr<i32>>, !tile.tile<4xi32>
  tile.store %pt, %i : <4x!tile.ptr<i32>>, <4xi32>
  return
}

// -----

// Persistent kernels (tile-persistent) loop over a logical grid of any
// size: nothing to add.
// CHECK-LABEL: func.func @persistent(
// CHECK-SAME: tile.grid_args = []
// CHECK-NOT: program_offset
func.func @persistent(%o: !tile.ptr<i32> {tile.name = "o"}, %gx: i32 {tile.name = "grid_x"}, %gy: i32 {tile.name = "grid_y"}, %gz: i32 {tile.name = "grid_z"}) attributes {tile.kernel, tile.persistent} {
  %x = tile.program_id 0 : i32
  %p = tile.addptr %o, %x : !tile.ptr<i32>, i32
  %i = tile.iota : <4xi32>
  %ps = tile.splat %p : <4x!tile.ptr<i32>>
  %pt = tile.addptr %ps, %i : !tile.tile<4x!tile.ptr<i32>>, !tile.tile<4xi32>
  tile.store %pt, %i : <4x!tile.ptr<i32>>, <4xi32>
  return
}
