// RUN: dtensor-opt %s --pass-pipeline='builtin.module(func.func(dtensor-lower-gather))' | FileCheck %s

// An embedding lookup: each result element reads its id, checks it against
// the table's rows and reads the table only in range; zero otherwise.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME:    (%[[IDS:.*]]: tensor<2x3x1xi64>, %[[TABLE:.*]]: tensor<10x4xbf16>)
// CHECK-NOT:   tensor.gather
// CHECK-DAG:   %[[ROWS:.*]] = tensor.dim %[[TABLE]], %c0
// CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK:       %[[R:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:    outs(%{{.*}} : tensor<2x3x4xbf16>)
// CHECK:         %[[I:.*]] = linalg.index 0
// CHECK:         %[[J:.*]] = linalg.index 1
// CHECK:         %[[K:.*]] = linalg.index 2
// CHECK:         %[[ID:.*]] = tensor.extract %[[IDS]][%[[I]], %[[J]], %{{.*}}]
// CHECK:         %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:         %[[GE:.*]] = arith.cmpi sge, %[[ROW]]
// CHECK:         %[[LT:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]]
// CHECK:         %[[IN:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK:         %[[V:.*]] = scf.if %[[IN]] -> (bf16) {
// CHECK:           %[[E:.*]] = tensor.extract %[[TABLE]][%[[ROW]], %[[K]]]
// CHECK:           scf.yield %[[E]]
// CHECK:         } else {
// CHECK:           scf.yield %[[ZERO]]
// CHECK:         linalg.yield %[[V]]
// CHECK:       return %[[R]]
func.func @embedding(%ids: tensor<2x3x1xi64>, %table: tensor<10x4xbf16>) -> tensor<2x3x4xbf16> {
  %rows = tensor.gather %table[%ids] gather_dims([0]) : (tensor<10x4xbf16>, tensor<2x3x1xi64>) -> tensor<2x3x4xbf16>
  return %rows : tensor<2x3x4xbf16>
}

// Two gathered dims kept as unit dims of the result (not rank-reduced):
// both coordinates are checked; the middle source dim follows result dim 2.
// CHECK-LABEL: func.func @two_dims
// CHECK-SAME:    (%[[IDS:.*]]: tensor<5x2xindex>, %[[SRC:.*]]: tensor<3x4x6xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:    outs(%{{.*}} : tensor<5x1x4x1xf32>)
// CHECK:         %[[I:.*]] = linalg.index 0
// CHECK:         %[[K:.*]] = linalg.index 2
// CHECK:         %[[A:.*]] = tensor.extract %[[IDS]][%[[I]], %c0
// CHECK:         %[[B:.*]] = tensor.extract %[[IDS]][%[[I]], %c1
// CHECK:         scf.if
// CHECK:           tensor.extract %[[SRC]][%[[A]], %[[K]], %[[B]]]
func.func @two_dims(%ids: tensor<5x2xindex>, %source: tensor<3x4x6xf32>) -> tensor<5x1x4x1xf32> {
  %v = tensor.gather %source[%ids] gather_dims([0, 2]) : (tensor<3x4x6xf32>, tensor<5x2xindex>) -> tensor<5x1x4x1xf32>
  return %v : tensor<5x1x4x1xf32>
}
