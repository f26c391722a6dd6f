// Every mistake is an error and leaves the module without a gradient
// function: the pass options, a loss that is not a float of one element, and
// an op on the path from a weight to the loss that has no gradient rule,
// each at the op.
// RUN: not dtensor-opt %s --dtensor-differentiate 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: error: --dtensor-differentiate: needs function=NAME, the function to differentiate
// RUN: not dtensor-opt %s --dtensor-differentiate=function=nothere 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: --dtensor-differentiate: no function with a body named 'nothere'
// RUN: not dtensor-opt %s "--dtensor-differentiate=function=vector wrt=some" 2>&1 | FileCheck %s --check-prefix=WRT
// WRT: error: --dtensor-differentiate: wrt is 'some'; expected weights or all
// RUN: not dtensor-opt %s "--dtensor-differentiate=function=vector result=3" 2>&1 | FileCheck %s --check-prefix=RESULT
// RESULT: error: --dtensor-differentiate: 'vector' has 1 results; result=3 does not name one
// RUN: not dtensor-opt %s "--dtensor-differentiate=function=vector gradient-function=matmul" 2>&1 | FileCheck %s --check-prefix=EXISTS
// EXISTS: error: --dtensor-differentiate: a symbol named 'matmul' exists already
// RUN: not dtensor-opt %s --dtensor-differentiate=function=vector 2>&1 | FileCheck %s --check-prefix=VECTOR
// VECTOR: errors.mlir:[[# @LINE + 4]]:1: error: result 0 of 'vector' ('tensor<4xf32>') is not a float tensor of one element, so it cannot be the loss
// RUN: not dtensor-opt %s --dtensor-differentiate=function=matmul 2>&1 | FileCheck %s --check-prefix=MATMUL
// RUN: not dtensor-opt %s --dtensor-differentiate=function=atan 2>&1 | FileCheck %s --check-prefix=ATAN
// RUN: not dtensor-opt %s --dtensor-differentiate=function=diagonal 2>&1 | FileCheck %s --check-prefix=DIAGONAL
func.func @vector(%w: tensor<4xf32> {dtensor.weight}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

#sum = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// A named linalg op has no rule (the frontend writes generics).
// MATMUL: errors.mlir:[[# @LINE + 5]]:8: error: 'linalg.matmul' op has no gradient rule, and it lies on the path from a differentiated argument to the loss
// MATMUL-NOT: func.func @matmul_grad
func.func @matmul(%a: tensor<2x3xf32>, %w: tensor<3x4xf32> {dtensor.weight}) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %c = linalg.matmul ins(%a, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#sum, #scalar], iterator_types = ["reduction", "reduction"]} ins(%c : tensor<2x4xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a0 = arith.addf %out, %in : f32
    linalg.yield %a0 : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// A scalar op without an adjoint in a body: the error names it, then the
// generic.
// ATAN: errors.mlir:[[# @LINE + 8]]:10: error: 'math.atan' op has no gradient rule (needed to differentiate the enclosing linalg op)
// ATAN: errors.mlir:[[# @LINE + 5]]:8: error: 'linalg.generic' op has no gradient for input 0
func.func @atan(%w: tensor<2x2xf32> {dtensor.weight}) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#sum, #scalar], iterator_types = ["reduction", "reduction"]} ins(%w : tensor<2x2xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.atan %in : f32
    %a0 = arith.addf %out, %t : f32
    linalg.yield %a0 : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// A read of the diagonal (the same loop for two dims) has no adjoint map.
#diagonal = affine_map<(d0) -> (d0, d0)>
#reduced = affine_map<(d0) -> ()>
// DIAGONAL: errors.mlir:[[# @LINE + 5]]:8: error: 'linalg.generic' op has no gradient rule for input 0: it reads a diagonal (loop d0 twice)
func.func @diagonal(%w: tensor<3x3xf32> {dtensor.weight}) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#diagonal, #reduced], iterator_types = ["reduction"]} ins(%w : tensor<3x3xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a0 = arith.addf %out, %in : f32
    linalg.yield %a0 : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// Reductions whose combination has no adjoint: a product, a sum whose term
// reads the running value, and a max whose init is differentiated.
// RUN: not dtensor-opt %s --dtensor-differentiate=function=product 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not dtensor-opt %s --dtensor-differentiate=function=running 2>&1 | FileCheck %s --check-prefix=RUNNING
// RUN: not dtensor-opt %s --dtensor-differentiate=function=maxinit 2>&1 | FileCheck %s --check-prefix=MAXINIT
// PRODUCT: errors.mlir:[[# @LINE + 5]]:8: error: 'linalg.generic' op has no gradient rule: result 0 is reduced by a combination other than a sum, a max or a min of the running value and a term
func.func @product(%w: tensor<3xf32> {dtensor.weight}) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%one : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, #reduced], iterator_types = ["reduction"]} ins(%w : tensor<3xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
// RUNNING: errors.mlir:[[# @LINE + 5]]:8: error: 'linalg.generic' op has no gradient rule: the term of reduced result 0 reads the running value
func.func @running(%w: tensor<3xf32> {dtensor.weight}) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, #reduced], iterator_types = ["reduction"]} ins(%w : tensor<3xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %out : f32
    %a = arith.addf %out, %t : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
// MAXINIT: errors.mlir:[[# @LINE + 2]]:8: error: 'linalg.generic' op has no gradient rule for its init 0 (only a sum passes its gradient to it)
func.func @maxinit(%w: tensor<3xf32> {dtensor.weight}, %b: tensor<f32> {dtensor.weight}) -> tensor<f32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, #reduced], iterator_types = ["reduction"]} ins(%w : tensor<3xf32>) outs(%b : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
