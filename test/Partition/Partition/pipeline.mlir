// Propagation then partitioning of the canonical tensor-parallel plans: the
// per-rank programs and exactly the collectives each plan needs.
// RUN: dtensor-opt %s --split-input-file --dtensor-propagate --dtensor-partition | FileCheck %s

// Megatron MLP on 2 ranks: local matmuls on shards, one all_reduce.
// CHECK-LABEL: func.func @mlp(%arg0: tensor<8x64xf32> {{.*}}, %arg1: tensor<64x128xf32> {{.*}}, %arg2: tensor<128x64xf32> {{.*}}) -> (tensor<8x64xf32>
// CHECK-NOT:   = dtensor.
// CHECK:       %[[H:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<8x64xf32>, tensor<64x128xf32>) {{.*}} -> tensor<8x128xf32>
// CHECK:       %[[P:.*]] = linalg.matmul ins({{.*}}, %arg2 : tensor<8x128xf32>, tensor<128x64xf32>) {{.*}} -> tensor<8x64xf32>
// CHECK-NEXT:  %[[Y:.*]] = dtensor.all_reduce sum %[[P]] on @tp mesh_dims [0] : tensor<8x64xf32>
// CHECK-NEXT:  return %[[Y]]
// On 3 ranks the 256 hidden units split 86, 86, 84: dynamic local dims.
// CHECK-LABEL: func.func @mlp_uneven(%arg0: tensor<8x64xf32> {{.*}}, %arg1: tensor<64x?xf32> {{.*}}, %arg2: tensor<?x64xf32>
// CHECK:       %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<8x?xf32>
// CHECK:       linalg.matmul ins(%arg0, %arg1 : tensor<8x64xf32>, tensor<64x?xf32>) {{.*}} -> tensor<8x?xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[P:.*]] = linalg.matmul ins({{.*}}, %arg2 : tensor<8x?xf32>, tensor<?x64xf32>) {{.*}} -> tensor<8x64xf32>
// CHECK-NEXT:  %[[Y:.*]] = dtensor.all_reduce sum %[[P]] on @tp3 mesh_dims [0] : tensor<8x64xf32>
// CHECK-NEXT:  return %[[Y]]
dtensor.mesh @tp shape [2] names ["tp"]
dtensor.mesh @tp3 shape [3]

func.func @mlp(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %a = math.tanh %h : tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}



func.func @mlp_uneven(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %a = math.tanh %h : tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Sequence parallel: one all_gather before fc1, one reduce_scatter after fc2.
// CHECK-LABEL: func.func @mlp_sp(%arg0: tensor<8x64xf32>
// CHECK-NOT:   = dtensor.
// CHECK:       %[[G:.*]] = dtensor.all_gather %{{.*}} on @tp mesh_dims [0] gather_dim 0 : tensor<8x64xf32> -> tensor<16x64xf32>
// CHECK-NEXT:  linalg.matmul ins(%[[G]], %arg2 : tensor<16x64xf32>, tensor<64x128xf32>)
// CHECK-NOT:   = dtensor.
// CHECK:       %[[S:.*]] = dtensor.reduce_scatter sum %{{.*}} on @tp mesh_dims [0] scatter_dim 0 : tensor<16x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:  return %[[S]]
dtensor.mesh @tp shape [2] names ["tp"]

func.func @mlp_sp(%x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
               %g: tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %zero = arith.constant 0.0 : f32
  %eg = tensor.empty() : tensor<16x64xf32>
  %gb = linalg.broadcast ins(%g : tensor<64xf32>) outs(%eg : tensor<16x64xf32>) dimensions = [0]
  %n = arith.mulf %x, %gb : tensor<16x64xf32>
  %e1 = tensor.empty() : tensor<16x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%n, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %a = math.tanh %h : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

// dp x tp on a 2x2 mesh: the batch stays split over dp, one all_reduce over
// the tp mesh dim.
// CHECK-LABEL: func.func @mlp_dp_tp(%arg0: tensor<4x16x64xf32> {{.*}}, %arg1: tensor<64x128xf32> {{.*}}, %arg2: tensor<128x64xf32> {{.*}}) -> (tensor<4x16x64xf32>
// CHECK:       tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<4x16x64xf32> into tensor<64x64xf32>
// CHECK-NOT:   = dtensor.
// CHECK:       %[[Y:.*]] = dtensor.all_reduce sum %{{.*}} on @m mesh_dims [1] : tensor<64x64xf32>
// CHECK-NEXT:  tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [4, 16, 64] : tensor<64x64xf32> into tensor<4x16x64xf32>
dtensor.mesh @m shape [2, 2] names ["dp", "tp"]

func.func @mlp_dp_tp(%x: tensor<8x16x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, shard<0>]>})
    -> (tensor<8x16x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<8x16x64xf32> into tensor<128x64xf32>
  %e1 = tensor.empty() : tensor<128x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128x256xf32>) -> tensor<128x256xf32>
  %h = linalg.matmul ins(%x2, %w1 : tensor<128x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<128x256xf32>) -> tensor<128x256xf32>
  %a = math.tanh %h : tensor<128x256xf32>
  %e2 = tensor.empty() : tensor<128x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [8, 16, 64] : tensor<128x64xf32> into tensor<8x16x64xf32>
  return %y3 : tensor<8x16x64xf32>
}

// -----

// Attention with heads sharded: 2 of 4 heads per rank through both
// batch_matmuls and the softmax; one all_reduce after the output projection.
// CHECK-LABEL: func.func @attention
// CHECK-NOT:   = dtensor.
// CHECK:       tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [16, 2, 16] : tensor<16x32xf32> into tensor<16x2x16xf32>
// CHECK-NOT:   = dtensor.
// CHECK:       linalg.softmax dimension(2) ins(%{{.*}} : tensor<2x16x16xf32>)
// CHECK-NOT:   = dtensor.
// CHECK:       %[[O:.*]] = linalg.matmul ins(%{{.*}}, %arg4 : tensor<16x32xf32>, tensor<32x64xf32>)
// CHECK-NEXT:  %[[Y:.*]] = dtensor.all_reduce sum %[[O]] on @tp mesh_dims [0] : tensor<16x64xf32>
// CHECK-NEXT:  return %[[Y]]
dtensor.mesh @tp shape [2] names ["tp"]

func.func @attention(
    %x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %wq: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %wk: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %wv: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %wo: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %eh = tensor.empty() : tensor<4x16x16xf32>
  %qh = linalg.transpose ins(%q3 : tensor<16x4x16xf32>) outs(%eh : tensor<4x16x16xf32>) permutation = [1, 0, 2]
  %kh = linalg.transpose ins(%k3 : tensor<16x4x16xf32>) outs(%eh : tensor<4x16x16xf32>) permutation = [1, 2, 0]
  %vh = linalg.transpose ins(%v3 : tensor<16x4x16xf32>) outs(%eh : tensor<4x16x16xf32>) permutation = [1, 0, 2]
  %sacc = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scores = linalg.batch_matmul ins(%qh, %kh : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%sacc : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scale = arith.constant dense<0.25> : tensor<4x16x16xf32>
  %scaled = arith.mulf %scores, %scale : tensor<4x16x16xf32>
  %probs = linalg.softmax dimension(2) ins(%scaled : tensor<4x16x16xf32>) outs(%eh : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o = linalg.batch_matmul ins(%probs, %vh : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%sacc : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %es = tensor.empty() : tensor<16x4x16xf32>
  %os = linalg.transpose ins(%o : tensor<4x16x16xf32>) outs(%es : tensor<16x4x16xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %os [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %out = linalg.matmul ins(%o2, %wo : tensor<16x64xf32>, tensor<64x64xf32>) outs(%oacc : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}

// -----

// A lookup into a vocab-sharded table (4001 rows: 1334, 1334, 1333): each
// rank reads the rows it holds, zeros elsewhere, then one all_reduce sums.
// CHECK-LABEL: func.func @embedding(%arg0: tensor<?x64xf32> {{.*}}, %arg1: tensor<8x1xindex>
// CHECK:       %[[BEGIN:.*]] = arith.minsi
// CHECK:       %[[COUNT:.*]] = arith.subi
// CHECK:       %[[LOOKUP:.*]] = linalg.generic
// CHECK:         %[[ROW:.*]] = linalg.index 0 : index
// CHECK-NEXT:    %[[COL:.*]] = linalg.index 1 : index
// CHECK:         %[[ID:.*]] = tensor.extract %arg1[%[[ROW]], %{{.*}}] : tensor<8x1xindex>
// CHECK-NEXT:    %[[LOCAL:.*]] = arith.subi %[[ID]], %[[BEGIN]] : index
// CHECK-NEXT:    %[[GE:.*]] = arith.cmpi sge, %[[LOCAL]], %{{.*}} : index
// CHECK-NEXT:    %[[LT:.*]] = arith.cmpi slt, %[[LOCAL]], %[[COUNT]] : index
// CHECK-NEXT:    %[[HELD:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT:    scf.if %[[HELD]] -> (f32) {
// CHECK-NEXT:      tensor.extract %arg0[%[[LOCAL]], %[[COL]]] : tensor<?x64xf32>
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %{{.*}} : f32
// CHECK:       %[[Y:.*]] = dtensor.all_reduce sum %[[LOOKUP]] on @tp mesh_dims [0] : tensor<8x64xf32>
// CHECK-NEXT:  return %[[Y]]
dtensor.mesh @tp shape [3]
func.func @embedding(%table: tensor<4001x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                     %ids: tensor<8x1xindex> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.gather %table[%ids] gather_dims([0]) unique : (tensor<4001x64xf32>, tensor<8x1xindex>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}
