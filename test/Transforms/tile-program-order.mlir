// RUN: tile-opt %s -split-input-file -tile-program-order | FileCheck %s

// tile-program-order renames the program ids of kernels whose schedule
// asks for an order: each program_id(0) / (1) becomes a logical (X, Y)
// computed once at the entry; axis 2 and kernels without an order are left
// alone.

// reverse_x alone: X = num_programs(0) - 1 - x, Y = y.
// CHECK-LABEL: func.func @reverse
// CHECK-DAG: %[[X:.*]] = tile.program_id 0 : i32
// CHECK-DAG: %[[Y:.*]] = tile.program_id 1 : i32
// CHECK-DAG: %[[NX:.*]] = tile.num_programs 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[LAST:.*]] = arith.subi %[[NX]], %[[ONE]] : i32
// CHECK: %[[CL:.*]] = arith.minui %[[X]], %[[LAST]] : i32
// CHECK: %[[RX:.*]] = arith.subi %[[LAST]], %[[CL]] : i32
// CHECK-NOT: tile.program_id
// CHECK: arith.addi %[[RX]], %[[Y]]
// CHECK: tile.program_id 2 : i32
func.func @reverse() -> i32 attributes {tile.kernel, tile.schedule = #tile.schedule<reverse_x = true>} {
  %x = tile.program_id 0 : i32
  %y = tile.program_id 1 : i32
  %s = arith.addi %x, %y : i32
  %z = tile.program_id 2 : i32
  %t = arith.addi %s, %z : i32
  return %t : i32
}

// -----

// l2_group = 64: p = x + nx * y; h = max(1, 64 / nx) rows of y per group;
// first = p / (nx * h) * h; size = min(h, ny - first); r = p - first * nx;
// X = r / size, Y = first + r % size.
// CHECK-LABEL: func.func @grouped
// CHECK-DAG: %[[X:.*]] = tile.program_id 0 : i32
// CHECK-DAG: %[[Y:.*]] = tile.program_id 1 : i32
// CHECK-DAG: %[[NX:.*]] = tile.num_programs 0 : i32
// CHECK-DAG: %[[NY:.*]] = tile.num_programs 1 : i32
// CHECK: %[[NXY:.*]] = arith.muli %[[NX]], %[[Y]] : i32
// CHECK: %[[P:.*]] = arith.addi %[[X]], %[[NXY]] : i32
// CHECK: %[[G:.*]] = arith.constant 64 : i32
// CHECK: %[[GN:.*]] = arith.divsi %[[G]], %[[NX]] : i32
// CHECK: %[[H:.*]] = arith.maxsi %{{.*}}, %[[GN]] : i32
// CHECK: %[[SPAN:.*]] = arith.muli %[[NX]], %[[H]] : i32
// CHECK: %[[GRP:.*]] = arith.divsi %[[P]], %[[SPAN]] : i32
// CHECK: %[[FIRST:.*]] = arith.muli %[[GRP]], %[[H]] : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[NY]], %[[FIRST]] : i32
// CHECK: %[[SIZE:.*]] = arith.minsi %[[H]], %[[LEFT]] : i32
// CHECK: %[[FNX:.*]] = arith.muli %[[FIRST]], %[[NX]] : i32
// CHECK: %[[R:.*]] = arith.subi %[[P]], %[[FNX]] : i32
// CHECK: %[[LX:.*]] = arith.divsi %[[R]], %[[SIZE]] : i32
// CHECK: %[[RY:.*]] = arith.remsi %[[R]], %[[SIZE]] : i32
// CHECK: %[[LY:.*]] = arith.addi %[[FIRST]], %[[RY]] : i32
// CHECK-NOT: tile.program_id
// CHECK: arith.subi %[[LX]], %[[LY]]
func.func @grouped() -> i32 attributes {tile.kernel, tile.schedule = #tile.schedule<l2_group = 64>} {
  %x = tile.program_id 0 : i32
  %y = tile.program_id 1 : i32
  %s = arith.subi %x, %y : i32
  return %s : i32
}

// -----

// Without an order in the schedule, nothing changes.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: %[[X:.*]] = tile.program_id 0 : i32
// CHECK-NEXT: %[[Y:.*]] = tile.program_id 1 : i32
// CHECK-NEXT: arith.addi %[[X]], %[[Y]]
func.func @plain() -> i32 attributes {tile.kernel, tile.schedule = #tile.schedule<num_warps = 8>} {
  %x = tile.program_id 0 : i32
  %y = tile.program_id 1 : i32
  %s = arith.addi %x, %y : i32
  return %s : i32
}
