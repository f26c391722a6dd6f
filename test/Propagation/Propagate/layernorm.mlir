// A layer norm right after a row-parallel linear: normalisation is not linear,
// so the partial sums are reduced (P->R) before it starts, once, rather than
// carried into the mean and reduced later.
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

func.func @rowwise_then_layernorm(
    %a: tensor<8x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  // mean over the hidden dim
  %e8 = tensor.empty() : tensor<8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.reduce ins(%y : tensor<8x64xf32>) outs(%z8 : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc_: f32) {
      %s = arith.addf %in, %acc_ : f32
      linalg.yield %s : f32
    }
  %n = arith.constant dense<64.0> : tensor<8xf32>
  %mean = arith.divf %sum, %n : tensor<8xf32>
  %meanb = linalg.broadcast ins(%mean : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %xc = arith.subf %y, %meanb : tensor<8x64xf32>
  %sq = arith.mulf %xc, %xc : tensor<8x64xf32>
  %ssq = linalg.reduce ins(%sq : tensor<8x64xf32>) outs(%z8 : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc_: f32) {
      %s = arith.addf %in, %acc_ : f32
      linalg.yield %s : f32
    }
  %var = arith.divf %ssq, %n : tensor<8xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<8xf32>
  %ve = arith.addf %var, %eps : tensor<8xf32>
  %rstd = math.rsqrt %ve : tensor<8xf32>
  %rb = linalg.broadcast ins(%rstd : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %out = arith.mulf %xc, %rb : tensor<8x64xf32>
  return %out : tensor<8x64xf32>
}

// CHECK-LABEL: func.func @rowwise_then_layernorm
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NOT:   linalg.reduce
// CHECK:       %[[R:.*]] = dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK-NEXT:  linalg.reduce ins(%[[R]]
// CHECK-NOT:   dtensor.redistribute
// CHECK-NOT:   partial
// CHECK:       return
