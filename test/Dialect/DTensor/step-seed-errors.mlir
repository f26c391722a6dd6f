// dtensor.step_seed yields an i64 only.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

func.func @narrow() -> i32 {
  // expected-error @+1 {{'dtensor.step_seed' op result #0 must be 64-bit signless integer, but got 'i32'}}
  %s = dtensor.step_seed : i32
  return %s : i32
}
