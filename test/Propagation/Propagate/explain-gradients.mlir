// With explain, the remarks name the gradients of the backward
// (--dtensor-differentiate marks its ops' locations, Autodiff/BackwardMark.h):
// a weight's gradient computed from a batch sharded over dp is reduced, or
// computed from gathered or resharded operands, and the remark says which
// gradient, in which layout, asked for the collective. In @step the
// gradient's op is marked by hand, as differentiation marks it, and the
// optimizer's step (unmarked) reads the gradient through a scaling: its
// values are "computed from the gradient". With fast compute dW is computed
// replicated from x and dy gathered; with slow compute it is computed
// sharded, and the step's result is gathered.
// RUN: dtensor-opt %s --dtensor-propagate="explain=true compute-gflops=1000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GATHER
// RUN: dtensor-opt %s --dtensor-propagate="explain=true compute-gflops=0.01" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHARD
// The marks of a whole --dtensor-differentiate reach the remarks: with slow
// compute @loss_grad reduces the gradient of w (a partial sum over dp) to
// its shards.
// RUN: dtensor-opt %s --dtensor-differentiate=function=loss --dtensor-propagate="explain=true compute-gflops=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIFF

// GATHER: dw.mlir:1:1: remark: explain: operand #0 is redistributed from [S(0)] to [R] ({{[0-9.]+}} us) for this op (linalg.generic, computing the gradient of 'w' as [R]), whose chosen strategy
// GATHER-NEXT: dw.mlir:1:1: remark: explain: operand #1 is redistributed from [S(0)] to [R] ({{[0-9.]+}} us) for this op (linalg.generic, computing the gradient of 'w' as [R]), whose chosen strategy
// GATHER-NOT: {{\(the gradient of|\(computed from the gradient of}}
// SHARD: dw.mlir:1:1: remark: explain: operand #0 is redistributed from [S(0)] to [S(1)] ({{[0-9.]+}} us) for this op (linalg.generic, computing the gradient of 'w' as [S(0)])
// SHARD-NEXT: dw.mlir:1:1: remark: explain: operand #1 is redistributed from [S(0)] to [R] ({{[0-9.]+}} us) for this op (linalg.generic, computing the gradient of 'w' as [S(0)])
// SHARD: remark: explain: operand #0 (computed from the gradient of 'w') is redistributed from [S(0)] to [R] ({{[0-9.]+}} us) for the function's result #0
// DIFF: remark: explain: operand #1 is redistributed from [P(sum)] to [R] ({{[0-9.]+}} us) for this op (linalg.generic, of the backward)
// DIFF: remark: explain: operand #0 (the gradient of 'w') is redistributed from [P(sum)] to [S(0)] ({{[0-9.]+}} us) for the function's result #1

#xt = affine_map<(i, o, b) -> (b, i)>
#dy = affine_map<(i, o, b) -> (b, o)>
#dw = affine_map<(i, o, b) -> (i, o)>
#all = affine_map<(i, o) -> (i, o)>
#x = affine_map<(b, o, i) -> (b, i)>
#w = affine_map<(b, o, i) -> (i, o)>
#y = affine_map<(b, o, i) -> (b, o)>
#rows = affine_map<(b, o) -> (b, o)>
#none = affine_map<(b, o) -> ()>
dtensor.mesh @dp shape [2] names ["dp"]

// One SGD step of a weight from its gradient dW = x^T dy.
func.func @step(%x: tensor<8x256xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                %dy: tensor<8x256xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                %w: tensor<256x256xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>})
    -> (tensor<256x256xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %dw = linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<8x256xf32>, tensor<8x256xf32>) outs(%acc : tensor<256x256xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<256x256xf32> loc(fused<{dtensor.backward = "w"}>["dw.mlir":1:1])
  %e2 = tensor.empty() : tensor<256x256xf32>
  %scaled = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel"]}
      ins(%dw : tensor<256x256xf32>) outs(%e2 : tensor<256x256xf32>) {
    ^bb0(%a: f32, %c: f32):
      %p = arith.mulf %a, %lr : f32
      linalg.yield %p : f32
  } -> tensor<256x256xf32>
  %e3 = tensor.empty() : tensor<256x256xf32>
  %new = linalg.generic {indexing_maps = [#all, #all, #all], iterator_types = ["parallel", "parallel"]}
      ins(%scaled, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e3 : tensor<256x256xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.subf %b, %a : f32
      %q = math.sqrt %p : f32
      linalg.yield %q : f32
  } -> tensor<256x256xf32>
  return %new : tensor<256x256xf32>
}

// A loss to differentiate: the sum of squares of x w, x sharded over dp.
func.func @loss(%x: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>, dtensor.name = "x"},
                %w: tensor<4x16xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>, dtensor.name = "w", dtensor.weight})
    -> (tensor<f32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sacc = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#rows, #none], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xf32>) outs(%sacc : tensor<f32>) {
    ^bb0(%a: f32, %c: f32):
      %p = arith.mulf %a, %a : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
