// A local map's gradient is one more dtensor.local_map: its body recomputes
// the forward body on the local pieces and sweeps back through it by the
// global program's rules, from the pieces of the results' gradients (after
// the forward's inputs) to the pieces of the inputs' gradients. The
// gradients are laid out as the duals of the forward's layouts: Shard(d)
// stays Shard(d), a Replicate input's gradient is Partial(sum) (each rank's
// contribution), a Partial(sum) result's gradient is Replicate; the
// backward redistributes its operands to those layouts.
// RUN: dtensor-opt %s --dtensor-differentiate=function=scale | FileCheck %s
// A result laid out as a Partial without a dual is an error at the local
// map.
// RUN: not dtensor-opt %s "--dtensor-differentiate=function=partial_max wrt=all" 2>&1 | FileCheck %s --check-prefix=MAX
// RUN: dtensor-opt %s --dtensor-differentiate=function=uneven | FileCheck %s --check-prefix=UNEVEN

// CHECK-LABEL: func.func @scale_grad(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x6xf32>, %[[S:[^:]*]]: tensor<6xf32> {dtensor.weight})
// CHECK:         %[[Y:.*]]:2 = dtensor.local_map(%[[X]], %[[S]])
// CHECK:         %[[B:.*]] = dtensor.local_map(%[[X]], %[[S]], %[[DY:[^,]*]], %[[DZ:[^)]*]]) in [#dtensor.layout<@tp, [shard<0>]>, #dtensor.layout<@tp, [replicate]>, #dtensor.layout<@tp, [shard<0>]>, #dtensor.layout<@tp, [replicate]>] out [#dtensor.layout<@tp, [partial<sum>]>] redistribute_inputs {
// CHECK-NEXT:    ^bb0(%[[LX:[^:]*]]: tensor<2x6xf32>, %[[LS:[^:]*]]: tensor<6xf32>, %[[LDY:[^:]*]]: tensor<2x6xf32>, %[[LDZ:[^:]*]]: tensor<6xf32>):
// The forward body, recomputed:
// CHECK:           %[[M:.*]] = linalg.generic {{.*}} ins(%[[LX]], %[[LS]] : tensor<2x6xf32>, tensor<6xf32>)
// CHECK:           arith.mulf
// CHECK:           linalg.generic {{.*}} ins(%[[M]] : tensor<2x6xf32>)
// Then its sweep: the row sum's gradient (broadcast over the rows), added
// to the product's, back to s (a sum over the rank's rows).
// CHECK:           %[[DR:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[LDZ]] : tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>)
// CHECK:           %[[DM:.*]] = linalg.generic {{.*}} ins(%[[LDY]], %[[DR]] : tensor<2x6xf32>, tensor<2x6xf32>)
// CHECK:           %[[DS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[LX]], %[[LS]], %{{.*}}, %[[DM]] : tensor<2x6xf32>, tensor<6xf32>, tensor<2x6xf32>, tensor<2x6xf32>) outs(%{{.*}} : tensor<6xf32>)
// CHECK:           dtensor.yield %[[DS]] : tensor<6xf32>
// CHECK-NEXT:    } : (tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<6xf32>
// CHECK:         return %{{.*}}, %[[B]] : tensor<f32>, tensor<6xf32>

#all = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0, d1) -> ()>
#vec = affine_map<(d0) -> (d0)>
#vscalar = affine_map<(d0) -> ()>
module {
  dtensor.mesh @tp shape [2] names ["tp"]
  func.func @scale(%x: tensor<4x6xf32>, %s: tensor<6xf32> {dtensor.weight}) -> tensor<f32> {
    %y:2 = dtensor.local_map(%x, %s) in [#dtensor.layout<@tp, [shard<0>]>, #dtensor.layout<@tp, [replicate]>] out [#dtensor.layout<@tp, [shard<0>]>, #dtensor.layout<@tp, [partial<sum>]>] {
    ^bb0(%lx: tensor<2x6xf32>, %ls: tensor<6xf32>):
      %e = tensor.empty() : tensor<2x6xf32>
      %m = linalg.generic {indexing_maps = [#all, #col, #all], iterator_types = ["parallel", "parallel"]} ins(%lx, %ls : tensor<2x6xf32>, tensor<6xf32>) outs(%e : tensor<2x6xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %p = arith.mulf %a, %b : f32
        linalg.yield %p : f32
      } -> tensor<2x6xf32>
      %z0 = arith.constant 0.0 : f32
      %e1 = tensor.empty() : tensor<6xf32>
      %f1 = linalg.fill ins(%z0 : f32) outs(%e1 : tensor<6xf32>) -> tensor<6xf32>
      %r = linalg.generic {indexing_maps = [#all, #col], iterator_types = ["reduction", "parallel"]} ins(%m : tensor<2x6xf32>) outs(%f1 : tensor<6xf32>) {
      ^bb0(%a: f32, %o: f32):
        %p = arith.addf %o, %a : f32
        linalg.yield %p : f32
      } -> tensor<6xf32>
      dtensor.yield %m, %r : tensor<2x6xf32>, tensor<6xf32>
    } : (tensor<4x6xf32>, tensor<6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>)
    %z = arith.constant 0.0 : f32
    %s0 = tensor.empty() : tensor<f32>
    %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
    %sy = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction"]} ins(%y#0 : tensor<4x6xf32>) outs(%s1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %out, %in : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %sz = linalg.generic {indexing_maps = [#vec, #vscalar], iterator_types = ["reduction"]} ins(%y#1 : tensor<6xf32>) outs(%sy : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %out, %in : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    return %sz : tensor<f32>
  }

  // MAX: local-map.mlir:[[# @LINE + 2]]:10: error: 'dtensor.local_map' op has no gradient rule for its result #0, laid out as #dtensor.layout<@tp, [partial<max>]>: a Partial other than sum has no dual
  func.func @partial_max(%x: tensor<6xf32>) -> tensor<f32> {
    %y = dtensor.local_map(%x) in [#dtensor.layout<@tp, [replicate]>] out [#dtensor.layout<@tp, [partial<max>]>] {
    ^bb0(%lx: tensor<6xf32>):
      dtensor.yield %lx : tensor<6xf32>
    } : (tensor<6xf32>) -> tensor<6xf32>
    %z = arith.constant 0.0 : f32
    %s0 = tensor.empty() : tensor<f32>
    %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [#vec, #vscalar], iterator_types = ["reduction"]} ins(%y : tensor<6xf32>) outs(%s1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %out, %in : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    return %s : tensor<f32>
  }

  // Uneven pieces (5 rows on 2 ranks: 3 and 2): the body is a switch over
  // the shape classes, and so is its sweep; each case yields the piece's
  // gradient in the body's dynamic type.
  // UNEVEN-LABEL: func.func @uneven_grad(
  // UNEVEN:         dtensor.local_map(%{{.*}}, %{{.*}}) in [#dtensor.layout<@tp, [shard<0>]>, #dtensor.layout<@tp, [shard<0>]>] out [#dtensor.layout<@tp, [shard<0>]>] redistribute_inputs {
  // UNEVEN-NEXT:    ^bb0(%[[LX:[^:]*]]: tensor<?xf32>, %[[LDY:[^:]*]]: tensor<?xf32>):
  // UNEVEN:           %[[C:.*]] = dtensor.mesh_coord on @tp mesh_dims [0] : index
  // UNEVEN:           scf.index_switch %[[C]] -> tensor<?xf32>
  // UNEVEN:           %[[DX:.*]] = scf.index_switch %[[C]] -> tensor<?xf32>
  // UNEVEN-NEXT:      case 0 {
  // UNEVEN:             tensor.cast %[[LX]] : tensor<?xf32> to tensor<3xf32>
  // UNEVEN:             %[[D3:.*]] = tensor.cast %[[LDY]] : tensor<?xf32> to tensor<3xf32>
  // UNEVEN:             %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[D3]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  // UNEVEN:             %[[GC:.*]] = tensor.cast %[[G]] : tensor<3xf32> to tensor<?xf32>
  // UNEVEN:             scf.yield %[[GC]] : tensor<?xf32>
  // UNEVEN:           default {
  // UNEVEN:             tensor.cast %[[LX]] : tensor<?xf32> to tensor<2xf32>
  // UNEVEN:             scf.yield %{{.*}} : tensor<?xf32>
  // UNEVEN:           dtensor.yield %[[DX]] : tensor<?xf32>
  // UNEVEN-NEXT:    } : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  func.func @uneven(%x: tensor<5xf32> {dtensor.weight}) -> tensor<f32> {
    %y = dtensor.local_map(%x) in [#dtensor.layout<@tp, [shard<0>]>] out [#dtensor.layout<@tp, [shard<0>]>] {
    ^bb0(%lx: tensor<?xf32>):
      %c = dtensor.mesh_coord on @tp mesh_dims [0] : index
      %r = scf.index_switch %c -> tensor<?xf32>
      case 0 {
        %p = tensor.cast %lx : tensor<?xf32> to tensor<3xf32>
        %e = tensor.empty() : tensor<3xf32>
        %q = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%p : tensor<3xf32>) outs(%e : tensor<3xf32>) {
        ^bb0(%a: f32, %o: f32):
          %m = arith.mulf %a, %a : f32
          linalg.yield %m : f32
        } -> tensor<3xf32>
        %qc = tensor.cast %q : tensor<3xf32> to tensor<?xf32>
        scf.yield %qc : tensor<?xf32>
      }
      default {
        %p = tensor.cast %lx : tensor<?xf32> to tensor<2xf32>
        %e = tensor.empty() : tensor<2xf32>
        %q = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%p : tensor<2xf32>) outs(%e : tensor<2xf32>) {
        ^bb0(%a: f32, %o: f32):
          %m = arith.mulf %a, %a : f32
          linalg.yield %m : f32
        } -> tensor<2xf32>
        %qc = tensor.cast %q : tensor<2xf32> to tensor<?xf32>
        scf.yield %qc : tensor<?xf32>
      }
      dtensor.yield %r : tensor<?xf32>
    } : (tensor<5xf32>) -> tensor<5xf32>
    %z = arith.constant 0.0 : f32
    %s0 = tensor.empty() : tensor<f32>
    %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [#vec, #vscalar], iterator_types = ["reduction"]} ins(%y : tensor<5xf32>) outs(%s1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %out, %in : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    return %s : tensor<f32>
  }
}
