// Collective counts of the canonical tensor-parallel plans, from the global
// program through propagation and partitioning to the report. The inputs
// are the plans of test/Partition/Partition/pipeline.mlir.
// RUN: dtensor-opt %S/../../Partition/Partition/pipeline.mlir --split-input-file --dtensor-propagate --dtensor-partition --dtensor-comm-report -o /dev/null | FileCheck %s

// Colwise -> rowwise MLP: one all_reduce, on 2 and on 3 ranks.
// CHECK-LABEL: func @mlp
// CHECK-NEXT:    module collective reduction mesh mesh_dims ranks calls bytes sent per rank
// CHECK-NEXT:    <unnamed> all_reduce sum @tp [0] 2 1 2048
// CHECK-NEXT:    total 1 2048
// CHECK-LABEL: func @mlp_uneven
// CHECK-NEXT:    module
// CHECK-NEXT:    <unnamed> all_reduce sum @tp3 [0] 3 1
// CHECK-NEXT:    total 1

// Sequence parallel: one all_gather and one reduce_scatter.
// CHECK-LABEL: func @mlp_sp
// CHECK-NEXT:    module
// CHECK-NEXT:    <unnamed> all_gather - @tp [0] 2 1
// CHECK-NEXT:    <unnamed> reduce_scatter sum @tp [0] 2 1
// CHECK-NEXT:    total 2

// dp x tp: one all_reduce over the tp mesh dim only.
// CHECK-LABEL: func @mlp_dp_tp
// CHECK-NEXT:    module
// CHECK-NEXT:    <unnamed> all_reduce sum @m [1] 2 1
// CHECK-NEXT:    total 1

// Attention with sharded heads: one all_reduce.
// CHECK-LABEL: func @attention
// CHECK-NEXT:    module
// CHECK-NEXT:    <unnamed> all_reduce sum @tp [0] 2 1
// CHECK-NEXT:    total 1

// Vocab-parallel embedding: one all_reduce of the masked lookups.
// CHECK-LABEL: func @embedding
// CHECK-NEXT:    module
// CHECK-NEXT:    <unnamed> all_reduce sum @tp [0] 3 1
// CHECK-NEXT:    total 1
