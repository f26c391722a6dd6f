//===- Passes.td - dtensor passes --------------------------*- tablegen -*-===//

#ifndef DTENSOR_TRANSFORMS_PASSES_TD
#define DTENSOR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintShardingRules : Pass<"dtensor-print-sharding-rules"> {
  let summary = "Report the sharding rule of every op on tensors";
  let description = [{
    Emits a remark on every op that produces a tensor, giving its sharding
    rule: the factors (loops) indexing each operand and result dim, their
    sizes, and the combiner of reduction factors. Rules come from the
    indexing maps and iterator types of linalg structured ops and from
    identity maps for elementwise ops; ops without a rule are reported as
    kept replicated.

    ```
    remark: sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>}
    ```

    Factors are named i, j, k, ... in loop order; `-` marks a tensor dim
    that no single factor indexes (it stays unsharded).
  }];
}

#endif // DTENSOR_TRANSFORMS_PASSES_TD
