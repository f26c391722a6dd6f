// Sharding rules: factors from indexing maps and iterator types, explicit
// rules for shape ops, the inits read by the body and the partial flows.
// Each rule is matched up to the end of the remark ({{$}}), so that a flow
// or marker printed beyond it fails the test.
// RUN: dtensor-opt %s --dtensor-print-sharding-rules -split-input-file -verify-diagnostics

// A matmul accumulates into its init: Partial(sum) flows through one side of
// the product together with the init, never through both sides.
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>} inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}{{$}}}}
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @batch_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>, %c: tensor<4x8x32xf32>) -> tensor<4x8x32xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j, l], [i, l, k], [i, j, k]) -> ([i, j, k]) {i=4, j=8, k=32, l=16 reduction<sum>} inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}{{$}}}}
  %0 = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>) outs(%c : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// A matmul with a transposed right operand, written with explicit maps.
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_transpose_b(%a: tensor<8x16xf32>, %b: tensor<32x16xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, k], [j, k], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>} inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}{{$}}}}
  %0 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out] ins(%a, %b : tensor<8x16xf32>, tensor<32x16xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Mixed precision: the body widens the inputs, which keeps it linear.
func.func @matmul_bf16(%a: tensor<8x16xbf16>, %b: tensor<16x32xbf16>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>} inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}{{$}}}}
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A row sum: the input and the init are partial together.
func.func @row_sum(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=8, j=16 reduction<sum>} inits [1] partial {0, 1: sum|avg}{{$}}}}
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<8xf32>
}

// -----

// A row max: reduction with a max combiner; the max of maxes is the max.
func.func @row_max(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=8, j=16 reduction<max>} inits [1] partial {0, 1: max}{{$}}}}
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
  // expected-remark-re @+1 {{sharding rule: ([i, j], [j]) -> ([j]) {i=? reduction<min>, j=16} inits [1] partial {0, 1: min}{{$}}}}
  %0 = linalg.reduce ins(%x : tensor<?x16xi32>) outs(%init : tensor<16xi32>) dimensions = [0]
    (%in: i32, %acc: i32) {
      %m = arith.minsi %in, %acc : i32
      linalg.yield %m : i32
    }
  return %0 : tensor<16xi32>
}

// -----

// A max reduction of a transformed element gets no max flow: the transform
// need not commute with max.
func.func @row_max_neg(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=8, j=16 reduction<max>} inits [1]{{$}}}}
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %n = arith.negf %in : f32
      %m = arith.maximumf %n, %acc : f32
      linalg.yield %m : f32
    }
  return %0 : tensor<8xf32>
}

// -----

// A reduction whose combiner is not a known one cannot shard its reduction.
// The product is linear in its init alone: the accumulator carries the init
// through every step, so a partial input would be multiplied by itself.
func.func @product(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=8, j=16 reduction<unknown>} inits [1] partial {1: sum|avg}{{$}}}}
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.mulf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %0 : tensor<8xf32>
}

// -----

// Elementwise linalg and arith/math ops on tensors; a broadcast dim. The init
// of the generic is not read, so it is neither an init nor in any flow.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @elementwise(%x: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=8, j=16} partial {0, 1: sum|avg}{{$}}}}
  %0 = arith.addf %x, %x : tensor<8x16xf32>
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i, j]) {i=8, j=16}{{$}}}}
  %1 = math.exp %0 : tensor<8x16xf32>
  // expected-remark-re @+1 {{sharding rule: ([i, j], [j], [i, j]) -> ([i, j]) {i=8, j=16} partial {0, 1: sum|avg}{{$}}}}
  %2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%1, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%x : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// Linearity of arith/math ops on tensors, operand by operand.
func.func @elementwise_flows(%x: tensor<8xf32>, %y: tensor<8xf32>, %c: tensor<8xi1>) {
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} partial {0, 1: sum|avg}{{$}}}}
  %sub = arith.subf %x, %y : tensor<8xf32>
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} partial {0: sum|avg} {1: sum|avg}{{$}}}}
  %mul = arith.mulf %x, %y : tensor<8xf32>
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} partial {0: sum|avg}{{$}}}}
  %div = arith.divf %x, %y : tensor<8xf32>
  // expected-remark-re @+1 {{sharding rule: ([i]) -> ([i]) {i=8} partial {0: sum|avg}{{$}}}}
  %neg = arith.negf %x : tensor<8xf32>
  // expected-remark-re @+1 {{sharding rule: ([i]) -> ([i]) {i=8}{{$}}}}
  %tanh = math.tanh %x : tensor<8xf32>
  // A replicated choice between two partial values moves data only.
  // expected-remark-re @+1 {{sharding rule: ([i], [i], [i]) -> ([i]) {i=8} partial {1, 2: sum|avg|max|min}{{$}}}}
  %sel = arith.select %c, %x, %y : tensor<8xi1>, tensor<8xf32>
  // expected-remark-re @+1 {{sharding rule: ([i]) -> ([i]) {i=8} partial {0: sum|avg|max|min}{{$}}}}
  %ext = arith.extf %x : tensor<8xf32> to tensor<8xf64>
  return
}

// -----

// Adding a zero constant leaves a copy; adding a nonzero one is affine.
func.func @affine(%x: tensor<8xi32>) {
  // expected-remark-re @+1 {{sharding rule: () -> ([i]) {i=8} partial {-: sum|avg|max|min}{{$}}}}
  %zero = arith.constant dense<0> : tensor<8xi32>
  // expected-remark-re @+1 {{sharding rule: () -> ([i]) {i=8}{{$}}}}
  %one = arith.constant dense<1> : tensor<8xi32>
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} partial {0: sum|avg|max|min} {0, 1: sum|avg}{{$}}}}
  %0 = arith.addi %x, %zero : tensor<8xi32>
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} partial {0, 1: sum|avg}{{$}}}}
  %1 = arith.addi %x, %one : tensor<8xi32>
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} partial {0: sum|avg} {1: sum|avg}{{$}}}}
  %2 = arith.muli %x, %one : tensor<8xi32>
  return
}

// -----

// Ops that only move data pass Partial values of every kind.
#copy_in = affine_map<(d0, d1) -> (d1, d0)>
#copy_out = affine_map<(d0, d1) -> (d0, d1)>
func.func @data_movement(%x: tensor<8x16xf32>, %v: tensor<16xf32>, %t: tensor<16x8xf32>, %b: tensor<8x16xf32>) {
  // expected-remark-re @+1 {{sharding rule: ([j, i], [i, j]) -> ([i, j]) {i=16, j=8} partial {0: sum|avg|max|min}{{$}}}}
  %0 = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%t : tensor<16x8xf32>) permutation = [1, 0]
  // expected-remark-re @+1 {{sharding rule: ([j], [i, j]) -> ([i, j]) {i=8, j=16} partial {0: sum|avg|max|min}{{$}}}}
  %1 = linalg.broadcast ins(%v : tensor<16xf32>) outs(%b : tensor<8x16xf32>) dimensions = [0]
  // expected-remark-re @+1 {{sharding rule: ([j, i], [i, j]) -> ([i, j]) {i=16, j=8} partial {0: sum|avg|max|min}{{$}}}}
  %2 = linalg.generic {indexing_maps = [#copy_in, #copy_out], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%t : tensor<16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  } -> tensor<16x8xf32>
  return
}

// -----

// A parallel generic that reads its init: the init is an operand like any
// other for the partial flows.
#id = affine_map<(d0) -> (d0)>
func.func @accumulate(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i], [i]) -> ([i]) {i=8} inits [1] partial {0, 1: sum|avg}{{$}}}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Subsets of operands are enumerated only for ops with at most 6 tensor
// operands: this copy of its first input gets no flow.
#id = affine_map<(d0) -> (d0)>
func.func @many_operands(%x: tensor<8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i], [i], [i], [i], [i], [i], [i]) -> ([i]) {i=8}{{$}}}}
  %0 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %x, %x, %x, %x, %x : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %e: f32, %f: f32, %o: f32):
      linalg.yield %a : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A fill with zero is a partial value of every kind without any partial
// input; a fill with another constant is not a partial value.
func.func @fill(%init: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i, j]) {i=8, j=16} partial {-: sum|avg|max|min}{{$}}}}
  %0 = linalg.fill ins(%zero : f32) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i, j]) {i=8, j=16}{{$}}}}
  %1 = linalg.fill ins(%one : f32) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A dim indexed by a compound expression (a 1-D convolution window) is not
// indexed by a single factor.
#input = affine_map<(o, w) -> (o + w)>
#filter = affine_map<(o, w) -> (w)>
#output = affine_map<(o, w) -> (o)>
func.func @conv1d(%x: tensor<10xf32>, %f: tensor<3xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([-], [j], [i]) -> ([i]) {i=8, j=3 reduction<sum>} inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}{{$}}}}
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

// Collapsing: the major dim of a group shares its factor with the merged dim
// and needs an even split (4x8 -> 32 over 2 ranks lines up; 3x8 -> 24 does
// not); the minor dims cannot be sharded.
func.func @collapse(%x: tensor<4x8xf32>, %y: tensor<3x8xf32>) {
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i]) {i=4 even, j=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i]) {i=3 even, j=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.collapse_shape %y [[0, 1]] : tensor<3x8xf32> into tensor<24xf32>
  return
}

// -----

// Unit dims do not make a merge: a group with one non-unit dim keeps it
// freely shardable; an all-unit group keeps its first dim.
func.func @collapse_unit_dims(%x: tensor<2x1x4x8xf32>, %y: tensor<1x1x8xf32>) {
  // expected-remark-re @+1 {{sharding rule: ([i, j, k, l]) -> ([i, k]) {i=2, j=1 blocked, k=4 even, l=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<2x1x4x8xf32> into tensor<2x32xf32>
  // expected-remark-re @+1 {{sharding rule: ([i, j, k]) -> ([i, k]) {i=1, j=1 blocked, k=8} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.collapse_shape %y [[0, 1], [2]] : tensor<1x1x8xf32> into tensor<1x8xf32>
  return
}

// -----

// A dynamic major dim of a merge cannot be checked for an even split.
func.func @collapse_dynamic(%x: tensor<?x8xf32>, %y: tensor<?x1xf32>) {
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i]) {i=? blocked, j=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<?x8xf32> into tensor<?xf32>
  // expected-remark-re @+1 {{sharding rule: ([i, j]) -> ([i]) {i=?, j=1 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.collapse_shape %y [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
  return
}

// -----

// Expanding mirrors collapsing; the output_shape operand is not a tensor.
func.func @expand(%x: tensor<32x16xf32>, %y: tensor<?xf32>, %n: index) {
  // expected-remark-re @+1 {{sharding rule: ([i, k]) -> ([i, j, k]) {i=4 even, j=8 blocked, k=16} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.expand_shape %x [[0, 1], [2]] output_shape [4, 8, 16] : tensor<32x16xf32> into tensor<4x8x16xf32>
  // expected-remark-re @+1 {{sharding rule: ([i]) -> ([i, j]) {i=? blocked, j=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.expand_shape %y [[0, 1]] output_shape [%n, 8] : tensor<?xf32> into tensor<?x8xf32>
  return
}

// -----

// tensor.reshape: static shapes related by a collapse or an expansion; the
// shape operand indexes no factor and is not part of the flow.
func.func @reshape(%x: tensor<4x8xf32>, %y: tensor<32xf32>, %s1: tensor<1xindex>, %s2: tensor<2xindex>) {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [-]) -> ([i]) {i=4 even, j=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.reshape %x(%s1) : (tensor<4x8xf32>, tensor<1xindex>) -> tensor<32xf32>
  // expected-remark-re @+1 {{sharding rule: ([i], [-]) -> ([i, j]) {i=2 even, j=16 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.reshape %y(%s2) : (tensor<32xf32>, tensor<2xindex>) -> tensor<2x16xf32>
  return
}

// -----

// Reshapes with no rule: no reassociation relates the shapes, or a dynamic
// shape.
func.func @reshape_no_rule(%x: tensor<2x3xf32>, %y: tensor<?xf32>, %s: tensor<2xindex>) {
  // expected-remark @+1 {{no sharding rule; kept replicated}}
  %0 = tensor.reshape %x(%s) : (tensor<2x3xf32>, tensor<2xindex>) -> tensor<3x2xf32>
  // expected-remark @+1 {{no sharding rule; kept replicated}}
  %1 = tensor.reshape %y(%s) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x2xf32>
  return
}

// -----

// Softmax normalises along its dim, which cannot be sharded; its init is not
// read.
func.func @softmax(%x: tensor<8x16xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=8, j=16 blocked}{{$}}}}
  %0 = linalg.softmax dimension(1) ins(%x : tensor<8x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Concatenation: the other dims are shared; the concatenated one is not
// indexed on the inputs and cannot be sharded on the result.
func.func @concat(%a: tensor<8x16xf32>, %b: tensor<8x8xf32>) -> tensor<8x24xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, -], [i, -]) -> ([i, j]) {i=8, j=24 blocked} partial {0, 1: sum|avg|max|min}{{$}}}}
  %0 = tensor.concat dim(1) %a, %b : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
  return %0 : tensor<8x24xf32>
}

// -----

// extract_slice: a dim taken whole keeps its factor; a sliced or strided dim
// is unsharded on the source and blocked on the result; a dropped unit dim
// has no result dim.
func.func @extract_slice(%x: tensor<8x16xf32>) {
  // expected-remark-re @+1 {{sharding rule: ([i, -]) -> ([i, j]) {i=8, j=8 blocked} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.extract_slice %x[0, 4] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  // expected-remark-re @+1 {{sharding rule: ([-, j]) -> ([i, j]) {i=4 blocked, j=16} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.extract_slice %x[0, 0] [4, 16] [2, 1] : tensor<8x16xf32> to tensor<4x16xf32>
  // expected-remark-re @+1 {{sharding rule: ([-, i]) -> ([i]) {i=16} partial {0: sum|avg|max|min}{{$}}}}
  %2 = tensor.extract_slice %x[2, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
  return
}

// -----

func.func @extract_slice_dynamic(%x: tensor<8x16xf32>, %o: index) -> tensor<8x8xf32> {
  // expected-remark @+1 {{no sharding rule; kept replicated}}
  %0 = tensor.extract_slice %x[0, %o] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// insert_slice: the destination and the result share every factor; the
// source shares the dims it covers whole; partly covered dims are blocked.
func.func @insert_slice(%s: tensor<8x8xf32>, %r: tensor<16xf32>, %d: tensor<8x16xf32>) {
  // expected-remark-re @+1 {{sharding rule: ([i, -], [i, j]) -> ([i, j]) {i=8, j=16 blocked} partial {0, 1: sum|avg|max|min}{{$}}}}
  %0 = tensor.insert_slice %s into %d[0, 4] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x16xf32>
  // expected-remark-re @+1 {{sharding rule: ([j], [i, j]) -> ([i, j]) {i=8 blocked, j=16} partial {0, 1: sum|avg|max|min}{{$}}}}
  %1 = tensor.insert_slice %r into %d[3, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<8x16xf32>
  return
}

// -----

// An embedding lookup: sharding the vocabulary is a reduction (each rank
// gathers the rows it holds, zeros elsewhere); the coordinate dim of the
// indices indexes no factor.
func.func @gather(%table: tensor<100x64xf32>, %ids: tensor<4x8x1xindex>) {
  // expected-remark-re @+1 {{sharding rule: ([k, l], [i, j, -]) -> ([i, j, -, l]) {i=4, j=8, k=100 reduction<sum>, l=64} partial {0: sum|avg|max|min}{{$}}}}
  %0 = tensor.gather %table[%ids] gather_dims([0]) : (tensor<100x64xf32>, tensor<4x8x1xindex>) -> tensor<4x8x1x64xf32>
  // expected-remark-re @+1 {{sharding rule: ([k, l], [i, j, -]) -> ([i, j, l]) {i=4, j=8, k=100 reduction<sum>, l=64} partial {0: sum|avg|max|min}{{$}}}}
  %1 = tensor.gather %table[%ids] gather_dims([0]) : (tensor<100x64xf32>, tensor<4x8x1xindex>) -> tensor<4x8x64xf32>
  return
}

// -----

// Tensor factories: no operands; empty contents and zeros are valid partial
// values of every kind.
func.func @factories(%n: index) {
  // expected-remark-re @+1 {{sharding rule: () -> ([i, j]) {i=8, j=16} partial {-: sum|avg|max|min}{{$}}}}
  %0 = tensor.empty() : tensor<8x16xf32>
  // expected-remark-re @+1 {{sharding rule: () -> ([i, j]) {i=?, j=16} partial {-: sum|avg|max|min}{{$}}}}
  %1 = tensor.empty(%n) : tensor<?x16xf32>
  // expected-remark-re @+1 {{sharding rule: () -> ([i, j]) {i=8, j=16} partial {-: sum|avg|max|min}{{$}}}}
  %2 = arith.constant dense<0.0> : tensor<8x16xf32>
  // expected-remark-re @+1 {{sharding rule: () -> ([i]) {i=2}{{$}}}}
  %3 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return
}

// -----

// Ops with no rule are reported as replicated.
func.func @no_rule(%x: tensor<8x16xf32>) -> (tensor<?x16xf32>, tensor<10x16xf32>) {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{no sharding rule; kept replicated}}
  %0 = tensor.cast %x : tensor<8x16xf32> to tensor<?x16xf32>
  // expected-remark @+1 {{no sharding rule; kept replicated}}
  %1 = tensor.pad %x low[1, 0] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
  } : tensor<8x16xf32> to tensor<10x16xf32>
  return %0, %1 : tensor<?x16xf32>, tensor<10x16xf32>
}

// -----

// write_rows: the trailing dims (heads, head dim) are shared by values, cache
// and result and may be sharded; the row dims of values and the slot and
// position dims of the cache are indexed by data, so they are blocked, and
// slots and positions (indexed by the blocked row factor) stay whole.
// Partial values pass through when the new rows and the cache are both
// Partial. Without trailing dims nothing can be sharded.
func.func @write_rows(%v: tensor<2x3x4x8xf32>, %c: tensor<5x16x4x8xf32>, %s: tensor<2xi64>, %p: tensor<2xi32>,
                      %v2: tensor<1x2xf32>, %c2: tensor<3x4xf32>, %i: tensor<1xi64>) {
  // expected-remark-re @+1 {{sharding rule: ([i, j, m, n], [k, l, m, n], [i], [i]) -> ([k, l, m, n]) {i=2 blocked, j=3 blocked, k=5 blocked, l=16 blocked, m=4, n=8} partial {0, 1: sum|avg|max|min}{{$}}}}
  %0 = dtensor.write_rows %v into %c at slots(%s) positions(%p) : tensor<2x3x4x8xf32> into tensor<5x16x4x8xf32>, tensor<2xi64>, tensor<2xi32>
  // expected-remark-re @+1 {{sharding rule: ([i, j], [k, l], [i], [i]) -> ([k, l]) {i=1 blocked, j=2 blocked, k=3 blocked, l=4 blocked} partial {0, 1: sum|avg|max|min}{{$}}}}
  %1 = dtensor.write_rows %v2 into %c2 at slots(%i) positions(%i) : tensor<1x2xf32> into tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>
  return
}

// -----

// dtensor.attention over its logical loops (B, H, L, E, S, Ev), each operand
// read through its dims: B, H, L (causal too: partitioning gives a piece of
// the queries its offset as `positions`) and Ev may be sharded; E and S are
// always blocked; no operand may be Partial.
func.func @attention_causal(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %init: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j, k, l], [i, j, m, l], [i, j, m, n], [i, j, k, n]) -> ([i, j, k, n]) {i=2, j=4, k=8, l=16 blocked, m=8 blocked, n=16}{{$}}}}
  %o = dtensor.attention %q, %k, %v into %init {causal, scale = 0.25 : f64, query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>, value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// A mask: its size-1 dims broadcast and take no factor.
func.func @attention_mask(%q: tensor<2x4x7x16xf32>, %k: tensor<2x4x5x16xf32>, %v: tensor<2x4x5x8xf32>, %mask: tensor<1x1x7x5xf32>, %init: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, j, k, l], [i, j, m, l], [i, j, m, n], [-, -, k, m], [i, j, k, n]) -> ([i, j, k, n]) {i=2, j=4, k=7, l=16 blocked, m=5 blocked, n=8}{{$}}}}
  %o = dtensor.attention %q, %k, %v mask(%mask : tensor<1x1x7x5xf32>) into %init {scale = 0.25 : f64, query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>, value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>} : tensor<2x4x7x16xf32>, tensor<2x4x5x16xf32>, tensor<2x4x5x8xf32> into tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// Grouped-query attention read through transposes ([B, L, H, E]): the key
// and value heads are a factor of their own (o) and both head factors are
// blocked.
func.func @attention_gqa(%q: tensor<2x6x4x16xf32>, %k: tensor<2x6x2x16xf32>, %v: tensor<2x6x2x16xf32>, %init: tensor<2x6x4x16xf32>) -> tensor<2x6x4x16xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, k, j, l], [i, m, o, l], [i, m, o, n], [i, k, j, n]) -> ([i, k, j, n]) {i=2, j=4 blocked, k=6, l=16 blocked, m=6 blocked, n=16, o=2 blocked}{{$}}}}
  %o = dtensor.attention %q, %k, %v into %init {causal, scale = 0.25 : f64, query_dims = array<i64: 0, 2, 1, 3>, key_dims = array<i64: 0, 2, 1, 3>, value_dims = array<i64: 0, 2, 1, 3>, result_dims = array<i64: 0, 2, 1, 3>} : tensor<2x6x4x16xf32>, tensor<2x6x2x16xf32>, tensor<2x6x2x16xf32> into tensor<2x6x4x16xf32> -> tensor<2x6x4x16xf32>
  return %o : tensor<2x6x4x16xf32>
}

// -----

// A KV cache read by slot (rows) with per-row positions: the key and value
// batch (slots) is a blocked factor of its own; rows and positions follow
// the batch; L is blocked by the positions.
func.func @attention_rows(%q: tensor<4x1x2x8xf32>, %k: tensor<3x16x2x8xf32>, %v: tensor<3x16x2x8xf32>, %rows: tensor<4xi64>, %pos: tensor<4xi64>, %init: tensor<4x1x2x8xf32>) -> tensor<4x1x2x8xf32> {
  // expected-remark-re @+1 {{sharding rule: ([i, k, j, l], [o, m, j, l], [o, m, j, n], [i], [i], [i, k, j, n]) -> ([i, k, j, n]) {i=4, j=2, k=1 blocked, l=8 blocked, m=16 blocked, n=8, o=3 blocked}{{$}}}}
  %o = dtensor.attention %q, %k, %v rows(%rows : tensor<4xi64>) positions(%pos : tensor<4xi64>) into %init {causal, scale = 0.35 : f64, query_dims = array<i64: 0, 2, 1, 3>, key_dims = array<i64: 0, 2, 1, 3>, value_dims = array<i64: 0, 2, 1, 3>, result_dims = array<i64: 0, 2, 1, 3>} : tensor<4x1x2x8xf32>, tensor<3x16x2x8xf32>, tensor<3x16x2x8xf32> into tensor<4x1x2x8xf32> -> tensor<4x1x2x8xf32>
  return %o : tensor<4x1x2x8xf32>
}
