// RUN: tile-opt %s -split-input-file -tile-persistent -verify-diagnostics | FileCheck %s

// tile-persistent: a kernel whose schedule has persistent = true takes the
// logical grid as three appended i32 parameters (grid_x, grid_y, grid_z)
// and its body becomes an scf.for marked tile.persistent (LICM off) over
// the logical programs t = program_id(0), + num_programs(0), ... <
// gx * gy * gz; inside it program_id(d) is the d-th coordinate of t (x
// fastest) and num_programs(d) the logical grid's size.

// CHECK-LABEL: func.func @ids(
// CHECK-SAME: %[[O:[^:]*]]: !tile.ptr<i32> {tile.name = "o"},
// CHECK-SAME: %[[GX:[^:]*]]: i32 {tile.name = "grid_x"},
// CHECK-SAME: %[[GY:[^:]*]]: i32 {tile.name = "grid_y"},
// CHECK-SAME: %[[GZ:[^:]*]]: i32 {tile.name = "grid_z"})
// CHECK-SAME: tile.persistent
// CHECK: %[[FIRST:.*]] = tile.program_id 0 : i32
// CHECK: %[[STEP:.*]] = tile.num_programs 0 : i32
// CHECK: %[[XY:.*]] = arith.muli %[[GX]], %[[GY]] : i32
// CHECK: %[[ALL:.*]] = arith.muli %[[XY]], %[[GZ]] : i32
// CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %[[ALL]] step %[[STEP]] : i32 {
// CHECK-DAG: %[[YZ:.*]] = arith.divui %[[T]], %[[GX]] : i32
// CHECK-DAG: %[[X:.*]] = arith.remui %[[T]], %[[GX]] : i32
// CHECK-DAG: %[[Y:.*]] = arith.remui %[[YZ]], %[[GY]] : i32
// CHECK-DAG: %[[Z:.*]] = arith.divui %[[YZ]], %[[GY]] : i32
// CHECK-NOT: tile.program_id
// CHECK-NOT: tile.num_programs
// CHECK: %[[S1:.*]] = arith.addi %[[X]], %[[Y]] : i32
// CHECK: %[[S2:.*]] = arith.addi %[[S1]], %[[Z]] : i32
// CHECK: %[[S3:.*]] = arith.addi %[[S2]], %[[GX]] : i32
// CHECK: %[[S4:.*]] = arith.addi %[[S3]], %[[GZ]] : i32
// CHECK: tile.addptr %[[O]], %[[S4]]
// CHECK: tile.store
// CHECK: } {llvm.loop_annotation = #{{.*}}, tile.persistent}
// CHECK-NEXT: return
func.func @ids(%o: !tile.ptr<i32> {tile.name = "o"}) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
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

// cta_programs = 2: the loop runs over ceil(gx / 2) * gy * gz tickets;
// program_id(0) = min((t mod ceil(gx / 2)) * 2 + cta_member, gx - 1), and
// program_id(0) / 2 is the CTA's x (t mod ceil(gx / 2)). (The pass builds
// some of these ops in the C++ compiler's order of evaluating arguments,
// hence the DAGs.)
// CHECK-LABEL: func.func @cta_programs(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<i32>,
// CHECK-SAME: %[[GX:[^:]*]]: i32 {tile.name = "grid_x"},
// CHECK-SAME: %[[GY:[^:]*]]: i32 {tile.name = "grid_y"},
// CHECK-SAME: %[[GZ:[^:]*]]: i32 {tile.name = "grid_z"})
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[UP:.*]] = arith.addi %[[GX]], %[[C1]] : i32
// CHECK: %[[CX:.*]] = arith.divui %[[UP]], %[[C2]] : i32
// CHECK: %[[XY:.*]] = arith.muli %[[CX]], %[[GY]] : i32
// CHECK: %[[ALL:.*]] = arith.muli %[[XY]], %[[GZ]] : i32
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[ALL]] step %{{.*}} : i32 {
// CHECK-DAG: %[[CTAX:.*]] = arith.remui %[[T]], %[[CX]] : i32
// CHECK-DAG: %[[M2:.*]] = arith.muli %[[CTAX]], %{{.*}} : i32
// CHECK-DAG: %[[MEMBER:.*]] = tile.cta_member : i32
// CHECK-DAG: %[[MX:.*]] = arith.addi %[[M2]], %[[MEMBER]] : i32
// CHECK-DAG: %[[LAST:.*]] = arith.subi %[[GX]], %{{.*}} : i32
// CHECK: %[[X:.*]] = arith.minui %[[MX]], %[[LAST]] : i32
// CHECK-NOT: tile.program_id
// CHECK: %[[S:.*]] = arith.addi %[[X]], %[[CTAX]] : i32
// CHECK: tile.addptr %{{.*}}, %[[S]]
// CHECK: } {llvm.loop_annotation = #{{.*}}, tile.persistent}
func.func @cta_programs(%o: !tile.ptr<i32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8, producer = true, persistent = true, cta_programs = 2>} {
  %x = tile.program_id 0 : i32
  %c2 = arith.constant 2 : i32
  %h = arith.divsi %x, %c2 : i32
  %s = arith.addi %x, %h : i32
  %p = tile.addptr %o, %s : !tile.ptr<i32>, i32
  %ps = tile.splat %p : <4x!tile.ptr<i32>>
  %v = tile.splat %s : <4xi32>
  tile.store %ps, %v : <4x!tile.ptr<i32>>, <4xi32>
  return
}

// -----

// Without persistent = true nothing changes: no parameters, no loop.
// CHECK-LABEL: func.func @plain(%{{[^:]*}}: !tile.ptr<i32>) attributes
// CHECK-NOT: tile.persistent
// CHECK-NEXT: %[[X:.*]] = tile.program_id 0 : i32
// CHECK-NEXT: %[[N:.*]] = tile.num_programs 0 : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[X]], %[[N]] : i32
// CHECK-NEXT: tile.addptr %{{.*}}, %[[S]]
// CHECK-NEXT: return
func.func @plain(%o: !tile.ptr<i32>) attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
  %x = tile.program_id 0 : i32
  %n = tile.num_programs 0 : i32
  %s = arith.addi %x, %n : i32
  %p = tile.addptr %o, %s : !tile.ptr<i32>, i32
  return
}

// -----

// cta_programs > 1 repeats the last program of a row in a CTA's spare
// members: atomic_add would add twice.
// expected-error @+1 {{cta_programs > 1 does not support atomic_add}}
func.func @cta_atomic(%p: !tile.tile<64x!tile.ptr<f32>>, %v: !tile.tile<64xf32>) attributes {tile.kernel, tile.schedule = #tile.schedule<producer = true, persistent = true, cta_programs = 2>} {
  %r = tile.atomic_add %p, %v : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32> -> !tile.tile<64xf32>
  return
}
