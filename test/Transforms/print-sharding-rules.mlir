// Sharding rules derived from indexing maps and iterator types.
// RUN: dtensor-opt %s --dtensor-print-sharding-rules -split-input-file -verify-diagnostics

func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-remark @+1 {{sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>}}}
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @batch_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>, %c: tensor<4x8x32xf32>) -> tensor<4x8x32xf32> {
  // expected-remark @+1 {{sharding rule: ([i, j, l], [i, l, k], [i, j, k]) -> ([i, j, k]) {i=4, j=8, k=32, l=16 reduction<sum>}}}
  %0 = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>) outs(%c : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// A matmul with a transposed right operand, written with explicit maps.
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_transpose_b(%a: tensor<8x16xf32>, %b: tensor<32x16xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-remark @+1 {{sharding rule: ([i, k], [j, k], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>}}}
  %0 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out] ins(%a, %b : tensor<8x16xf32>, tensor<32x16xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A row max: reduction with a max combiner.
func.func @row_max(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=8, j=16 reduction<max>}}}
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %0 : tensor<8xf32>
}

// -----

// An integer min over dim 0 of a dynamic tensor.
func.func @col_min(%x: tensor<?x16xi32>, %init: tensor<16xi32>) -> tensor<16xi32> {
  // expected-remark @+1 {{sharding rule: ([i, j], [j]) -> ([j]) {i=? reduction<min>, j=16}}}
  %0 = linalg.reduce ins(%x : tensor<?x16xi32>) outs(%init : tensor<16xi32>) dimensions = [0]
    (%in: i32, %acc: i32) {
      %m = arith.minsi %in, %acc : i32
      linalg.yield %m : i32
    }
  return %0 : tensor<16xi32>
}

// -----

// A reduction whose combiner is not a known one cannot shard its reduction.
func.func @product(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=8, j=16 reduction<unknown>}}}
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.mulf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %0 : tensor<8xf32>
}

// -----

// Elementwise linalg and arith/math ops on tensors; a broadcast dim.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @elementwise(%x: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-remark @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=8, j=16}}}
  %0 = arith.addf %x, %x : tensor<8x16xf32>
  // expected-remark @+1 {{sharding rule: ([i, j]) -> ([i, j]) {i=8, j=16}}}
  %1 = math.exp %0 : tensor<8x16xf32>
  // expected-remark @+1 {{sharding rule: ([i, j], [j], [i, j]) -> ([i, j]) {i=8, j=16}}}
  %2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%1, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%x : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// A scalar fill: only the tensor operand is listed.
func.func @fill(%init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{sharding rule: ([i, j]) -> ([i, j]) {i=8, j=16}}}
  %0 = linalg.fill ins(%zero : f32) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A dim indexed by a compound expression (a 1-D convolution window) is not
// indexed by a single factor.
#input = affine_map<(o, w) -> (o + w)>
#filter = affine_map<(o, w) -> (w)>
#output = affine_map<(o, w) -> (o)>
func.func @conv1d(%x: tensor<10xf32>, %f: tensor<3xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{sharding rule: ([-], [j], [i]) -> ([i]) {i=8, j=3 reduction<sum>}}}
  %0 = linalg.generic {indexing_maps = [#input, #filter, #output], iterator_types = ["parallel", "reduction"]}
      ins(%x, %f : tensor<10xf32>, tensor<3xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Ops with no rule are reported as replicated.
func.func @no_rule(%x: tensor<8x16xf32>) -> tensor<128xf32> {
  // expected-remark @+1 {{no sharding rule; kept replicated}}
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<8x16xf32> into tensor<128xf32>
  return %0 : tensor<128xf32>
}
