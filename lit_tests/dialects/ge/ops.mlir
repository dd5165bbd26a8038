// Round trip of every ge op: custom form parses back to itself, and the generic form parses
// back to the same custom form.
// RUN: dfir-opt %s | dfir-opt | filecheck %s
// RUN: dfir-opt %s --print-op-generic | dfir-opt | filecheck %s
// RUN: dfir-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Shape ranges, formats and element types of !ge.tensor; 2:2 is the fixed size 2 and 0:-1 is -1.
// CHECK-LABEL: ge.graph @tensor_types {
// CHECK-NEXT:    %ranged = ge.data 0 "ranged" : !ge.tensor<[1, -1, 1:1728, 2:-1], f32>
// CHECK-NEXT:    %canonical = ge.data 1 "canonical" : !ge.tensor<[2, -1], i64>
// CHECK-NEXT:    %image = ge.data 2 "image" : !ge.tensor<[1, 3, 224, 224], f16, NCHW>
// CHECK-NEXT:    %scalar = ge.data 3 "scalar" : !ge.tensor<[], ui8>
// CHECK-NEXT:    %flags = ge.data 4 "flags" : !ge.tensor<[4], i1, NHWC>
// CHECK-NEXT:    ge.output %ranged, %canonical, %image, %scalar, %flags : !ge.tensor<[1, -1, 1:1728, 2:-1], f32>, !ge.tensor<[2, -1], i64>, !ge.tensor<[1, 3, 224, 224], f16, NCHW>, !ge.tensor<[], ui8>, !ge.tensor<[4], i1, NHWC>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "tensor_types"}> ({
// GENERIC-NEXT:    %ranged = "ge.data"() <{index = 0 : i64, name = "ranged"}> : () -> !ge.tensor<[1, -1, 1:1728, 2:-1], f32>
ge.graph @tensor_types {
  %ranged = ge.data 0 "ranged" : !ge.tensor<[1, -1, 1:1728, 2:-1], f32>
  %canonical = ge.data 1 "canonical" : !ge.tensor<[2:2, 0:-1], i64>
  %image = ge.data 2 "image" : !ge.tensor<[1, 3, 224, 224], f16, NCHW>
  %scalar = ge.data 3 "scalar" : !ge.tensor<[], ui8>
  %flags = ge.data 4 "flags" : !ge.tensor<[4], i1, NHWC>
  ge.output %ranged, %canonical, %image, %scalar, %flags : !ge.tensor<[1, -1, 1:1728, 2:-1], f32>, !ge.tensor<[2:2, -1], i64>, !ge.tensor<[1, 3, 224, 224], f16, NCHW>, !ge.tensor<[], ui8>, !ge.tensor<[4], i1, NHWC>
}

// Small constants print as lists, splats as one value, more than 100 elements as raw hex bytes.
// CHECK-LABEL: ge.graph @constants {
// CHECK-NEXT:    %small = ge.const dense<[[1.500000e+00, -2.000000e+00], [0.000000e+00, 4.000000e+00]]> : tensor<2x2xf32> {name = "small"}
// CHECK-NEXT:    %splat = ge.const dense<7> : tensor<3x4xi32>
// CHECK-NEXT:    %weights = ge.const dense<"0x000000000000803F0000004000004040{{[0-9A-F]+}}"> : tensor<2x64xf32>
// CHECK-NEXT:    %scalar = ge.const dense<-3> : tensor<i64>
// CHECK-NEXT:    ge.output %small, %splat, %weights, %scalar : !ge.tensor<[2, 2], f32>, !ge.tensor<[3, 4], i32>, !ge.tensor<[2, 64], f32>, !ge.tensor<[], i64>
// GENERIC-LABEL: "ge.graph"() <{sym_name = "constants"}> ({
// GENERIC-NEXT:    %small = "ge.const"() <{value = dense<{{\[\[}}1.500000e+00, -2.000000e+00], [0.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}> {name = "small"} : () -> !ge.tensor<[2, 2], f32>
ge.graph @constants {
  %small = ge.const dense<[[1.5, -2.0], [0.0, 4.0]]> : tensor<2x2xf32> {name = "small"}
  %splat = ge.const dense<7> : tensor<3x4xi32>
  %weights = ge.const dense<"0x000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42000080420000824200008442000086420000884200008A4200008C4200008E42000090420000924200009442000096420000984200009A4200009C4200009E420000A0420000A2420000A4420000A6420000A8420000AA420000AC420000AE420000B0420000B2420000B4420000B6420000B8420000BA420000BC420000BE420000C0420000C2420000C4420000C6420000C8420000CA420000CC420000CE420000D0420000D2420000D4420000D6420000D8420000DA420000DC420000DE420000E0420000E2420000E4420000E6420000E8420000EA420000EC420000EE420000F0420000F2420000F4420000F6420000F8420000FA420000FC420000FE42"> : tensor<2x64xf32>
  %scalar = ge.const dense<-3> : tensor<i64>
  ge.output %small, %splat, %weights, %scalar : !ge.tensor<[2, 2], f32>, !ge.tensor<[3, 4], i32>, !ge.tensor<[2, 64], f32>, !ge.tensor<[], i64>
}

// Element-wise ops broadcast numpy-style; the result may be declared narrower than inferred.
// CHECK-LABEL: ge.graph @elementwise {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %b = ge.data 1 "b" : !ge.tensor<[3], f32>
// CHECK-NEXT:    %s = ge.data 2 "s" : !ge.tensor<[], f32>
// CHECK-NEXT:    %sum = ge.add %x, %b {name = "bias"} : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %diff = ge.sub %sum, %x : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>) -> !ge.tensor<[1:8, 3], f32>
// CHECK-NEXT:    %prod = ge.mul %diff, %s : (!ge.tensor<[1:8, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[1:8, 3], f32>
// CHECK-NEXT:    %act = ge.relu %prod : !ge.tensor<[1:8, 3], f32>
// CHECK-NEXT:    ge.output %act : !ge.tensor<[1:8, 3], f32>
// GENERIC-LABEL: "ge.graph"() <{sym_name = "elementwise"}> ({
// GENERIC:         %sum = "ge.add"(%x, %b) {name = "bias"} : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// GENERIC:         %act = "ge.relu"(%prod) : (!ge.tensor<[1:8, 3], f32>) -> !ge.tensor<[1:8, 3], f32>
ge.graph @elementwise {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
  %b = ge.data 1 "b" : !ge.tensor<[3], f32>
  %s = ge.data 2 "s" : !ge.tensor<[], f32>
  %sum = ge.add %x, %b {name = "bias"} : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
  %diff = ge.sub %sum, %x : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>) -> !ge.tensor<[1:8, 3], f32>
  %prod = ge.mul %diff, %s : (!ge.tensor<[1:8, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[1:8, 3], f32>
  %act = ge.relu %prod : !ge.tensor<[1:8, 3], f32>
  ge.output %act : !ge.tensor<[1:8, 3], f32>
}

// Matrix products: 2-D, and batched with broadcast leading dimensions.
// CHECK-LABEL: ge.graph @matmul {
// CHECK-NEXT:    %a = ge.data 0 "a" : !ge.tensor<[-1, 4], f32>
// CHECK-NEXT:    %w = ge.data 1 "w" : !ge.tensor<[4, 2], f32>
// CHECK-NEXT:    %batched = ge.data 2 "batched" : !ge.tensor<[5, 1, 3, 4], f32>
// CHECK-NEXT:    %stack = ge.data 3 "stack" : !ge.tensor<[6, 4, 2], f32>
// CHECK-NEXT:    %y = ge.matmul %a, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
// CHECK-NEXT:    %z = ge.matmul %batched, %stack : (!ge.tensor<[5, 1, 3, 4], f32>, !ge.tensor<[6, 4, 2], f32>) -> !ge.tensor<[5, 6, 3, 2], f32>
// CHECK-NEXT:    ge.output %y, %z : !ge.tensor<[-1, 2], f32>, !ge.tensor<[5, 6, 3, 2], f32>
ge.graph @matmul {
  %a = ge.data 0 "a" : !ge.tensor<[-1, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[4, 2], f32>
  %batched = ge.data 2 "batched" : !ge.tensor<[5, 1, 3, 4], f32>
  %stack = ge.data 3 "stack" : !ge.tensor<[6, 4, 2], f32>
  %y = ge.matmul %a, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  %z = ge.matmul %batched, %stack : (!ge.tensor<[5, 1, 3, 4], f32>, !ge.tensor<[6, 4, 2], f32>) -> !ge.tensor<[5, 6, 3, 2], f32>
  ge.output %y, %z : !ge.tensor<[-1, 2], f32>, !ge.tensor<[5, 6, 3, 2], f32>
}

// Reshape targets: 0 copies the input dimension, -1 takes the rest of the elements.
// CHECK-LABEL: ge.graph @reshape {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[2, 3, 4], f32>
// CHECK-NEXT:    %flat = ge.reshape %x to [0, -1] : !ge.tensor<[2, 3, 4], f32> -> !ge.tensor<[2, 12], f32>
// CHECK-NEXT:    %cube = ge.reshape %flat to [4, 3, 2] : !ge.tensor<[2, 12], f32> -> !ge.tensor<[4, 3, 2], f32>
// CHECK-NEXT:    ge.output %cube : !ge.tensor<[4, 3, 2], f32>
// GENERIC-LABEL: "ge.graph"() <{sym_name = "reshape"}> ({
// GENERIC:         %flat = "ge.reshape"(%x) <{shape = array<i64: 0, -1>}> : (!ge.tensor<[2, 3, 4], f32>) -> !ge.tensor<[2, 12], f32>
ge.graph @reshape {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3, 4], f32>
  %flat = ge.reshape %x to [0, -1] : !ge.tensor<[2, 3, 4], f32> -> !ge.tensor<[2, 12], f32>
  %cube = ge.reshape %flat to [4, 3, 2] : !ge.tensor<[2, 12], f32> -> !ge.tensor<[4, 3, 2], f32>
  ge.output %cube : !ge.tensor<[4, 3, 2], f32>
}
