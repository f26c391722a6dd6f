// --dtensor-visualize-sharding: which rank holds which block, for 1-D, 2-D,
// 3-D, uneven, empty-shard, replicated and Partial values, on 1-D and 2-D
// meshes (device ids honoured). The IR is unchanged.
// RUN: dtensor-opt %s --dtensor-visualize-sharding | FileCheck %s
// RUN: dtensor-opt %s --dtensor-visualize-sharding="values=w,%arg3" -o /dev/null | FileCheck %s --check-prefix=PICK
// RUN: not dtensor-opt %s --dtensor-visualize-sharding="values=w,nope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: rm -rf %t && dtensor-opt %s --dtensor-visualize-sharding="values=w svg-dir=%t" -o /dev/null > /dev/null
// RUN: %python -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(d.documentElement.tagName, len(d.getElementsByTagName('rect')), d.getElementsByTagName('title')[0].firstChild.data)" %t/f.w.svg | FileCheck %s --check-prefix=SVG

dtensor.mesh @m4 shape [4]
dtensor.mesh @m23 shape [2, 3] devices [5, 4, 3, 2, 1, 0]

// CHECK-LABEL: func @f: %arg0 "v" tensor<10xf32> [S(0)] on @m4 shape [4]
// CHECK-NEXT:    Col 0-2  Col 3-5  Col 6-8  Col 9
// CHECK-NEXT:    0        1        2        3
// CHECK-NEXT:    cells: the devices holding each block, copies separated by ','
// CHECK-EMPTY:
// 5 rows over 4 ranks: 2, 2, 1, 0.
// CHECK-NEXT:  func @f: %arg1 "w" tensor<5x3xf32> [S(0)] on @m4 shape [4]
// CHECK-NEXT:             Col 0-2
// CHECK-NEXT:    Row 0-1  0
// CHECK-NEXT:    Row 2-3  1
// CHECK-NEXT:    Row 4    2
// CHECK-NEXT:    cells: the devices holding each block, copies separated by ','
// CHECK-NEXT:    empty shard on device 3
// CHECK-EMPTY:
// A 2-D mesh with its device list: mesh coord (0, 0) is device 5.
// CHECK-NEXT:  func @f: %arg2 "t" tensor<7x10xf32> [S(0), S(1)] on @m23 shape [2, 3] devices [5, 4, 3, 2, 1, 0]
// CHECK-NEXT:             Col 0-3  Col 4-7  Col 8-9
// CHECK-NEXT:    Row 0-3  5        4        3
// CHECK-NEXT:    Row 4-6  2        1        0
// CHECK:       func @f: %arg3 "p" tensor<4x6xf32> [R, P(max)] on @m23 shape [2, 3] devices [5, 4, 3, 2, 1, 0]
// CHECK-NEXT:             Col 0-5
// CHECK-NEXT:    Row 0-3  0+1+2, 3+4+5
// CHECK-NEXT:    cells: the devices holding each block, copies separated by ','; a+b: one copy held as Partial(max) contributions of a and b
// CHECK-EMPTY:
// 3-D: one table per slice of the leading dim whose holders differ.
// CHECK-NEXT:  func @f: %arg4 "b" tensor<3x2x4xf32> [S(0), R] on @m23 shape [2, 3] devices [5, 4, 3, 2, 1, 0]
// CHECK-NEXT:    slice [0-1, :, :]
// CHECK-NEXT:             Col 0-3
// CHECK-NEXT:    Row 0-1  3, 4, 5
// CHECK-NEXT:    slice [2, :, :]
// CHECK-NEXT:             Col 0-3
// CHECK-NEXT:    Row 0-1  0, 1, 2
// CHECK:       func @f: %arg5 "s" tensor<f32> [R] on @m4 shape [4]
// CHECK-NEXT:    scalar  0, 1, 2, 3
// CHECK:       func @f: result #0 "out" tensor<5x3xf32> [S(1)] on @m4 shape [4]
// CHECK-NEXT:             Col 0  Col 1  Col 2
// CHECK-NEXT:    Row 0-4  0      1      2
// CHECK:       empty shard on device 3
// CHECK-EMPTY:
// CHECK-NEXT:  func @f: result #1 tensor<f32>: no layout
// CHECK:       func.func @f

// PICK:      func @f: %arg1 "w"
// PICK:      func @f: %arg3 "p"
// PICK-NOT:  func @f

// UNKNOWN: error: --dtensor-visualize-sharding: no value named 'nope' (names: v, w, t, p, b, s, out; or an IR name such as %arg0 or %3)

// SVG: svg 3 @f w tensor<5x3xf32> [S(0)]

func.func @f(
    %v: tensor<10xf32> {dtensor.layout = #dtensor.layout<@m4, [shard<0>]>, dtensor.name = "v"},
    %w: tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@m4, [shard<0>]>, dtensor.name = "w"},
    %t: tensor<7x10xf32> {dtensor.layout = #dtensor.layout<@m23, [shard<0>, shard<1>]>, dtensor.name = "t"},
    %p: tensor<4x6xf32> {dtensor.layout = #dtensor.layout<@m23, [replicate, partial<max>]>, dtensor.name = "p"},
    %b: tensor<3x2x4xf32> {dtensor.layout = #dtensor.layout<@m23, [shard<0>, replicate]>, dtensor.name = "b"},
    %s: tensor<f32> {dtensor.layout = #dtensor.layout<@m4, [replicate]>, dtensor.name = "s"})
    -> (tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@m4, [shard<1>]>, dtensor.name = "out"}, tensor<f32>) {
  return %w, %s : tensor<5x3xf32>, tensor<f32>
}
