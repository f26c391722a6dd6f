// How user constraints steer propagation.
// RUN: dtensor-opt %s --dtensor-propagate -split-input-file -verify-diagnostics | FileCheck %s

dtensor.mesh @tp shape [2]

// dtensor.distribute says what its operand is: the matmul producing it is
// made to shard rows, although sharding columns would follow the weight.
// CHECK-LABEL: func.func @distribute_wins
// CHECK:       %[[W:.*]] = dtensor.redistribute %arg1 from <@tp, [shard<1>]> to <@tp, [replicate]>
// CHECK:       %[[H:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]} ins(%arg0, %[[W]]
// CHECK-NEXT:  dtensor.distribute %[[H]] to <@tp, [shard<0>]>
func.func @distribute_wins(%x: tensor<64x64xf32>, %w: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %d = dtensor.distribute %h to <@tp, [shard<0>]> : tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

dtensor.mesh @tp shape [2]

// dtensor.to_layout asks for its result only: the row-parallel matmul keeps
// its cheapest choice (a partial sum, inputs as they come) and is reduced
// to the requested layout, where a distribute would have made it gather
// both operands to produce a replicated result directly.
// CHECK-LABEL: func.func @to_layout_redistributes
// CHECK-NOT:   dtensor.redistribute %arg
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NEXT:  %[[R:.*]] = dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK-NEXT:  %[[D:.*]] = dtensor.distribute %[[R]] to <@tp, [replicate]>
// CHECK-NOT:   dtensor.to_layout
// CHECK:       return %[[D]]
func.func @to_layout_redistributes(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}, %w: tensor<64x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = dtensor.to_layout %y to <@tp, [replicate]> : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// The same with a distribute: the matmul itself must produce Replicate.
// CHECK-LABEL: func.func @distribute_constrains_producer
// CHECK:       dtensor.redistribute %arg0 from <@tp, [shard<1>]> to <@tp, [replicate]>
// CHECK:       dtensor.redistribute %arg1 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func @distribute_constrains_producer(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}, %w: tensor<64x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = dtensor.distribute %y to <@tp, [replicate]> : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// Arguments and results without a layout get the cheapest one, written on
// the function; a distribute of an argument is that argument's layout.
// CHECK-LABEL: func.func @free_boundaries
// CHECK-SAME:  %arg0: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}
// CHECK-SAME:  %arg1: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}
// CHECK-SAME:  -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
// CHECK-NOT:   dtensor.redistribute
func.func @free_boundaries(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %xs = dtensor.distribute %x to <@tp, [shard<1>]> : tensor<8x16xf32>
  %0 = arith.addf %xs, %y : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// An op with no sharding rule runs replicated, with a remark.
// CHECK-LABEL: func.func @no_rule
// CHECK:       %[[R:.*]] = dtensor.redistribute %arg0 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       tensor.pad %[[R]]
// CHECK:       dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]
func.func @no_rule(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<10x16xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{no sharding rule for 'tensor.pad'; replicated}}
  %0 = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x16xf32> to tensor<10x16xf32>
  return %0 : tensor<10x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// tanh cannot produce a partial sum: the claim is met by a redistribute
// between the op and the distribute, with a remark.
// CHECK-LABEL: func.func @claim_not_producible
// CHECK:       %[[T:.*]] = math.tanh %arg0 {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// CHECK-NEXT:  %[[P:.*]] = dtensor.redistribute %[[T]] from <@tp, [replicate]> to <@tp, [partial<sum>]>
// CHECK-NEXT:  dtensor.distribute %[[P]] to <@tp, [partial<sum>]>
func.func @claim_not_producible(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) -> tensor<8x16xf32> {
  // expected-remark @+1 {{cannot produce the layout a user asks for; its result is redistributed}}
  %t = math.tanh %x : tensor<8x16xf32>
  %p = dtensor.distribute %t to <@tp, [partial<sum>]> : tensor<8x16xf32>
  return %p : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A function with no layout anywhere is not distributed; a distributed
// caller runs it replicated.
// CHECK-LABEL: func.func private @plain
// CHECK-NOT:   dtensor
// CHECK:       return
// CHECK-LABEL: func.func @calls_plain
// CHECK:       %[[R:.*]] = dtensor.redistribute %arg0 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       call @plain(%[[R]]) {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func private @plain(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = math.exp %x : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func @calls_plain(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  %0 = func.call @plain(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A hand-written redistribute is kept; its source layout is a claim on the
// operand like a distribute.
// CHECK-LABEL: func.func @hand_written
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NEXT:  dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [shard<0>]>
// CHECK-NOT:   dtensor.redistribute
func.func @hand_written(%a: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                        %w: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = dtensor.redistribute %y from <@tp, [partial<sum>]> to <@tp, [shard<0>]> : tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}
