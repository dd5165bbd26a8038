// infer-shape-ranges reports, at the op, an op whose operands no longer fit it once ranges are
// narrowed, and a declared type that shares no shape with the inferred one; both shapes are named.
// RUN: dfir-opt %s -p infer-shape-ranges --split-input-file --verify-diagnostics | filecheck %s

// The resize's output is 2:8 x 2:8 once its size is folded from the input's shape, which no
// longer broadcasts against a 9 x 9 constant.
// CHECK:      ge.add: shapes [1, 1, 2:8, 2:8] and [1, 1, 9, 9] do not broadcast: dimension 2 is 2:8 vs 9
// CHECK:      %z = "ge.add"(%y, %c)
// CHECK-NEXT: ^^^^^^^^^^^^^---
// CHECK-NEXT: | ge.add: shapes [1, 1, 2:8, 2:8] and [1, 1, 9, 9] do not broadcast: dimension 2 is 2:8 vs 9
ge.graph @operands_no_longer_fit {
  %x = ge.data 0 "x" : !ge.tensor<[1, 1, 2:8, 2:8], f32, NCHW>
  %s = ge.shape %x : !ge.tensor<[1, 1, 2:8, 2:8], f32, NCHW> -> !ge.tensor<[4], i64>
  %hw = ge.slice %s starts [2] ends [4] axes [0] steps [1] : !ge.tensor<[4], i64> -> !ge.tensor<[2], i64>
  %y = ge.resize_bilinear %x, %hw : (!ge.tensor<[1, 1, 2:8, 2:8], f32, NCHW>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 1, -1, -1], f32, NCHW>
  %c = ge.const dense<1.0> : tensor<1x1x9x9xf32>
  %z = ge.add %y, %c : (!ge.tensor<[1, 1, -1, -1], f32, NCHW>, !ge.tensor<[1, 1, 9, 9], f32>) -> !ge.tensor<[1, 1, 9, 9], f32, NCHW>
  ge.output %z : !ge.tensor<[1, 1, 9, 9], f32, NCHW>
}

// -----

// The declared 2000:3000 rows exclude the 1:1728 the folded size allows.
// CHECK:      ge.resize_bilinear: declared result type !ge.tensor<[1, 3, 2000:3000, -1], f32, NCHW> and the type !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW> inferred from its operands share no shape
// CHECK:      %y = "ge.resize_bilinear"(%x, %hw)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^---
ge.graph @declared_type_excluded {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
  %s = ge.shape %x : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW> -> !ge.tensor<[4], i64>
  %hw = ge.slice %s starts [2] ends [4] axes [0] steps [1] : !ge.tensor<[4], i64> -> !ge.tensor<[2], i64>
  %y = ge.resize_bilinear %x, %hw : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 3, 2000:3000, -1], f32, NCHW>
  ge.output %y : !ge.tensor<[1, 3, 2000:3000, -1], f32, NCHW>
}

// -----

// Shape arithmetic that reads past the end of a shape is an error at the gather.
// CHECK:      ge.gather: index 5 is out of range for [4]
// CHECK:      %g = "ge.gather"(%s, %i)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^---
ge.graph @gather_out_of_range {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:8, 1:8], f32>
  %s = ge.shape %x : !ge.tensor<[1, 3, 1:8, 1:8], f32> -> !ge.tensor<[4], i64>
  %i = ge.const dense<[5]> : tensor<1xi64>
  %g = ge.gather %s, %i axis 0 : (!ge.tensor<[4], i64>, !ge.tensor<[1], i64>) -> !ge.tensor<[1], i64>
  ge.output %g : !ge.tensor<[1], i64>
}
