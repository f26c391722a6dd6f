// The JSON form of the report, its spellings, option errors, and that the
// pass leaves the IR as it was.
// RUN: dtensor-opt %s --dtensor-comm-report=json -o /dev/null > %t.json
// RUN: FileCheck %s --strict-whitespace --match-full-lines < %t.json
// RUN: %python -c "import json, sys; json.load(open(sys.argv[1]))" %t.json
// RUN: dtensor-opt %s --dtensor-comm-report=format=json -o /dev/null | diff %t.json -
// json=true wins over format, so the pipeline the pass prints for
// `--dtensor-comm-report=json` parses back to the same report.
// RUN: dtensor-opt %s --dtensor-comm-report=json --dump-pass-pipeline -o /dev/null 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: dtensor-comm-report{format=text json=true}
// RUN: dtensor-opt %s --pass-pipeline="builtin.module(dtensor-comm-report{format=text json=true})" -o /dev/null | diff %t.json -
// RUN: dtensor-opt %s --pass-pipeline="builtin.module(dtensor-comm-report{json})" -o /dev/null | diff %t.json -
//
// Text is the default; format=text and json=false say so explicitly.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null > %t.txt
// RUN: FileCheck %s --check-prefix=TEXT --strict-whitespace --match-full-lines < %t.txt
// RUN: dtensor-opt %s --dtensor-comm-report="json=false format=text" -o /dev/null | diff %t.txt -
//
// RUN: not dtensor-opt %s --dtensor-comm-report=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-FORMAT
// BAD-FORMAT: error: dtensor-comm-report: format must be text or json, not 'xml'
// RUN: not dtensor-opt %s --dtensor-comm-report=yaml -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-OPTION
// BAD-OPTION: no such option yaml
//
// RUN: dtensor-opt %s -o %t.before
// RUN: dtensor-opt %s --dtensor-comm-report=json -o %t.after > /dev/null
// RUN: diff %t.before %t.after

dtensor.mesh @m shape [2, 4] names ["dp", "tp"]

// all_reduce of 8x64 f32 over tp (4 ranks): 2*3 chunks of 128 f32 = 3072.
// all_gather of 2x64 f32 over both dims (8 ranks): 7 * 512 = 3584.
// The broadcast of a dynamic tensor is not statically known.
// CHECK:{
// CHECK-NEXT:  "functions": [
// CHECK-NEXT:    {
// CHECK-NEXT:      "name": "layer",
// CHECK-NEXT:      "modules": [
// CHECK-NEXT:        {
// CHECK-NEXT:          "module": "layers.0.mlp.fc2",
// CHECK-NEXT:          "collectives": [
// CHECK-NEXT:            {
// CHECK-NEXT:              "kind": "all_reduce",
// CHECK-NEXT:              "reduction": "sum",
// CHECK-NEXT:              "mesh": "m",
// CHECK-NEXT:              "mesh_dims": [
// CHECK-NEXT:                1
// CHECK-NEXT:              ],
// CHECK-NEXT:              "group_size": 4,
// CHECK-NEXT:              "calls": 1,
// CHECK-NEXT:              "bytes_per_rank": 3072
// CHECK-NEXT:            }
// CHECK-NEXT:          ]
// CHECK-NEXT:        },
// CHECK-NEXT:        {
// CHECK-NEXT:          "module": null,
// CHECK-NEXT:          "collectives": [
// CHECK-NEXT:            {
// CHECK-NEXT:              "kind": "all_gather",
// CHECK-NEXT:              "reduction": null,
// CHECK-NEXT:              "mesh": "m",
// CHECK-NEXT:              "mesh_dims": [
// CHECK-NEXT:                0,
// CHECK-NEXT:                1
// CHECK-NEXT:              ],
// CHECK-NEXT:              "group_size": 8,
// CHECK-NEXT:              "calls": 1,
// CHECK-NEXT:              "bytes_per_rank": 3584
// CHECK-NEXT:            },
// CHECK-NEXT:            {
// CHECK-NEXT:              "kind": "broadcast",
// CHECK-NEXT:              "reduction": null,
// CHECK-NEXT:              "mesh": "m",
// CHECK-NEXT:              "mesh_dims": [
// CHECK-NEXT:                0
// CHECK-NEXT:              ],
// CHECK-NEXT:              "group_size": 2,
// CHECK-NEXT:              "calls": 1,
// CHECK-NEXT:              "bytes_per_rank": null
// CHECK-NEXT:            }
// CHECK-NEXT:          ]
// CHECK-NEXT:        }
// CHECK-NEXT:      ],
// CHECK-NEXT:      "total": {
// CHECK-NEXT:        "calls": 3,
// CHECK-NEXT:        "bytes_per_rank": null,
// CHECK-NEXT:        "known_bytes_per_rank": 6656,
// CHECK-NEXT:        "calls_with_unknown_bytes": 1
// CHECK-NEXT:      }
// CHECK-NEXT:    },
// CHECK-NEXT:    {
// CHECK-NEXT:      "name": "quiet",
// CHECK-NEXT:      "modules": [],
// CHECK-NEXT:      "total": {
// CHECK-NEXT:        "calls": 0,
// CHECK-NEXT:        "bytes_per_rank": 0,
// CHECK-NEXT:        "known_bytes_per_rank": 0,
// CHECK-NEXT:        "calls_with_unknown_bytes": 0
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  ]
// CHECK-NEXT:}
// CHECK-NOT:{{.}}

// TEXT:func @layer
// TEXT-NEXT:  module            collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// TEXT-NEXT:  layers.0.mlp.fc2  all_reduce  sum        @m    [1]        4      1      3072
// TEXT-NEXT:  <unnamed>         all_gather  -          @m    [0, 1]     8      1      3584
// TEXT-NEXT:  <unnamed>         broadcast   -          @m    [0]        2      1      ?
// TEXT-NEXT:  total                                                            3      6656 + ? (1 call of unknown size)
// TEXT-EMPTY:
// TEXT-NEXT:func @quiet
// TEXT-NEXT:  no collectives
// TEXT-EMPTY:
// TEXT-NOT:{{.}}
func.func @layer(%p: tensor<8x64xf32>, %s: tensor<2x64xf32>,
                 %d: tensor<?x64xf32>) {
  %0 = dtensor.all_reduce sum %p on @m mesh_dims [1] : tensor<8x64xf32> loc("layers.0.mlp.fc2")
  %1 = dtensor.all_gather %s on @m mesh_dims [0, 1] gather_dim 0
      : tensor<2x64xf32> -> tensor<16x64xf32>
  %2 = dtensor.broadcast %d on @m mesh_dims [0] root 0 : tensor<?x64xf32>
  return
}

func.func @quiet() {
  return
}
