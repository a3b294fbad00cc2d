// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// Round trip of every tile op in its custom assembly, of the tile and pointer
// types and of #tile.layout encodings. Inside an op's type list the printer
// drops the `!tile.tile` prefix where the operand's type constraint names
// TileType (`: <128xi32>`); both forms parse. Layouts print inline (no alias).

#acc = #tile.layout<regs = [[0, 1], [8, 0]], lanes = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>
#row = #tile.layout<regs = [[8]], lanes = [[0], [0], [1], [2], [4]], warps = []>


// CHECK-LABEL: func.func @types
// CHECK-SAME: (%{{.*}}: !tile.ptr<bf16>, %{{.*}}: !tile.ptr<f32>, %{{.*}}: !tile.ptr<i32>,
// CHECK-SAME: %{{.*}}: !tile.tile<128x64xf32>, %{{.*}}: !tile.tile<64x!tile.ptr<f16>>,
// CHECK-SAME: %{{.*}}: !tile.tile<2x4x8xi1>, %{{.*}}: !tile.tile<1xf64>,
// CHECK-SAME: %{{.*}}: !tile.tile<16x8xf32, #tile.layout<regs = {{\[}}[0, 1], [8, 0]], lanes = {{\[}}[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warps = []>>,
// CHECK-SAME: %{{.*}}: !tile.tile<16xf32, #tile.layout<regs = {{\[}}[8]], lanes = {{\[}}[0], [0], [1], [2], [4]], warps = []>>)
func.func @types(%a: !tile.ptr<bf16>, %b: !tile.ptr<f32>, %c: !tile.ptr<i32>,
                 %d: !tile.tile<128x64xf32>, %e: !tile.tile<64x!tile.ptr<f16>>,
                 %f: !tile.tile<2x4x8xi1>, %g: !tile.tile<1xf64>,
                 %h: !tile.tile<16x8xf32, #acc>, %i: !tile.tile<16xf32, #row>) {
  return
}

// CHECK-LABEL: func.func @program_ids
func.func @program_ids() -> (i32, i32, i32, i32) {
  // CHECK: tile.program_id 0 : i32
  // CHECK: tile.program_id 2 : i32
  // CHECK: tile.num_programs 0 : i32
  // CHECK: tile.num_programs 1 : i32
  %0 = tile.program_id 0 : i32
  %1 = tile.program_id 2 : i32
  %2 = tile.num_programs 0 : i32
  %3 = tile.num_programs 1 : i32
  return %0, %1, %2, %3 : i32, i32, i32, i32
}

// CHECK-LABEL: func.func @cta_member
func.func @cta_member() -> i32 {
  // CHECK: tile.cta_member : i32
  %0 = tile.cta_member : i32
  return %0 : i32
}

// CHECK-LABEL: func.func @creation
func.func @creation(%x: f32, %p: !tile.ptr<bf16>, %i: i64) {
  // CHECK: tile.iota : <128xi32>
  %0 = tile.iota : !tile.tile<128xi32>
  // CHECK: tile.iota : <64xi64>
  %1 = tile.iota : !tile.tile<64xi64>
  // CHECK: tile.full 0.000000e+00 : f32 : <128x64xf32>
  %2 = tile.full 0.0 : f32 : !tile.tile<128x64xf32>
  // CHECK: tile.full 0xFF800000 : f32 : <128xf32>
  %3 = tile.full 0xFF800000 : f32 : !tile.tile<128xf32>
  // CHECK: tile.full 7 : i32 : <16xi32>
  %4 = tile.full 7 : i32 : !tile.tile<16xi32>
  // CHECK: tile.full true : <4x4xi1>
  %5 = tile.full true : !tile.tile<4x4xi1>
  // CHECK: tile.full 1.000000e+00 : bf16 : <8xbf16>
  %6 = tile.full 1.0 : bf16 : !tile.tile<8xbf16>
  // CHECK: tile.splat %{{.*}} : <64xf32>
  %7 = tile.splat %x : !tile.tile<64xf32>
  // CHECK: tile.splat %{{.*}} : <16x64x!tile.ptr<bf16>>
  %8 = tile.splat %p : !tile.tile<16x64x!tile.ptr<bf16>>
  // CHECK: tile.splat %{{.*}} : <32xi64>
  %9 = tile.splat %i : !tile.tile<32xi64>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%r: !tile.tile<128xi32>, %k: !tile.tile<64x128xbf16>,
                  %a: !tile.tile<16x8xf32, #acc>) {
  // CHECK: tile.expand_dims %{{.*}} {axis = 1 : i32} : <128xi32> -> <128x1xi32>
  %0 = tile.expand_dims %r {axis = 1 : i32} : !tile.tile<128xi32> -> !tile.tile<128x1xi32>
  // CHECK: tile.expand_dims %{{.*}} {axis = 0 : i32} : <128xi32> -> <1x128xi32>
  %1 = tile.expand_dims %r {axis = 0 : i32} : !tile.tile<128xi32> -> !tile.tile<1x128xi32>
  // CHECK: tile.broadcast %{{.*}} : <128x1xi32> -> <128x64xi32>
  %2 = tile.broadcast %0 : !tile.tile<128x1xi32> -> !tile.tile<128x64xi32>
  // CHECK: tile.broadcast %{{.*}} : <1x128xi32> -> <32x128xi32>
  %3 = tile.broadcast %1 : !tile.tile<1x128xi32> -> !tile.tile<32x128xi32>
  // CHECK: tile.trans %{{.*}} : <64x128xbf16> -> <128x64xbf16>
  %4 = tile.trans %k : !tile.tile<64x128xbf16> -> !tile.tile<128x64xbf16>
  // CHECK: tile.convert_layout %{{.*}} : <16x8xf32, #tile.layout<regs = {{\[}}[0, 1], [8, 0]], lanes = {{.*}}, warps = []>> -> <16x8xf32>{{$}}
  %5 = tile.convert_layout %a : !tile.tile<16x8xf32, #acc> -> !tile.tile<16x8xf32>
  // CHECK: tile.convert_layout %{{.*}} : <16x8xf32> -> <16x8xf32, #tile.layout<regs = {{\[}}[0, 1], [8, 0]], lanes = {{.*}}, warps = []>>
  %6 = tile.convert_layout %5 : !tile.tile<16x8xf32> -> !tile.tile<16x8xf32, #acc>
  return
}

// CHECK-LABEL: func.func @memory
func.func @memory(%q: !tile.ptr<bf16>, %off: i64, %off32: i32,
                  %pt: !tile.tile<128x64x!tile.ptr<bf16>>,
                  %offt: !tile.tile<128x64xi32>, %mask: !tile.tile<128x64xi1>,
                  %zero: !tile.tile<128x64xbf16>,
                  %pf: !tile.tile<64x!tile.ptr<f32>>, %vf: !tile.tile<64xf32>,
                  %mf: !tile.tile<64xi1>) {
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : !tile.ptr<bf16>, i64
  %0 = tile.addptr %q, %off : !tile.ptr<bf16>, i64
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : !tile.ptr<bf16>, i32
  %1 = tile.addptr %q, %off32 : !tile.ptr<bf16>, i32
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi32>
  %2 = tile.addptr %pt, %offt : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi32>
  // CHECK: tile.load %{{.*}} : <128x64x!tile.ptr<bf16>> -> <128x64xbf16>
  %3 = tile.load %2 : !tile.tile<128x64x!tile.ptr<bf16>> -> !tile.tile<128x64xbf16>
  // CHECK: tile.load %{{.*}}, %{{.*}} : <128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi1> -> <128x64xbf16>
  %4 = tile.load %2, %mask : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi1> -> !tile.tile<128x64xbf16>
  // CHECK: tile.load %{{.*}}, %{{.*}}, %{{.*}} : <128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi1>, !tile.tile<128x64xbf16> -> <128x64xbf16>
  %5 = tile.load %2, %mask, %zero : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xi1>, !tile.tile<128x64xbf16> -> !tile.tile<128x64xbf16>
  // CHECK: tile.store %{{.*}}, %{{.*}} : <128x64x!tile.ptr<bf16>>, <128x64xbf16>
  tile.store %2, %5 : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xbf16>
  // CHECK: tile.store %{{.*}}, %{{.*}}, %{{.*}} : <128x64x!tile.ptr<bf16>>, <128x64xbf16>, !tile.tile<128x64xi1>
  tile.store %2, %4, %mask : !tile.tile<128x64x!tile.ptr<bf16>>, !tile.tile<128x64xbf16>, !tile.tile<128x64xi1>
  // CHECK: tile.atomic_add %{{.*}}, %{{.*}} : <64x!tile.ptr<f32>>, <64xf32> -> <64xf32>
  %6 = tile.atomic_add %pf, %vf : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32> -> !tile.tile<64xf32>
  // CHECK: tile.atomic_add %{{.*}}, %{{.*}}, %{{.*}} : <64x!tile.ptr<f32>>, <64xf32>, !tile.tile<64xi1> -> <64xf32>
  %7 = tile.atomic_add %pf, %vf, %mf : !tile.tile<64x!tile.ptr<f32>>, !tile.tile<64xf32>, !tile.tile<64xi1> -> !tile.tile<64xf32>
  return
}

// CHECK-LABEL: func.func @dot_reduce
func.func @dot_reduce(%q: !tile.tile<128x64xbf16>, %k: !tile.tile<64x64xbf16>,
                      %acc: !tile.tile<128x64xf32>, %a32: !tile.tile<16x32xf32>,
                      %b32: !tile.tile<32x8xf32>, %c32: !tile.tile<16x8xf32>,
                      %a64: !tile.tile<16x16xf64>, %c64: !tile.tile<16x16xf64>,
                      %h: !tile.tile<32x16xf16>, %hb: !tile.tile<16x32xf16>,
                      %hc: !tile.tile<32x32xf32>, %s: !tile.tile<128x64xf32>,
                      %n: !tile.tile<8x4xi32>) {
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : <128x64xbf16>, <64x64xbf16>, <128x64xf32>
  %0 = tile.dot %q, %k, %acc : !tile.tile<128x64xbf16>, !tile.tile<64x64xbf16>, !tile.tile<128x64xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : <32x16xf16>, <16x32xf16>, <32x32xf32>
  %1 = tile.dot %h, %hb, %hc : !tile.tile<32x16xf16>, !tile.tile<16x32xf16>, !tile.tile<32x32xf32>
  // fp8 operands (e4m3 "FN", e5m2), f32 accumulator; and their casts.
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : <32x32xf8E4M3FN>, <32x32xf8E4M3FN>, <32x32xf32>
  %f8a = tile.cast %hc : <32x32xf32> -> <32x32xf8E4M3FN>
  %f8 = tile.dot %f8a, %f8a, %hc : !tile.tile<32x32xf8E4M3FN>, !tile.tile<32x32xf8E4M3FN>, !tile.tile<32x32xf32>
  // CHECK: tile.cast %{{.*}} : <32x32xf32> -> <32x32xf8E5M2>
  %f8b = tile.cast %hc : <32x32xf32> -> <32x32xf8E5M2>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : <16x32xf32>, <32x8xf32>, <16x8xf32>
  %2 = tile.dot %a32, %b32, %c32 : !tile.tile<16x32xf32>, !tile.tile<32x8xf32>, !tile.tile<16x8xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} {allow_tf32} : <16x32xf32>, <32x8xf32>, <16x8xf32>
  %3 = tile.dot %a32, %b32, %c32 {allow_tf32} : !tile.tile<16x32xf32>, !tile.tile<32x8xf32>, !tile.tile<16x8xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : <16x16xf64>, <16x16xf64>, <16x16xf64>
  %4 = tile.dot %a64, %a64, %c64 : !tile.tile<16x16xf64>, !tile.tile<16x16xf64>, !tile.tile<16x16xf64>
  // CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : <128x64xf32> -> <128xf32>
  %5 = tile.reduce max %s {axis = 1 : i32} : !tile.tile<128x64xf32> -> !tile.tile<128xf32>
  // CHECK: tile.reduce sum %{{.*}} {axis = 0 : i32} : <128x64xf32> -> <64xf32>
  %6 = tile.reduce sum %s {axis = 0 : i32} : !tile.tile<128x64xf32> -> !tile.tile<64xf32>
  // CHECK: tile.reduce min %{{.*}} {axis = 1 : i32} : <8x4xi32> -> <8xi32>
  %7 = tile.reduce min %n {axis = 1 : i32} : !tile.tile<8x4xi32> -> !tile.tile<8xi32>
  return
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: !tile.tile<64xf32>, %b: !tile.tile<64xf32>,
                       %i: !tile.tile<64xi32>, %j: !tile.tile<64xi32>,
                       %m: !tile.tile<64xi1>, %h: !tile.tile<8x8xbf16>) {
  // CHECK: tile.add %{{.*}}, %{{.*}} : <64xf32>
  %0 = tile.add %a, %b : !tile.tile<64xf32>
  // CHECK: tile.sub %{{.*}}, %{{.*}} : <64xf32>
  %1 = tile.sub %a, %b : !tile.tile<64xf32>
  // CHECK: tile.mul %{{.*}}, %{{.*}} : <64xf32>
  %2 = tile.mul %a, %b : !tile.tile<64xf32>
  // CHECK: tile.div %{{.*}}, %{{.*}} : <64xf32>
  %3 = tile.div %a, %b : !tile.tile<64xf32>
  // CHECK: tile.rem %{{.*}}, %{{.*}} : <64xi32>
  %4 = tile.rem %i, %j : !tile.tile<64xi32>
  // CHECK: tile.max %{{.*}}, %{{.*}} : <64xf32>
  %5 = tile.max %a, %b : !tile.tile<64xf32>
  // CHECK: tile.min %{{.*}}, %{{.*}} : <64xi32>
  %6 = tile.min %i, %j : !tile.tile<64xi32>
  // CHECK: tile.and %{{.*}}, %{{.*}} : <64xi1>
  %7 = tile.and %m, %m : !tile.tile<64xi1>
  // CHECK: tile.or %{{.*}}, %{{.*}} : <64xi32>
  %8 = tile.or %i, %j : !tile.tile<64xi32>
  // CHECK: tile.xor %{{.*}}, %{{.*}} : <64xi1>
  %9 = tile.xor %m, %m : !tile.tile<64xi1>
  // CHECK: tile.exp %{{.*}} : <64xf32>
  %10 = tile.exp %a : !tile.tile<64xf32>
  // CHECK: tile.exp2 %{{.*}} : <64xf32>
  %11 = tile.exp2 %a : !tile.tile<64xf32>
  // CHECK: tile.log %{{.*}} : <64xf32>
  %12 = tile.log %a : !tile.tile<64xf32>
  // CHECK: tile.log2 %{{.*}} : <64xf32>
  %13 = tile.log2 %a : !tile.tile<64xf32>
  // CHECK: tile.sqrt %{{.*}} : <64xf32>
  %14 = tile.sqrt %a : !tile.tile<64xf32>
  // CHECK: tile.rsqrt %{{.*}} : <64xf32>
  %15 = tile.rsqrt %a : !tile.tile<64xf32>
  // CHECK: tile.tanh %{{.*}} : <8x8xbf16>
  %16 = tile.tanh %h : !tile.tile<8x8xbf16>
  // CHECK: tile.abs %{{.*}} : <64xi32>
  %17 = tile.abs %i : !tile.tile<64xi32>
  // CHECK: tile.neg %{{.*}} : <64xf32>
  %18 = tile.neg %a : !tile.tile<64xf32>
  // CHECK: tile.cmp eq %{{.*}}, %{{.*}} : <64xi32> -> <64xi1>
  %19 = tile.cmp eq %i, %j : !tile.tile<64xi32> -> !tile.tile<64xi1>
  // CHECK: tile.cmp ne %{{.*}}, %{{.*}} : <64xf32> -> <64xi1>
  %20 = tile.cmp ne %a, %b : !tile.tile<64xf32> -> !tile.tile<64xi1>
  // CHECK: tile.cmp lt %{{.*}}, %{{.*}} : <64xi32> -> <64xi1>
  %21 = tile.cmp lt %i, %j : !tile.tile<64xi32> -> !tile.tile<64xi1>
  // CHECK: tile.cmp le %{{.*}}, %{{.*}} : <64xf32> -> <64xi1>
  %22 = tile.cmp le %a, %b : !tile.tile<64xf32> -> !tile.tile<64xi1>
  // CHECK: tile.cmp gt %{{.*}}, %{{.*}} : <64xi32> -> <64xi1>
  %23 = tile.cmp gt %i, %j : !tile.tile<64xi32> -> !tile.tile<64xi1>
  // CHECK: tile.cmp ge %{{.*}}, %{{.*}} : <64xf32> -> <64xi1>
  %24 = tile.cmp ge %a, %b : !tile.tile<64xf32> -> !tile.tile<64xi1>
  // CHECK: tile.where %{{.*}}, %{{.*}}, %{{.*}} : <64xi1>, <64xf32>
  %25 = tile.where %m, %a, %b : !tile.tile<64xi1>, !tile.tile<64xf32>
  // CHECK: tile.where %{{.*}}, %{{.*}}, %{{.*}} : <64xi1>, <64xi32>
  %26 = tile.where %m, %i, %j : !tile.tile<64xi1>, !tile.tile<64xi32>
  // CHECK: tile.cast %{{.*}} : <64xf32> -> <64xbf16>
  %27 = tile.cast %a : !tile.tile<64xf32> -> !tile.tile<64xbf16>
  // CHECK: tile.cast %{{.*}} : <64xi32> -> <64xf32>
  %28 = tile.cast %i : !tile.tile<64xi32> -> !tile.tile<64xf32>
  // CHECK: tile.cast %{{.*}} : <64xi1> -> <64xi64>
  %29 = tile.cast %m : !tile.tile<64xi1> -> !tile.tile<64xi64>
  // CHECK: tile.cast %{{.*}} : <8x8xbf16> -> <8x8xf16>
  %30 = tile.cast %h : !tile.tile<8x8xbf16> -> !tile.tile<8x8xf16>
  return
}

// A kernel body as the frontend builds it: the online-softmax loop with
// loop-carried tiles.
// CHECK-LABEL: func.func @online_softmax
// CHECK-SAME: attributes {tile.kernel}
// CHECK: %[[R:.+]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.+]] = %{{.*}}, %[[L:.+]] = %{{.*}}) -> (!tile.tile<16xf32>, !tile.tile<16xf32>)
// CHECK:   %[[RMAX:.+]] = tile.reduce max
// CHECK:   %[[MNEW:.+]] = tile.max %[[M]], %[[RMAX]] : <16xf32>
// CHECK:   tile.exp2
// CHECK:   scf.yield %[[MNEW]], %{{.*}} : !tile.tile<16xf32>, !tile.tile<16xf32>
func.func @online_softmax(%s: !tile.tile<16x8xf32>, %n: index) -> !tile.tile<16xf32>
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = tile.full 0xFF800000 : f32 : !tile.tile<16xf32>
  %zero = tile.full 0.0 : f32 : !tile.tile<16xf32>
  %r:2 = scf.for %iv = %c0 to %n step %c1 iter_args(%m = %ninf, %l = %zero)
      -> (!tile.tile<16xf32>, !tile.tile<16xf32>) {
    %rmax = tile.reduce max %s {axis = 1 : i32} : !tile.tile<16x8xf32> -> !tile.tile<16xf32>
    %mnew = tile.max %m, %rmax : !tile.tile<16xf32>
    %d = tile.sub %m, %mnew : !tile.tile<16xf32>
    %alpha = tile.exp2 %d : !tile.tile<16xf32>
    %lnew = tile.mul %l, %alpha : !tile.tile<16xf32>
    scf.yield %mnew, %lnew : !tile.tile<16xf32>, !tile.tile<16xf32>
  }
  %out = tile.div %r#1, %r#0 : !tile.tile<16xf32>
  return %out : !tile.tile<16xf32>
}

// CHECK-LABEL: func.func @tma_ring_and_turns
// CHECK: tile.turn_pass {first}
// CHECK: tile.tma_copy %arg0, %arg1, %arg1, %arg2 {inner_dim = 0 : i64, row_stride = 64 : i64, shape = array<i64: 64, 64>, slot = 0 : i64, stages = 3 : i64} : <bf16>
// CHECK: tile.turn_wait
// CHECK: tile.turn_pass{{$}}
func.func @tma_ring_and_turns(%k: !tile.ptr<bf16>, %n: i32, %ok: i1) {
  tile.turn_pass {first}
  tile.tma_copy %k, %n, %n, %ok {slot = 0 : i64, stages = 3 : i64, shape = array<i64: 64, 64>, inner_dim = 0 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>
  tile.turn_wait
  tile.turn_pass
  return
}

// CHECK-LABEL: func.func @tma_store
// CHECK: tile.tma_store %arg0, %arg1, %arg2 {inner_dim = 1 : i64, row_stride = 64 : i64, slot = 2 : i64} : <bf16>, <128x64xbf16>
func.func @tma_store(%o: !tile.ptr<bf16>, %n: i32, %v: !tile.tile<128x64xbf16>) {
  tile.tma_store %o, %n, %v {slot = 2 : i64, inner_dim = 1 : i64, row_stride = 64 : i64} : !tile.ptr<bf16>, !tile.tile<128x64xbf16>
  return
}

