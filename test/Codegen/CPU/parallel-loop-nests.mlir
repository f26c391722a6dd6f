// RUN: dtensor-opt %s --dtensor-cpu-parallel-loop-nests --split-input-file | FileCheck %s
// RUN: dtensor-opt %s --dtensor-cpu-parallel-loop-nests=grain=100000000 --split-input-file | FileCheck %s --check-prefix=HIGH

// A large nest moves into a function whose first three arguments are the
// range and step of its split dim, then the values it uses from above;
// constants are cloned. The work of one iteration of the split dim is the
// body's ops (2 loads, an add, a store: 4) times the other dims' trips.
// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[A:.*]]: memref<512x256xf32>, %[[B:.*]]: memref<512x256xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : index
// CHECK-NOT: scf.parallel
// CHECK: call @add_pnest0(%[[C0]], %[[C512]], %[[C1]], %[[A]], %[[B]])
// CHECK: func.func private @add_pnest0(%[[BEGIN:.*]]: index, %[[END:.*]]: index, %{{.*}}: index, %{{.*}}: memref<512x256xf32>, %{{.*}}: memref<512x256xf32>)
// CHECK-SAME: dtensor_parallel_nest = 1024 : i64
// CHECK-SAME: passthrough = ["noinline"]
// A constant step stays a constant inside (LLVM vectorises only loops
// whose step it knows).
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%[[BEGIN]], %{{.*}}) to (%[[END]], %{{.*}}) step (%c1{{[_0-9]*}}, %{{.*}})
// With a grain above the nest's work it stays.
// HIGH-LABEL: func.func @add(
// HIGH: scf.parallel
// HIGH-NOT: call @add_pnest0
func.func @add(%a: memref<512x256xf32>, %b: memref<512x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c256) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<512x256xf32>
    %y = memref.load %b[%i, %j] : memref<512x256xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %b[%i, %j] : memref<512x256xf32>
    scf.reduce
  }
  return
}

// -----

// A batch of one is not split: the next dim is; the batch dim's bounds,
// constants, are cloned. Work: 64 iterations of 3 ops.
// CHECK-LABEL: func.func @batch_one(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: call @batch_one_pnest0(%[[C0]], %[[C256]], %[[C1]], %{{.*}})
// CHECK: func.func private @batch_one_pnest0(%[[BEGIN:.*]]: index, %[[END:.*]]: index, %{{.*}}: index,
// CHECK-SAME: dtensor_parallel_nest = 192 : i64
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%{{.*}}, %[[BEGIN]], %{{.*}}) to (%{{.*}}, %[[END]], %{{.*}}) step (%{{.*}}, %{{.*}}, %{{.*}})
func.func @batch_one(%a: memref<1x256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%b, %i, %j) = (%c0, %c0, %c0) to (%c1, %c256, %c64) step (%c1, %c1, %c1) {
    %x = memref.load %a[%b, %i, %j] : memref<1x256x64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%b, %i, %j] : memref<1x256x64xf32>
    scf.reduce
  }
  return
}

// -----

// Left where they are: too little work (8 x 8 x 4 ops), a nest that calls
// a function, a nest with a reduction result, and a loop nest of scf.for.
// CHECK-LABEL: func.func @stay(
// CHECK-NOT: call @stay_pnest
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: call @opaque
// CHECK: scf.parallel
// CHECK: scf.reduce
// CHECK: scf.for
// CHECK-NOT: func.func private @stay_pnest
func.func private @opaque(f32) -> f32
func.func @stay(%a: memref<8x8xf32>, %big: memref<4096x64xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<8x8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4096, %c64) step (%c1, %c1) {
    %x = memref.load %big[%i, %j] : memref<4096x64xf32>
    %y = func.call @opaque(%x) : (f32) -> f32
    memref.store %y, %big[%i, %j] : memref<4096x64xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%c4096) step (%c1) init (%zero) -> f32 {
    %x = memref.load %big[%i, %c0] : memref<4096x64xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      scf.reduce.return %t : f32
    }
  }
  scf.for %i = %c0 to %c4096 step %c1 {
    %x = memref.load %big[%i, %c0] : memref<4096x64xf32>
    memref.store %x, %big[%i, %c1] : memref<4096x64xf32>
  }
  return %sum : f32
}

// -----

// A split dim whose trip count is known only at run time is outlined (the
// runtime decides with the count it sees); dynamic inner trips count 16.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[A:.*]]: memref<?x?xf32>, %[[M:.*]]: index, %[[N:.*]]: index)
// CHECK: call @dynamic_pnest0(%{{.*}}, %[[M]], %{{.*}}, %[[A]], %[[N]])
// CHECK: func.func private @dynamic_pnest0(
// CHECK-SAME: dtensor_parallel_nest = 48 : i64
func.func @dynamic(%a: memref<?x?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}
