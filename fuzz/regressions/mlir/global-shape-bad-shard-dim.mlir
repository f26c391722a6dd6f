dtensor.mesh @m3 shape [3]

func.func @uneven_needs_dynamic(tensor<4x6xf32> {dtensor.global_shape = array<i64: 10, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<2>]>}) {
  return
}
