// RUN: dtensor-opt %s --dtensor-cpu-parallel-nests-to-runtime --split-input-file | FileCheck %s

// A call of a parallel nest becomes dtensor_rt_parallel_for of a task that
// loads the nest's arguments (from the step on) from 8-byte slots in the
// caller's frame. Two calls of one nest share its task.
// CHECK-LABEL: llvm.func @dtensor_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
// CHECK-LABEL: llvm.func internal @nest_task(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[STEP:.*]] = llvm.load %[[S0]] : !llvm.ptr -> i64
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[P:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S2:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[X:.*]] = llvm.load %[[S2]] : !llvm.ptr -> f32
// CHECK: llvm.call @nest(%[[BEGIN]], %[[END]], %[[STEP]], %[[P]], %[[X]])
// CHECK-NOT: llvm.func internal @nest_task
llvm.func @nest(%begin: i64, %end: i64, %step: i64, %p: !llvm.ptr, %x: f32) attributes {dtensor_parallel_nest = 40 : i64} {
  llvm.return
}
// CHECK-LABEL: llvm.func @caller(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[X:.*]]: f32, %[[N:.*]]: i64)
// CHECK-DAG: %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-DAG: %[[BUF:.*]] = llvm.alloca %{{.*}} x i64 : (i64) -> !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
// CHECK: llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: llvm.store %[[X]], %{{.*}} : f32, !llvm.ptr
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @nest_task : !llvm.ptr
// CHECK: %[[WORK:.*]] = llvm.mlir.constant(40 : i64) : i64
// CHECK: llvm.call @dtensor_rt_parallel_for(%[[TASK]], %{{.*}}, %{{.*}}, %[[N]], %{{.*}}, %[[WORK]])
// CHECK: llvm.call @dtensor_rt_parallel_for(
// CHECK-NOT: llvm.call @nest(
llvm.func @caller(%p: !llvm.ptr, %x: f32, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.call @nest(%zero, %n, %one, %p, %x) : (i64, i64, i64, !llvm.ptr, f32) -> ()
  llvm.call @nest(%zero, %n, %one, %p, %x) : (i64, i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}

// -----

// An argument wider than a slot keeps the call direct, as does a function
// without the mark.
// CHECK-LABEL: llvm.func @wide_caller(
// CHECK: llvm.call @wide(
// CHECK: llvm.call @plain(
// CHECK-NOT: dtensor_rt_parallel_for
llvm.func @wide(%begin: i64, %end: i64, %step: i64, %v: vector<4xf64>) attributes {dtensor_parallel_nest = 8 : i64} {
  llvm.return
}
llvm.func @plain(%begin: i64, %end: i64, %step: i64) {
  llvm.return
}
llvm.func @wide_caller(%v: vector<4xf64>, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.call @wide(%zero, %n, %one, %v) : (i64, i64, i64, vector<4xf64>) -> ()
  llvm.call @plain(%zero, %n, %one) : (i64, i64, i64) -> ()
  llvm.return
}
