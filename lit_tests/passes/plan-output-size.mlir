// plan-output-size writes `max_bytes` on each ge.output: the bytes its type proves (elements x
// element bytes), the user's ge.outputMaxSize (`output_max_size` on the graph) where nothing is
// proved, -1 when neither exists. A size below the proof is an error (plan-output-size-invalid.mlir).
// RUN: dfir-opt %s -p plan-output-size | filecheck %s
// RUN: dfir-opt %s -p 'plan-output-size{enabled=false}' | filecheck %s --check-prefix=OFF

// A bounded output of every element size: f32 8 x 4, i64 3, bool 5 (one byte each).
// CHECK-LABEL: ge.graph @proved
// CHECK:         ge.output %y, %n, %b {max_bytes = array<i64: 128, 24, 5>}
// OFF-LABEL:   ge.graph @proved
// OFF:           ge.output %y, %n, %b : !ge.tensor
ge.graph @proved {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  %n = ge.data 1 "n" : !ge.tensor<[1:3], i64>
  %b = ge.data 2 "b" : !ge.tensor<[5], i1>
  %w = ge.const dense<1.0> : tensor<4x4xf32>
  %y = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[1:8, 4], f32>
  ge.output %y, %n, %b : !ge.tensor<[1:8, 4], f32>, !ge.tensor<[1:3], i64>, !ge.tensor<[5], i1>
}

// The seed's resize: the size is a fed tensor, so nothing bounds the output; the given
// ge.outputMaxSize is planned (and checked at run time).
// CHECK-LABEL: ge.graph @seed_resize attributes {output_max_size = array<i64: 107495424>}
// CHECK:         ge.output %y {max_bytes = array<i64: 107495424>}
ge.graph @seed_resize attributes {output_max_size = array<i64: 107495424>} {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i32>
  %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32, NCHW>
}

// Unbounded and nothing given: -1, the output is allocated as it comes.
// CHECK-LABEL: ge.graph @unbounded
// CHECK:         ge.output %x {max_bytes = array<i64: -1>}
ge.graph @unbounded {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
  ge.output %x : !ge.tensor<[-1, 4], f32>
}

// A given size above the proof gives way to the proof; one equal to it is the proof.
// An empty entry (-1) leaves that output to the proof.
// CHECK-LABEL: ge.graph @given_sizes attributes {output_max_size = array<i64: 1000, 128, -1>}
// CHECK:         ge.output %x, %x, %x {max_bytes = array<i64: 128, 128, 128>}
ge.graph @given_sizes attributes {output_max_size = array<i64: 1000, 128, -1>} {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  ge.output %x, %x, %x : !ge.tensor<[1:8, 4], f32>, !ge.tensor<[1:8, 4], f32>, !ge.tensor<[1:8, 4], f32>
}
