// The layout table of every function with layouts; the IR is left unchanged.
// RUN: dtensor-opt %s --dtensor-print-layouts -o /dev/null | FileCheck %s --strict-whitespace
// RUN: dtensor-opt %s -o %t.before
// RUN: dtensor-opt %s --dtensor-print-layouts -o %t.after > /dev/null
// RUN: diff %t.before %t.after

dtensor.mesh @tp shape [4] names ["tp"]
dtensor.mesh @mesh shape [2, 2] names ["dp", "tp"]
dtensor.mesh @reversed shape [4] devices [3, 2, 1, 0]
dtensor.mesh @pair shape [2]

// A 1-D mesh: even and uneven shards (10 and 9 rows over 4 ranks), a negative
// shard dim (printed normalised), a partial, distribute and redistribute
// results, and values without a layout. The f32 argument and the f32 %3 are
// not tensors and get no row.
// CHECK: func @one_d on @tp shape [4] names ["tp"]
// CHECK-NEXT:   value  type               layout    local shape per rank
// CHECK-NEXT:   %arg0  tensor<8x64xf32>   [S(1)]    8x16 (ranks 0-3)
// CHECK-NEXT:   %arg1  tensor<10x64xf32>  [S(0)]    3x64 (ranks 0-2), 1x64 (rank 3)
// CHECK-NEXT:   %arg2  tensor<9x64xf32>   [S(0)]    3x64 (ranks 0-2), 0x64 (rank 3)
// CHECK-NEXT:   %arg4  tensor<4xf32>      -         -
// CHECK-NEXT:   %0     tensor<10x64xf32>  [P(sum)]  10x64 (ranks 0-3)
// CHECK-NEXT:   %1     tensor<10x64xf32>  [P(sum)]  10x64 (ranks 0-3)
// CHECK-NEXT:   %2     tensor<10x64xf32>  [S(0)]    3x64 (ranks 0-2), 1x64 (rank 3)
// CHECK-NEXT:   %4     tensor<10x64xf32>  -         -
// CHECK-EMPTY:
func.func @one_d(
    %w: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %x: tensor<10x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %y: tensor<9x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<-2>]>},
    %s: f32, %free: tensor<4xf32>) -> tensor<10x64xf32> {
  %sum = arith.addf %x, %x {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]} : tensor<10x64xf32>
  %p = dtensor.distribute %sum to <@tp, [partial<sum>]> : tensor<10x64xf32>
  %r = dtensor.redistribute %p from <@tp, [partial<sum>]> to <@tp, [shard<0>]> : tensor<10x64xf32>
  %t = arith.mulf %s, %s : f32
  %e = tensor.empty() : tensor<10x64xf32>
  return %r : tensor<10x64xf32>
}

func.func @plain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func private @declared(tensor<4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})

// A 2x2 mesh, rank = 2*dp + tp. Rows 10 of %arg0 are split by dp into 5 + 5,
// then by tp into 3 + 2: equal shapes on ranks that are not adjacent. A
// dynamic dim stays `?`; a rank-0 tensor is a scalar on every rank. Neither
// @plain nor the declaration @declared printed anything before it.
// CHECK-NEXT: func @two_d on @mesh shape [2, 2] names ["dp", "tp"]
// CHECK-NEXT:   value  type              layout        local shape per rank
// CHECK-NEXT:   %arg0  tensor<10x4xf32>  [S(0), S(0)]  3x4 (ranks 0,2), 2x4 (ranks 1,3)
// CHECK-NEXT:   %arg1  tensor<8x8xf32>   [S(0), S(1)]  4x4 (ranks 0-3)
// CHECK-NEXT:   %arg2  tensor<6x8xf32>   [R, P(max)]   6x8 (ranks 0-3)
// CHECK-NEXT:   %arg3  tensor<?x8xf32>   [S(1), S(0)]  ?x4 (ranks 0-3)
// CHECK-NEXT:   %arg4  tensor<f32>       [R, R]        scalar (ranks 0-3)
// CHECK-EMPTY:
func.func @two_d(
    %a: tensor<10x4xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>, shard<0>]>},
    %b: tensor<8x8xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>, shard<1>]>},
    %c: tensor<6x8xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate, partial<max>]>},
    %d: tensor<?x8xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<1>, shard<0>]>},
    %e: tensor<f32> {dtensor.layout = #dtensor.layout<@mesh, [replicate, replicate]>}) {
  return
}

// Ranks are device ids: mesh position 0 is rank 3 and holds the first three
// rows, position 3 is rank 0 and holds the last one.
// CHECK-NEXT: func @devices on @reversed shape [4] devices [3, 2, 1, 0]
// CHECK-NEXT:   value  type            layout  local shape per rank
// CHECK-NEXT:   %arg0  tensor<10xf32>  [S(0)]  1 (rank 0), 3 (ranks 1-3)
// CHECK-EMPTY:
func.func @devices(%a: tensor<10xf32> {dtensor.layout = #dtensor.layout<@reversed, [shard<0>]>}) {
  return
}

// Values of nested regions in program order, named as the printer names
// them; block arguments of nested regions have no layout, and the index
// result of the execute_region (a unit entry) gets no row.
// CHECK-NEXT: func @nested on @pair shape [2]
// CHECK-NEXT:   value  type           layout  local shape per rank
// CHECK-NEXT:   %arg0  tensor<8xf32>  [S(0)]  4 (ranks 0-1)
// CHECK-NEXT:   %0     tensor<8xf32>  -       -
// CHECK-NEXT:   %arg3  tensor<8xf32>  -       -
// CHECK-NEXT:   %2     tensor<8xf32>  [R]     8 (ranks 0-1)
// CHECK-NEXT:   %1#1   tensor<8xf32>  [S(0)]  4 (ranks 0-1)
// CHECK-EMPTY:
func.func @nested(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@pair, [shard<0>]>}, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %loop = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<8xf32>) {
    %next = arith.addf %acc, %acc {dtensor.layouts = [#dtensor.layout<@pair, [replicate]>]} : tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  %v:2 = scf.execute_region -> (index, tensor<8xf32>) {
    scf.yield %n, %loop : index, tensor<8xf32>
  } {dtensor.layouts = [unit, #dtensor.layout<@pair, [shard<0>]>]}
  return %v#1 : tensor<8xf32>
}

// With several meshes the header lists them and each layout names its own.
// CHECK-NEXT: func @mixed on @pair shape [2], @mesh shape [2, 2] names ["dp", "tp"]
// CHECK-NEXT:   value  type             layout           local shape per rank
// CHECK-NEXT:   %arg0  tensor<8xf32>    @pair [S(0)]     4 (ranks 0-1)
// CHECK-NEXT:   %arg1  tensor<8x8xf32>  @mesh [S(0), R]  4x8 (ranks 0-3)
// CHECK-NEXT:   %arg2  tensor<8xf32>    -                -
// CHECK-EMPTY:
func.func @mixed(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@pair, [shard<0>]>},
                 %y: tensor<8x8xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>, replicate]>},
                 %z: tensor<8xf32>) {
  return
}

// A layout on a function result alone is enough for a table.
// CHECK-NEXT: func @result_only on @pair shape [2]
// CHECK-NEXT:   value  type           layout  local shape per rank
// CHECK-NEXT:   %arg0  tensor<8xf32>  -       -
// CHECK-EMPTY:
// CHECK-NOT: {{.}}
func.func @result_only(%x: tensor<8xf32>) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@pair, [replicate]>}) {
  return %x : tensor<8xf32>
}
