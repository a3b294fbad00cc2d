// RUN: tile-opt %s -split-input-file -tile-dynamic-persistent -verify-diagnostics | FileCheck %s

// tile-dynamic-persistent: each loop over logical programs that
// tile-persistent made (scf.for %t = program_id(0) to total step
// num_programs(0) {tile.persistent}) becomes an scf.while over the programs
// taken from a launch-wide counter: the first ticket before the loop, the
// next one taken at the top of the body (one ahead), each handed to the
// threads by tile.share_program with a sequence number carried beside t.
// The loop's annotation (no LICM) rides on the last share_program, to the
// latch branch. In a tile.warp_specialize the producer region's loop takes
// and publishes the tickets; the consumer region's loop only reads them
// (no ticket, no `publisher`). Other loops and iter_args carry over.

#noLicm = #llvm.loop_annotation<licm = #llvm.loop_licm<disable = true>>

// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[O:[^:]*]]: !tile.ptr<i32>,
// CHECK: %[[XY:.*]] = arith.muli
// CHECK: %[[TOTAL:.*]] = arith.muli %[[XY]], %{{.*}} : i32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[K0:.*]] = tile.program_ticket %[[TOTAL]] : i32
// CHECK: %[[T0:.*]] = tile.share_program %[[K0]], %[[C0]] {publisher} : i32
// CHECK: %[[W:.*]]:3 = scf.while (%[[T:.*]] = %[[T0]], %[[SEQ:.*]] = %[[C0]], %[[SUM:.*]] = %{{.*}}) : (i32, i32, i32) -> (i32, i32, i32) {
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[T]], %[[TOTAL]] : i32
// CHECK: scf.condition(%[[MORE]]) %[[T]], %[[SEQ]], %[[SUM]]
// CHECK: } do {
// CHECK: ^bb0(%[[BT:.*]]: i32, %[[BSEQ:.*]]: i32, %[[BSUM:.*]]: i32):
// CHECK-NEXT: %[[K:.*]] = tile.program_ticket %[[TOTAL]] : i32
// CHECK-NEXT: %[[P:.*]] = tile.addptr %[[O]], %[[BT]]
// CHECK: %[[NSUM:.*]] = arith.addi %[[BSUM]], %[[BT]] : i32
// CHECK-NEXT: %[[NSEQ:.*]] = arith.addi %[[BSEQ]], %[[C1]] : i32
// CHECK-NEXT: %[[NT:.*]] = tile.share_program %[[K]], %[[NSEQ]] {llvm.loop_annotation = #{{.*}}, publisher} : i32
// CHECK-NEXT: scf.yield %[[NT]], %[[NSEQ]], %[[NSUM]] : i32, i32, i32
// CHECK-NOT: scf.for
// CHECK: tile.splat %[[W]]#2 : <4xi32>
module attributes {tile.arch = "sm_90a"} {
  func.func @plain(%o: !tile.ptr<i32>, %gx: i32 {tile.name = "grid_x"}, %gy: i32 {tile.name = "grid_y"}, %gz: i32 {tile.name = "grid_z"}) attributes {tile.kernel, tile.persistent, tile.schedule = #tile.schedule<persistent = true>} {
    %c0 = arith.constant 0 : i32
    %first = tile.program_id 0 : i32
    %step = tile.num_programs 0 : i32
    %xy = arith.muli %gx, %gy : i32
    %total = arith.muli %xy, %gz : i32
    %sum = scf.for %t = %first to %total step %step iter_args(%s = %c0) -> (i32) : i32 {
      %p = tile.addptr %o, %t : !tile.ptr<i32>, i32
      %ps = tile.splat %p : <4x!tile.ptr<i32>>
      %v = tile.splat %t : <4xi32>
      tile.store %ps, %v : <4x!tile.ptr<i32>>, <4xi32>
      %s2 = arith.addi %s, %t : i32
      scf.yield %s2 : i32
    } {llvm.loop_annotation = #noLicm, tile.persistent}
    %ps = tile.splat %o : <4x!tile.ptr<i32>>
    %v = tile.splat %sum : <4xi32>
    tile.store %ps, %v : <4x!tile.ptr<i32>>, <4xi32>
    return
  }
}

// -----

// Warp-specialized: the producer's loop publishes, the consumer's reads
// (ticket 0, no program_ticket, no publisher).
// CHECK-LABEL: func.func @specialized(
// CHECK: tile.warp_specialize producer {
// CHECK: %[[PK0:.*]] = tile.program_ticket %[[PTOTAL:[^ ]*]] : i32
// CHECK: tile.share_program %[[PK0]], %{{.*}} {publisher} : i32
// CHECK: scf.while
// CHECK: } do {
// CHECK: %[[PK:.*]] = tile.program_ticket %[[PTOTAL]] : i32
// CHECK: tile.tma_copy
// CHECK: tile.share_program %[[PK]], %{{.*}} {llvm.loop_annotation = #{{.*}}, publisher} : i32
// CHECK: } consumer {
// CHECK-NOT: tile.program_ticket
// CHECK-NOT: publisher
// CHECK: %[[CT0:.*]] = tile.share_program %[[Z:[^,]*]], %[[Z]] : i32
// CHECK: scf.while (%{{.*}} = %[[CT0]],
// CHECK: } do {
// CHECK: tile.tma_wait
// CHECK: tile.share_program %[[Z]], %{{.*}} {llvm.loop_annotation = #{{[^,]*}}} : i32
// CHECK-NOT: scf.for
// CHECK: return
#noLicm = #llvm.loop_annotation<licm = #llvm.loop_licm<disable = true>>
module attributes {tile.arch = "sm_90a"} {
  func.func @specialized(%k: !tile.ptr<bf16>, %out: !tile.tile<64x64x!tile.ptr<bf16>>, %gx: i32 {tile.name = "grid_x"}, %gy: i32 {tile.name = "grid_y"}, %gz: i32 {tile.name = "grid_z"}) attributes {tile.kernel, tile.persistent, tile.schedule = #tile.schedule<producer = true, persistent = true>} {
    tile.warp_specialize producer {
      %true = arith.constant true
      %c0 = arith.constant 0 : i32
      %first = tile.program_id 0 : i32
      %step = tile.num_programs 0 : i32
      %xy = arith.muli %gx, %gy : i32
      %total = arith.muli %xy, %gz : i32
      scf.for %t = %first to %total step %step : i32 {
        tile.tma_copy %k, %t, %t, %true {inner_dim = 1 : i64, producer, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
      } {llvm.loop_annotation = #noLicm, tile.persistent}
    } consumer {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c3 = arith.constant 3 : i32
      %c64 = arith.constant 64 : i32
      %first = tile.program_id 0 : i32
      %step = tile.num_programs 0 : i32
      %xy = arith.muli %gx, %gy : i32
      %total = arith.muli %xy, %gz : i32
      scf.for %t = %first to %total step %step : i32 {
        %stage = arith.remui %t, %c3 : i32
        %round = arith.divui %t, %c3 : i32
        %parity = arith.andi %round, %c1 : i32
        %tile = tile.tma_wait %stage, %parity, %c64 {inner_dim = 1 : i64, slot = 0 : i64} : i32, i32, i32 -> <64x64xbf16>
        tile.tma_release %stage {slot = 0 : i64}
        tile.store %out, %tile : <64x64x!tile.ptr<bf16>>, <64x64xbf16>
      } {llvm.loop_annotation = #noLicm, tile.persistent}
    }
    return
  }
}

// -----

// A loop over programs needs an i32 induction variable (the ticket's type).
func.func @index_loop(%n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a persistent loop needs an i32 induction variable}}
  scf.for %t = %c0 to %n step %c1 {
  } {tile.persistent}
  return
}
