// The redistribute planner prices plans with the cost-model options. On 8
// ranks S(0)->S(1) is either one all_to_all (7 latency rounds, 1/8 of the
// bytes) or an all_gather (3 rounds, all the bytes) and a local chunk: small
// tensors favour the gather, slow links the all_to_all.
// RUN: dtensor-opt %s --dtensor-partition | FileCheck %s --check-prefix=FAST
// RUN: dtensor-opt %s --dtensor-partition="bandwidth-gbps=0.001" | FileCheck %s --check-prefix=SLOW

dtensor.mesh @m8 shape [8]

// FAST-LABEL: func.func @s0_to_s1
// FAST-NEXT:  %[[G:.*]] = dtensor.all_gather %arg0 on @m8 mesh_dims [0] gather_dim 0 : tensor<8x64xf32> -> tensor<64x64xf32>
// FAST-NEXT:  %[[C:.*]] = dtensor.chunk %[[G]] on @m8 mesh_dims [0] dim 1 : tensor<64x64xf32> -> tensor<64x8xf32>
// FAST-NEXT:  return %[[C]]

// SLOW-LABEL: func.func @s0_to_s1
// SLOW-NEXT:  %[[T:.*]] = dtensor.all_to_all %arg0 on @m8 mesh_dims [0] split_dim 1 concat_dim 0 : tensor<8x64xf32> -> tensor<64x8xf32>
// SLOW-NEXT:  return %[[T]]
func.func @s0_to_s1(%x: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@m8, [shard<0>]>}) -> (tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@m8, [shard<1>]>}) {
  %0 = dtensor.redistribute %x from <@m8, [shard<0>]> to <@m8, [shard<1>]> : tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
