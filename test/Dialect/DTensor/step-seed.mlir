// dtensor.step_seed: printed and parsed back; pure, so two reads of one
// step fold into one (CSE) and an unused one disappears (canonicalize).
// RUN: dtensor-opt %s | dtensor-opt | FileCheck %s --check-prefix=ROUND
// RUN: dtensor-opt %s --cse --canonicalize | FileCheck %s --check-prefix=CSE

// ROUND-LABEL: func.func @seeds
// ROUND: %[[A:.*]] = dtensor.step_seed : i64
// ROUND: %[[B:.*]] = dtensor.step_seed : i64
// ROUND: dtensor.step_seed : i64
// ROUND: arith.addi %[[A]], %[[B]] : i64
// CSE-LABEL: func.func @seeds
// CSE: %[[S:.*]] = dtensor.step_seed : i64
// CSE-NOT: dtensor.step_seed
// CSE: arith.addi %[[S]], %[[S]] : i64
func.func @seeds() -> i64 {
  %a = dtensor.step_seed : i64
  %b = dtensor.step_seed : i64
  %unused = dtensor.step_seed : i64
  %c = arith.addi %a, %b : i64
  return %c : i64
}
