// Each memref.dealloc that the deallocation pipeline puts at the end of a
// block moves to right after its buffer's last use: through views, region
// ops, the runtime call that takes a pushed buffer and the wait of an
// asynchronous collective; a buffer whose uses cannot all be followed keeps
// its free where it is.
// RUN: dtensor-opt %s --dtensor-free-after-last-use | FileCheck %s

// Uses through views: a subview, its expansion, a transpose and a cast.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: linalg.fill {{.*}} outs(%[[B]] :
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK: linalg.copy ins(%{{.*}} : memref<2x4xf32, {{.*}}>)
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @views(%out: memref<2x4xf32>, %other: memref<4xf32>) {
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x8xf32>)
  linalg.fill ins(%cst : f32) outs(%b : memref<8xf32>)
  %row = memref.subview %a[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  %square = memref.expand_shape %row [[0, 1]] output_shape [2, 4] : memref<8xf32, strided<[1], offset: 8>> into memref<2x4xf32, strided<[4, 1], offset: 8>>
  %t = memref.transpose %square (d0, d1) -> (d1, d0) : memref<2x4xf32, strided<[4, 1], offset: 8>> to memref<4x2xf32, strided<[1, 4], offset: 8>>
  %back = memref.transpose %t (d0, d1) -> (d1, d0) : memref<4x2xf32, strided<[1, 4], offset: 8>> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  %c = memref.cast %back : memref<2x4xf32, strided<[4, 1], offset: 8>> to memref<2x4xf32, strided<[?, ?], offset: ?>>
  linalg.copy ins(%c : memref<2x4xf32, strided<[?, ?], offset: ?>>) outs(%out : memref<2x4xf32>)
  linalg.fill ins(%cst : f32) outs(%other : memref<4xf32>)
  memref.dealloc %a : memref<4x8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// A use inside a loop is the loop's; a region's result that its region
// yields is an alias, used after the region op.
// CHECK-LABEL: func.func @regions
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: scf.for
// CHECK: memref.store {{.*}}, %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[R:.*]] = scf.if
// CHECK: linalg.copy ins(%[[R]] : memref<4xf32>)
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @regions(%flag: i1, %x: memref<4xf32>, %out: memref<4xf32>) {
  %cst = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %cst, %a[%i] : memref<4xf32>
  }
  linalg.fill ins(%cst : f32) outs(%b : memref<4xf32>)
  %r = scf.if %flag -> memref<4xf32> {
    scf.yield %b : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  linalg.copy ins(%r : memref<4xf32>) outs(%out : memref<4xf32>)
  linalg.fill ins(%cst : f32) outs(%x : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// A pushed buffer is used by the runtime call that takes the queue, past
// the other pushes and the collective's site; a cast pushed again (as CSE
// leaves them) is used by the next call that takes it.
// CHECK-LABEL: func.func @pushed
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK: call @dtensor_rt_matmul
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: call @dtensor_rt_collective_site
// CHECK-NEXT: call @dtensor_rt_all_reduce
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @pushed(%x: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %cst = arith.constant 0.0 : f32
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x4xf32>)
  %ca = memref.cast %a : memref<4x4xf32> to memref<*xf32>
  %cx = memref.cast %x : memref<4x4xf32> to memref<*xf32>
  %cb = memref.cast %b : memref<4x4xf32> to memref<*xf32>
  call @dtensor_rt_push_buffer__f32(%ca) : (memref<*xf32>) -> ()
  call @dtensor_rt_push_buffer__f32(%cx) : (memref<*xf32>) -> ()
  call @dtensor_rt_push_buffer__f32(%cb) : (memref<*xf32>) -> ()
  call @dtensor_rt_matmul(%c0_i32, %c0_i32) : (i32, i32) -> ()
  call @dtensor_rt_push_buffer__f32(%cb) : (memref<*xf32>) -> ()
  call @dtensor_rt_push_buffer__f32(%cb) : (memref<*xf32>) -> ()
  call @dtensor_rt_collective_site(%c0_i64) : (i64) -> ()
  %h = call @dtensor_rt_all_reduce(%c0_i64, %c0_i32, %c0_i32, %c1_i64, %c0_i32) : (i64, i32, i32, i64, i32) -> i64
  linalg.fill ins(%cst : f32) outs(%out : memref<4x4xf32>)
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<4x4xf32>
  return
}

// An asynchronous collective's buffers live until the dtensor_rt_wait of
// its handle. (dtensor.start and dtensor.wait, whose futures hold tensors,
// become such calls before bufferization.)
// CHECK-LABEL: func.func @asynchronous
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: %[[H:.*]] = call @dtensor_rt_all_reduce
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: call @dtensor_rt_wait(%[[H]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @asynchronous(%x: memref<8xf32>) {
  %cst = arith.constant 0.0 : f32
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %a = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<8xf32>)
  %ca = memref.cast %a : memref<8xf32> to memref<*xf32>
  call @dtensor_rt_push_buffer__f32(%ca) : (memref<*xf32>) -> ()
  call @dtensor_rt_push_buffer__f32(%ca) : (memref<*xf32>) -> ()
  %h = call @dtensor_rt_all_reduce(%c0_i64, %c0_i32, %c0_i32, %c1_i64, %c1_i32) : (i64, i32, i32, i64, i32) -> i64
  linalg.fill ins(%cst : f32) outs(%x : memref<8xf32>)
  call @dtensor_rt_wait(%h) : (i64) -> ()
  linalg.fill ins(%cst : f32) outs(%x : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}

// Frees stay at the end for a buffer passed to a function of unknown
// effect, one whose address is taken as a number, one pushed before a
// runtime call that does not take the queue, and one whose collective's
// handle goes elsewhere than to dtensor_rt_wait.
// CHECK-LABEL: func.func @escaping
// CHECK: call @dtensor_rt_all_reduce
// CHECK-NEXT: call @keep
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return %{{.*}} : i64
func.func @escaping(%x: memref<8xf32>) -> i64 {
  %cst = arith.constant 0.0 : f32
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %a = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<8xf32>)
  call @opaque(%a) : (memref<8xf32>) -> ()
  %address = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
  %cc = memref.cast %c : memref<8xf32> to memref<*xf32>
  call @dtensor_rt_push_buffer__f32(%cc) : (memref<*xf32>) -> ()
  %seed = call @dtensor_rt_step_seed() : () -> i64
  %cd = memref.cast %d : memref<8xf32> to memref<*xf32>
  call @dtensor_rt_push_buffer__f32(%cd) : (memref<*xf32>) -> ()
  call @dtensor_rt_push_buffer__f32(%cd) : (memref<*xf32>) -> ()
  %h = call @dtensor_rt_all_reduce(%c0_i64, %c0_i32, %c0_i32, %c1_i64, %c1_i32) : (i64, i32, i32, i64, i32) -> i64
  call @keep(%h, %address) : (i64, index) -> ()
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %c : memref<8xf32>
  memref.dealloc %d : memref<8xf32>
  return %seed : i64
}

func.func private @opaque(memref<8xf32>)
func.func private @keep(i64, index)
func.func private @dtensor_rt_push_buffer__f32(memref<*xf32>)
func.func private @dtensor_rt_matmul(i32, i32)
func.func private @dtensor_rt_collective_site(i64)
func.func private @dtensor_rt_all_reduce(i64, i32, i32, i64, i32) -> i64
func.func private @dtensor_rt_wait(i64)
func.func private @dtensor_rt_step_seed() -> i64
