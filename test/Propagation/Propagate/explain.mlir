// --dtensor-propagate=explain: each inserted redistribute gets a remark at
// the op (or the function result) that needs it, with both layouts, its
// cost, the strategy that asks for it and every strategy of that op priced
// (local + redistributes of its operands), cheapest first. Without the
// option there is no remark.
// RUN: dtensor-opt %s --dtensor-propagate=explain -o /dev/null 2>&1 | FileCheck %s
// RUN: dtensor-opt %s --dtensor-propagate -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: remark

dtensor.mesh @mesh shape [2]

// CHECK: explain.mlir:[[@LINE+2]]:3: remark: explain: operand #0 is redistributed from [S(0)] to [R] ({{[0-9.e+-]+}} us) for the function's result #0, whose chosen strategy #0 needs [R]; its strategies, given its operands' producers (local + redistributes = total us): #0 [R] -> -: 0 + {{[0-9.e+-]+}} = {{[0-9.e+-]+}} (chosen){{$}}
func.func @result(%x: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>]>}) -> (tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>}) {
  return %x : tensor<8x4xf32>
}

// Adding S(0) to S(1): one operand moves. The replicated strategy would
// move both, so it is listed after the two that move one; the empty `outs`
// tensor is recreated in any layout for free.
// CHECK: explain.mlir:[[@LINE+3]]:8: remark: explain: operand #1 is redistributed from [S(1)] to [S(0)] ([[COST:[0-9.e+-]+]] us) for this op (linalg.add), whose chosen strategy #1 needs [S(0)]; its strategies, given its operands' producers (local + redistributes = total us): #1 [S(0)], [S(0)], [S(0)] -> [S(0)]: {{[0-9.e+-]+}} + [[COST]] = {{[0-9.e+-]+}} (chosen); #2 [S(1)], [S(1)], [S(1)] -> [S(1)]: {{.*}}; #0 [R], [R], [R] -> [R]: {{.*}}
func.func @add(%a: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>]>}, %b: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<1>]>}) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %0 = linalg.add ins(%a, %b : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
