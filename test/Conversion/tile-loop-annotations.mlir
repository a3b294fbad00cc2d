// RUN: tile-opt %s -split-input-file -tile-loop-annotations | FileCheck %s

// tile-loop-annotations: convert-scf-to-cf and cf-to-llvm leave an scf.for's
// `llvm.loop_annotation` (tile-persistent's loop over programs: LICM off) as
// a discardable attribute of its latch branch; this pass makes it the
// branch's own `loop_annotation` (which becomes `!llvm.loop`). A
// persistent scf.while's annotation comes on the inline asm of its last
// tile.share_program instead: it moves to the branch ending that block.

#noLicm = #llvm.loop_annotation<licm = #llvm.loop_licm<disable = true>>

// CHECK: #[[$LICM:.*]] = #llvm.loop_licm<disable = true>
// CHECK: #[[$NOLICM:.*]] = #llvm.loop_annotation<licm = #[[$LICM]]>

// The scf.for latch: llvm.br.
// CHECK-LABEL: llvm.func @for_latch(
// CHECK: llvm.cond_br %{{.*}}, ^bb2, ^bb3{{$}}
// CHECK: llvm.br ^bb1(%{{.*}} : i32) {loop_annotation = #[[$NOLICM]]}
// CHECK-NOT: llvm.loop_annotation =
llvm.func @for_latch(%n: i32) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^bb1(%c0 : i32)
^bb1(%i: i32):
  %more = llvm.icmp "slt" %i, %n : i32
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  %next = llvm.add %i, %c1 : i32
  llvm.br ^bb1(%next : i32) {llvm.loop_annotation = #noLicm}
^bb3:
  llvm.return
}

// A latch that is a conditional branch.
// CHECK-LABEL: llvm.func @cond_latch(
// CHECK: llvm.cond_br %{{.*}}, ^bb1(%{{.*}} : i32), ^bb2 {loop_annotation = #[[$NOLICM]]}
// CHECK-NOT: llvm.loop_annotation =
llvm.func @cond_latch(%n: i32) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^bb1(%c0 : i32)
^bb1(%i: i32):
  %next = llvm.add %i, %c1 : i32
  %more = llvm.icmp "slt" %next, %n : i32
  llvm.cond_br %more, ^bb1(%next : i32), ^bb2 {llvm.loop_annotation = #noLicm}
^bb2:
  llvm.return
}

// -----

// The scf.while latch: the annotation is on the inline asm (of
// tile.share_program) before the block's branch; both move.
// CHECK-LABEL: llvm.func @while_latch(
// CHECK: llvm.inline_asm
// CHECK-NOT: llvm.loop_annotation =
// CHECK-SAME: : (i32) -> i32
// CHECK-NEXT: llvm.br ^bb1(%{{.*}} : i32) {loop_annotation = #[[$NOLICM]]}
// CHECK-NOT: llvm.loop_annotation =
#noLicm = #llvm.loop_annotation<licm = #llvm.loop_licm<disable = true>>
llvm.func @while_latch(%n: i32) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  llvm.br ^bb1(%c0 : i32)
^bb1(%t: i32):
  %more = llvm.icmp "slt" %t, %n : i32
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  %next = "llvm.inline_asm"(%t) <{asm_string = "add.s32 $0, $1, 1;", constraints = "=r,r", has_side_effects}> {llvm.loop_annotation = #noLicm} : (i32) -> i32
  llvm.br ^bb1(%next : i32)
^bb3:
  llvm.return
}

// -----

// Branches without the attribute are left alone.
// CHECK-LABEL: llvm.func @plain(
// CHECK-NOT: loop_annotation
// CHECK: llvm.return
llvm.func @plain(%n: i32) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^bb1(%c0 : i32)
^bb1(%i: i32):
  %next = llvm.add %i, %c1 : i32
  %more = llvm.icmp "slt" %next, %n : i32
  llvm.cond_br %more, ^bb1(%next : i32), ^bb2
^bb2:
  llvm.return
}
