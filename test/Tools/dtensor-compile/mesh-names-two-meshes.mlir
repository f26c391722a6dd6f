// --mesh with two meshes: a shape without a name, and a dim name both
// meshes have, are errors that list the meshes; a mesh's own name works.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not dtensor-compile %s -o %t/a.dtc --mesh 4 2>&1 | FileCheck %s --check-prefix=NONAME
// NONAME: dtensor-compile: error: --mesh 4: without a name, --mesh needs a program with exactly one mesh; this one has 2: @a [tp], @b [dp, tp]
// RUN: not dtensor-compile %s -o %t/a.dtc --mesh tp=4 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: dtensor-compile: error: --mesh tp=4: several meshes have a dim named 'tp' (@a [tp], @b [dp, tp]); give the whole shape of one with MESH=SHAPE
// RUN: dtensor-compile %s -o %t/b.dtc --no-reference --mesh a=4 --mesh dp=1
// RUN: %python -c "import json,sys; print([(m['name'], m['shape']) for m in json.load(open(sys.argv[1]))['meshes']])" %t/b.dtc/manifest.json | FileCheck %s --check-prefix=SHAPES
// SHAPES: [('a', [4]), ('b', [1, 2])]

dtensor.mesh @a shape [2] names ["tp"]
dtensor.mesh @b shape [2, 2] names ["dp", "tp"]

func.func @main(%x: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@a, [shard<0>]>}) -> tensor<8x4xf32> {
  return %x : tensor<8x4xf32>
}
