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


// Element-wise ops: identity of any type, float math, binary ops with broadcasting.
// CHECK-LABEL: ge.graph @math {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %y = ge.data 1 "y" : !ge.tensor<[3], f32>
// CHECK-NEXT:    %n = ge.data 2 "n" : !ge.tensor<[2, 3], i32>
// CHECK-NEXT:    %same = ge.identity %n : !ge.tensor<[2, 3], i32>
// CHECK-NEXT:    %quotient = ge.div %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %power = ge.pow %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %larger = ge.maximum %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %smaller = ge.minimum %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %root = ge.sqrt %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %e = ge.exp %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %ln = ge.log %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %th = ge.tanh %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %sig = ge.sigmoid %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %er = ge.erf %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %exact = ge.gelu %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %fast = ge.gelu %x approximate "tanh" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    ge.output %same, %quotient, %power, %larger, %smaller, %root, %e, %ln, %th, %sig, %er, %exact, %fast : !ge.tensor<[2, 3], i32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:  }
ge.graph @math {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
  %y = ge.data 1 "y" : !ge.tensor<[3], f32>
  %n = ge.data 2 "n" : !ge.tensor<[2, 3], i32>
  %same = ge.identity %n : !ge.tensor<[2, 3], i32>
  %quotient = ge.div %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
  %power = ge.pow %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
  %larger = ge.maximum %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
  %smaller = ge.minimum %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
  %root = ge.sqrt %x : !ge.tensor<[-1, 3], f32>
  %e = ge.exp %x : !ge.tensor<[-1, 3], f32>
  %ln = ge.log %x : !ge.tensor<[-1, 3], f32>
  %th = ge.tanh %x : !ge.tensor<[-1, 3], f32>
  %sig = ge.sigmoid %x : !ge.tensor<[-1, 3], f32>
  %er = ge.erf %x : !ge.tensor<[-1, 3], f32>
  %exact = ge.gelu %x : !ge.tensor<[-1, 3], f32>
  %fast = ge.gelu %x approximate "tanh" : !ge.tensor<[-1, 3], f32>
  ge.output %same, %quotient, %power, %larger, %smaller, %root, %e, %ln, %th, %sig, %er, %exact, %fast : !ge.tensor<[2, 3], i32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>
}

// A variable is a named constant; its value prints like ge.const's.
// CHECK-LABEL: ge.graph @variable {
// CHECK-NEXT:    %w = ge.variable "fc.weight" dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32> {name = "w"}
// CHECK-NEXT:    ge.output %w : !ge.tensor<[2], f32>
// CHECK-NEXT:  }
ge.graph @variable {
  %w = ge.variable "fc.weight" dense<[1.5, -2.0]> : tensor<2xf32> {name = "w"}
  ge.output %w : !ge.tensor<[2], f32>
}

// Batched products with adjoints and broadcast batch ranges; gemm with and without c.
// CHECK-LABEL: ge.graph @products {
// CHECK-NEXT:    %a = ge.data 0 "a" : !ge.tensor<[1:3, 4, 8], f32>
// CHECK-NEXT:    %b = ge.data 1 "b" : !ge.tensor<[2:5, 5, 8], f32>
// CHECK-NEXT:    %m = ge.data 2 "m" : !ge.tensor<[4, -1], f32>
// CHECK-NEXT:    %w = ge.data 3 "w" : !ge.tensor<[8, 4], f32>
// CHECK-NEXT:    %c = ge.data 4 "c" : !ge.tensor<[8], f32>
// CHECK-NEXT:    %batched = ge.batch_matmul %a, %b adj_y : (!ge.tensor<[1:3, 4, 8], f32>, !ge.tensor<[2:5, 5, 8], f32>) -> !ge.tensor<[2:5, 4, 5], f32>
// CHECK-NEXT:    %both = ge.batch_matmul %a, %a adj_x : (!ge.tensor<[1:3, 4, 8], f32>, !ge.tensor<[1:3, 4, 8], f32>) -> !ge.tensor<[1:3, 8, 8], f32>
// CHECK-NEXT:    %dense = ge.gemm %m, %w, %c alpha 1.000000e+00 beta 5.000000e-01 trans_a trans_b : (!ge.tensor<[4, -1], f32>, !ge.tensor<[8, 4], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    %plain = ge.gemm %w, %m alpha 2.000000e+00 beta 1.000000e+00 : (!ge.tensor<[8, 4], f32>, !ge.tensor<[4, -1], f32>) -> !ge.tensor<[8, -1], f32>
// CHECK-NEXT:    ge.output %batched, %both, %dense, %plain : !ge.tensor<[2:5, 4, 5], f32>, !ge.tensor<[1:3, 8, 8], f32>, !ge.tensor<[-1, 8], f32>, !ge.tensor<[8, -1], f32>
// CHECK-NEXT:  }
ge.graph @products {
  %a = ge.data 0 "a" : !ge.tensor<[1:3, 4, 8], f32>
  %b = ge.data 1 "b" : !ge.tensor<[2:5, 5, 8], f32>
  %m = ge.data 2 "m" : !ge.tensor<[4, -1], f32>
  %w = ge.data 3 "w" : !ge.tensor<[8, 4], f32>
  %c = ge.data 4 "c" : !ge.tensor<[8], f32>
  %batched = ge.batch_matmul %a, %b adj_y : (!ge.tensor<[1:3, 4, 8], f32>, !ge.tensor<[2:5, 5, 8], f32>) -> !ge.tensor<[2:5, 4, 5], f32>
  %both = ge.batch_matmul %a, %a adj_x : (!ge.tensor<[1:3, 4, 8], f32>, !ge.tensor<[1:3, 4, 8], f32>) -> !ge.tensor<[1:3, 8, 8], f32>
  %dense = ge.gemm %m, %w, %c alpha 1.000000e+00 beta 5.000000e-01 trans_a trans_b : (!ge.tensor<[4, -1], f32>, !ge.tensor<[8, 4], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8], f32>
  %plain = ge.gemm %w, %m alpha 2.000000e+00 beta 1.000000e+00 : (!ge.tensor<[8, 4], f32>, !ge.tensor<[4, -1], f32>) -> !ge.tensor<[8, -1], f32>
  ge.output %batched, %both, %dense, %plain : !ge.tensor<[2:5, 4, 5], f32>, !ge.tensor<[1:3, 8, 8], f32>, !ge.tensor<[-1, 8], f32>, !ge.tensor<[8, -1], f32>
}

// Convolution and pooling compute output ranges on both ends of the input ranges.
// CHECK-LABEL: ge.graph @windows {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 4, 1:1728, 8:64], f32, NCHW>
// CHECK-NEXT:    %w = ge.data 1 "w" : !ge.tensor<[6, 2, 3, 3], f32>
// CHECK-NEXT:    %b = ge.data 2 "b" : !ge.tensor<[6], f32>
// CHECK-NEXT:    %conv = ge.conv2d %x, %w, %b strides [2, 1] pads [1, 1, 0, 0] dilations [1, 2] groups 2 : (!ge.tensor<[-1, 4, 1:1728, 8:64], f32, NCHW>, !ge.tensor<[6, 2, 3, 3], f32>, !ge.tensor<[6], f32>) -> !ge.tensor<[-1, 6, 1:864, 4:60], f32, NCHW>
// CHECK-NEXT:    %max = ge.max_pool %conv kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : !ge.tensor<[-1, 6, 1:864, 4:60], f32, NCHW> -> !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW>
// CHECK-NEXT:    %avg = ge.avg_pool %max kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW> -> !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW>
// CHECK-NEXT:    %global = ge.global_avg_pool %avg : !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW> -> !ge.tensor<[-1, 6, 1, 1], f32, NCHW>
// CHECK-NEXT:    ge.output %global : !ge.tensor<[-1, 6, 1, 1], f32, NCHW>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "windows"}> ({
// GENERIC:         %conv = "ge.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 2>, groups = 2 : i64}> : (!ge.tensor<[-1, 4, 1:1728, 8:64], f32, NCHW>, !ge.tensor<[6, 2, 3, 3], f32>, !ge.tensor<[6], f32>) -> !ge.tensor<[-1, 6, 1:864, 4:60], f32, NCHW>
// GENERIC:         %max = "ge.max_pool"(%conv) <{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode}> : (!ge.tensor<[-1, 6, 1:864, 4:60], f32, NCHW>) -> !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW>
ge.graph @windows {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4, 1:1728, 8:64], f32, NCHW>
  %w = ge.data 1 "w" : !ge.tensor<[6, 2, 3, 3], f32>
  %b = ge.data 2 "b" : !ge.tensor<[6], f32>
  %conv = ge.conv2d %x, %w, %b strides [2, 1] pads [1, 1, 0, 0] dilations [1, 2] groups 2 : (!ge.tensor<[-1, 4, 1:1728, 8:64], f32, NCHW>, !ge.tensor<[6, 2, 3, 3], f32>, !ge.tensor<[6], f32>) -> !ge.tensor<[-1, 6, 1:864, 4:60], f32, NCHW>
  %max = ge.max_pool %conv kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : !ge.tensor<[-1, 6, 1:864, 4:60], f32, NCHW> -> !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW>
  %avg = ge.avg_pool %max kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW> -> !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW>
  %global = ge.global_avg_pool %avg : !ge.tensor<[-1, 6, 1:432, 2:30], f32, NCHW> -> !ge.tensor<[-1, 6, 1, 1], f32, NCHW>
  ge.output %global : !ge.tensor<[-1, 6, 1, 1], f32, NCHW>
}

// Max pooling of integers.
// CHECK-LABEL: ge.graph @max_pool_integers {
// CHECK:         %y = ge.max_pool %x kernel [2, 2] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4], ui8> -> !ge.tensor<[1, 2, 3, 3], ui8>
ge.graph @max_pool_integers {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], ui8>
  %y = ge.max_pool %x kernel [2, 2] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4], ui8> -> !ge.tensor<[1, 2, 3, 3], ui8>
  ge.output %y : !ge.tensor<[1, 2, 3, 3], ui8>
}

// Windows over one (NCW) and three (NCDHW) spatial dimensions: one kernel, stride and dilation per axis, a begin and an end pad.
// CHECK-LABEL: ge.graph @windows_nd {
// CHECK-NEXT:    %line = ge.data 0 "line" : !ge.tensor<[-1, 4, 10], f32>
// CHECK-NEXT:    %w = ge.data 1 "w" : !ge.tensor<[6, 2, 3], f32>
// CHECK-NEXT:    %volume = ge.data 2 "volume" : !ge.tensor<[1, 2, 4, 6, 5], f32>
// CHECK-NEXT:    %w3 = ge.data 3 "w3" : !ge.tensor<[2, 3, 2, 2, 2], f32>
// CHECK-NEXT:    %conv = ge.conv2d %line, %w strides [2] pads [1, 0] dilations [1] groups 2 : (!ge.tensor<[-1, 4, 10], f32>, !ge.tensor<[6, 2, 3], f32>) -> !ge.tensor<[-1, 6, 5], f32>
// CHECK-NEXT:    %max = ge.max_pool %conv kernel [2] strides [1] pads [0, 1] dilations [1] : !ge.tensor<[-1, 6, 5], f32> -> !ge.tensor<[-1, 6, 5], f32>
// CHECK-NEXT:    %avg = ge.avg_pool %volume kernel [2, 3, 2] strides [2, 3, 1] pads [0, 0, 1, 1, 0, 1] dilations [1, 1, 1] ceil_mode : !ge.tensor<[1, 2, 4, 6, 5], f32> -> !ge.tensor<[1, 2, 2, 3, 5], f32>
// CHECK-NEXT:    %up = ge.conv_transpose %volume, %w3 strides [1, 1, 1] pads [0, 0, 0, 0, 0, 0] dilations [1, 1, 1] output_padding [0, 0, 0] groups 1 : (!ge.tensor<[1, 2, 4, 6, 5], f32>, !ge.tensor<[2, 3, 2, 2, 2], f32>) -> !ge.tensor<[1, 3, 5, 7, 6], f32>
// CHECK-NEXT:    ge.output %max, %avg, %up : !ge.tensor<[-1, 6, 5], f32>, !ge.tensor<[1, 2, 2, 3, 5], f32>, !ge.tensor<[1, 3, 5, 7, 6], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "windows_nd"}> ({
// GENERIC:         %avg = "ge.avg_pool"(%volume) <{kernel = array<i64: 2, 3, 2>, strides = array<i64: 2, 3, 1>, pads = array<i64: 0, 0, 1, 1, 0, 1>, dilations = array<i64: 1, 1, 1>, ceil_mode}> : (!ge.tensor<[1, 2, 4, 6, 5], f32>) -> !ge.tensor<[1, 2, 2, 3, 5], f32>
ge.graph @windows_nd {
  %line = ge.data 0 "line" : !ge.tensor<[-1, 4, 10], f32>
  %w = ge.data 1 "w" : !ge.tensor<[6, 2, 3], f32>
  %volume = ge.data 2 "volume" : !ge.tensor<[1, 2, 4, 6, 5], f32>
  %w3 = ge.data 3 "w3" : !ge.tensor<[2, 3, 2, 2, 2], f32>
  %conv = ge.conv2d %line, %w strides [2] pads [1, 0] dilations [1] groups 2 : (!ge.tensor<[-1, 4, 10], f32>, !ge.tensor<[6, 2, 3], f32>) -> !ge.tensor<[-1, 6, 5], f32>
  %max = ge.max_pool %conv kernel [2] strides [1] pads [0, 1] dilations [1] : !ge.tensor<[-1, 6, 5], f32> -> !ge.tensor<[-1, 6, 5], f32>
  %avg = ge.avg_pool %volume kernel [2, 3, 2] strides [2, 3, 1] pads [0, 0, 1, 1, 0, 1] dilations [1, 1, 1] ceil_mode : !ge.tensor<[1, 2, 4, 6, 5], f32> -> !ge.tensor<[1, 2, 2, 3, 5], f32>
  %up = ge.conv_transpose %volume, %w3 strides [1, 1, 1] pads [0, 0, 0, 0, 0, 0] dilations [1, 1, 1] output_padding [0, 0, 0] groups 1 : (!ge.tensor<[1, 2, 4, 6, 5], f32>, !ge.tensor<[2, 3, 2, 2, 2], f32>) -> !ge.tensor<[1, 3, 5, 7, 6], f32>
  ge.output %max, %avg, %up : !ge.tensor<[-1, 6, 5], f32>, !ge.tensor<[1, 2, 2, 3, 5], f32>, !ge.tensor<[1, 3, 5, 7, 6], f32>
}

// Batch, layer and softmax normalization keep their input's type.
// CHECK-LABEL: ge.graph @normalization {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:    %p = ge.data 1 "p" : !ge.tensor<[8], f32>
// CHECK-NEXT:    %s = ge.data 2 "s" : !ge.tensor<[4, 4], f32>
// CHECK-NEXT:    %bn = ge.batch_norm %x, %p, %p, %p, %p epsilon 1.000000e-03 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:    %ln = ge.layer_norm %bn, %s axis 2 epsilon 1.000000e-05 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:    %lnb = ge.layer_norm %ln, %s, %s axis -2 epsilon 1.000000e-05 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[4, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:    %sm = ge.softmax %lnb axis 1 : !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:    ge.output %sm : !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:  }
ge.graph @normalization {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 8, 4, 4], f32>
  %p = ge.data 1 "p" : !ge.tensor<[8], f32>
  %s = ge.data 2 "s" : !ge.tensor<[4, 4], f32>
  %bn = ge.batch_norm %x, %p, %p, %p, %p epsilon 1.000000e-03 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
  %ln = ge.layer_norm %bn, %s axis 2 epsilon 1.000000e-05 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
  %lnb = ge.layer_norm %ln, %s, %s axis -2 epsilon 1.000000e-05 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[4, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
  %sm = ge.softmax %lnb axis 1 : !ge.tensor<[-1, 8, 4, 4], f32>
  ge.output %sm : !ge.tensor<[-1, 8, 4, 4], f32>
}

// Data movement: transpose, concat sums, split, slice over ranges, gather, (un)squeeze, pad, flatten.
// CHECK-LABEL: ge.graph @data_movement {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[2, 1:10, 4], f32>
// CHECK-NEXT:    %i = ge.data 1 "i" : !ge.tensor<[-1], i64>
// CHECK-NEXT:    %t = ge.transpose %x perm [2, 0, 1] : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[4, 2, 1:10], f32>
// CHECK-NEXT:    %cat = ge.concat %x, %x axis 1 : (!ge.tensor<[2, 1:10, 4], f32>, !ge.tensor<[2, 1:10, 4], f32>) -> !ge.tensor<[2, 2:20, 4], f32>
// CHECK-NEXT:    %head, %tail = ge.split %x axis 2 sizes [1, -1] : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 1:10, 1], f32>, !ge.tensor<[2, 1:10, 3], f32>
// CHECK-NEXT:    %s = ge.slice %x starts [1, -1] ends [-1, -9223372036854775808] axes [1, 2] steps [1, -2] : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 0:8, 2], f32>
// CHECK-NEXT:    %g = ge.gather %x, %i axis 1 : (!ge.tensor<[2, 1:10, 4], f32>, !ge.tensor<[-1], i64>) -> !ge.tensor<[2, -1, 4], f32>
// CHECK-NEXT:    %sq = ge.squeeze %head axes [-1] : !ge.tensor<[2, 1:10, 1], f32> -> !ge.tensor<[2, 1:10], f32>
// CHECK-NEXT:    %un = ge.unsqueeze %sq axes [0, 3] : !ge.tensor<[2, 1:10], f32> -> !ge.tensor<[1, 2, 1:10, 1], f32>
// CHECK-NEXT:    %p = ge.pad %x pads [0, 1, 0, 0, 2, -1] mode "constant" value 5.000000e-01 : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 4:13, 3], f32>
// CHECK-NEXT:    %r = ge.pad %x pads [0, 0, 1, 0, 0, 1] mode "reflect" value 0.000000e+00 : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 1:10, 6], f32>
// CHECK-NEXT:    %f = ge.flatten %x axis -1 : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2:20, 4], f32>
// CHECK-NEXT:    ge.output %t, %cat, %tail, %s, %g, %un, %p, %r, %f : !ge.tensor<[4, 2, 1:10], f32>, !ge.tensor<[2, 2:20, 4], f32>, !ge.tensor<[2, 1:10, 3], f32>, !ge.tensor<[2, 0:8, 2], f32>, !ge.tensor<[2, -1, 4], f32>, !ge.tensor<[1, 2, 1:10, 1], f32>, !ge.tensor<[2, 4:13, 3], f32>, !ge.tensor<[2, 1:10, 6], f32>, !ge.tensor<[2:20, 4], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "data_movement"}> ({
// GENERIC:         %head, %tail = "ge.split"(%x) <{axis = 2 : i64, sizes = array<i64: 1, -1>}> : (!ge.tensor<[2, 1:10, 4], f32>) -> (!ge.tensor<[2, 1:10, 1], f32>, !ge.tensor<[2, 1:10, 3], f32>)
ge.graph @data_movement {
  %x = ge.data 0 "x" : !ge.tensor<[2, 1:10, 4], f32>
  %i = ge.data 1 "i" : !ge.tensor<[-1], i64>
  %t = ge.transpose %x perm [2, 0, 1] : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[4, 2, 1:10], f32>
  %cat = ge.concat %x, %x axis 1 : (!ge.tensor<[2, 1:10, 4], f32>, !ge.tensor<[2, 1:10, 4], f32>) -> !ge.tensor<[2, 2:20, 4], f32>
  %head, %tail = ge.split %x axis 2 sizes [1, -1] : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 1:10, 1], f32>, !ge.tensor<[2, 1:10, 3], f32>
  %s = ge.slice %x starts [1, -1] ends [-1, -9223372036854775808] axes [1, 2] steps [1, -2] : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 0:8, 2], f32>
  %g = ge.gather %x, %i axis 1 : (!ge.tensor<[2, 1:10, 4], f32>, !ge.tensor<[-1], i64>) -> !ge.tensor<[2, -1, 4], f32>
  %sq = ge.squeeze %head axes [-1] : !ge.tensor<[2, 1:10, 1], f32> -> !ge.tensor<[2, 1:10], f32>
  %un = ge.unsqueeze %sq axes [0, 3] : !ge.tensor<[2, 1:10], f32> -> !ge.tensor<[1, 2, 1:10, 1], f32>
  %p = ge.pad %x pads [0, 1, 0, 0, 2, -1] mode "constant" value 5.000000e-01 : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 4:13, 3], f32>
  %r = ge.pad %x pads [0, 0, 1, 0, 0, 1] mode "reflect" value 0.000000e+00 : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2, 1:10, 6], f32>
  %f = ge.flatten %x axis -1 : !ge.tensor<[2, 1:10, 4], f32> -> !ge.tensor<[2:20, 4], f32>
  ge.output %t, %cat, %tail, %s, %g, %un, %p, %r, %f : !ge.tensor<[4, 2, 1:10], f32>, !ge.tensor<[2, 2:20, 4], f32>, !ge.tensor<[2, 1:10, 3], f32>, !ge.tensor<[2, 0:8, 2], f32>, !ge.tensor<[2, -1, 4], f32>, !ge.tensor<[1, 2, 1:10, 1], f32>, !ge.tensor<[2, 4:13, 3], f32>, !ge.tensor<[2, 1:10, 6], f32>, !ge.tensor<[2:20, 4], f32>
}

// Reductions, keeping or dropping the reduced dimensions (no axes: nothing reduced).
// CHECK-LABEL: ge.graph @reductions {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 8, 3], f32>
// CHECK-NEXT:    %sum = ge.reduce_sum %x axes [1] keep_dims : !ge.tensor<[-1, 8, 3], f32> -> !ge.tensor<[-1, 1, 3], f32>
// CHECK-NEXT:    %mean = ge.reduce_mean %x axes [0, -1] : !ge.tensor<[-1, 8, 3], f32> -> !ge.tensor<[8], f32>
// CHECK-NEXT:    %max = ge.reduce_max %x axes [] : !ge.tensor<[-1, 8, 3], f32> -> !ge.tensor<[-1, 8, 3], f32>
// CHECK-NEXT:    ge.output %sum, %mean, %max : !ge.tensor<[-1, 1, 3], f32>, !ge.tensor<[8], f32>, !ge.tensor<[-1, 8, 3], f32>
// CHECK-NEXT:  }
ge.graph @reductions {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 8, 3], f32>
  %sum = ge.reduce_sum %x axes [1] keep_dims : !ge.tensor<[-1, 8, 3], f32> -> !ge.tensor<[-1, 1, 3], f32>
  %mean = ge.reduce_mean %x axes [0, -1] : !ge.tensor<[-1, 8, 3], f32> -> !ge.tensor<[8], f32>
  %max = ge.reduce_max %x axes [] : !ge.tensor<[-1, 8, 3], f32> -> !ge.tensor<[-1, 8, 3], f32>
  ge.output %sum, %mean, %max : !ge.tensor<[-1, 1, 3], f32>, !ge.tensor<[8], f32>, !ge.tensor<[-1, 8, 3], f32>
}

// Cast changes the element type; shape gives the rank as a vector.
// CHECK-LABEL: ge.graph @conversions {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 1:8, 3], f32>
// CHECK-NEXT:    %i = ge.cast %x to i32 : !ge.tensor<[-1, 1:8, 3], f32> -> !ge.tensor<[-1, 1:8, 3], i32>
// CHECK-NEXT:    %b = ge.cast %i to i1 : !ge.tensor<[-1, 1:8, 3], i32> -> !ge.tensor<[-1, 1:8, 3], i1>
// CHECK-NEXT:    %s = ge.shape %x : !ge.tensor<[-1, 1:8, 3], f32> -> !ge.tensor<[3], i64>
// CHECK-NEXT:    ge.output %b, %s : !ge.tensor<[-1, 1:8, 3], i1>, !ge.tensor<[3], i64>
// CHECK-NEXT:  }
ge.graph @conversions {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 1:8, 3], f32>
  %i = ge.cast %x to i32 : !ge.tensor<[-1, 1:8, 3], f32> -> !ge.tensor<[-1, 1:8, 3], i32>
  %b = ge.cast %i to i1 : !ge.tensor<[-1, 1:8, 3], i32> -> !ge.tensor<[-1, 1:8, 3], i1>
  %s = ge.shape %x : !ge.tensor<[-1, 1:8, 3], f32> -> !ge.tensor<[3], i64>
  ge.output %b, %s : !ge.tensor<[-1, 1:8, 3], i1>, !ge.tensor<[3], i64>
}

// Bilinear resize to a size operand (unknown extents) or to a size property.
// CHECK-LABEL: ge.graph @resize {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
// CHECK-NEXT:    %hw = ge.data 1 "hw" : !ge.tensor<[2], i32>
// CHECK-NEXT:    %dynamic = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
// CHECK-NEXT:    %fixed = ge.resize_bilinear %x size [224, 320] half_pixel_centers : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>) -> !ge.tensor<[1, 3, 224, 320], f32, NCHW>
// CHECK-NEXT:    %plain = ge.resize_bilinear %fixed size [112, 160] : (!ge.tensor<[1, 3, 224, 320], f32, NCHW>) -> !ge.tensor<[1, 3, 112, 160], f32, NCHW>
// CHECK-NEXT:    ge.output %dynamic, %plain : !ge.tensor<[1, 3, -1, -1], f32, NCHW>, !ge.tensor<[1, 3, 112, 160], f32, NCHW>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "resize"}> ({
// GENERIC:         %dynamic = "ge.resize_bilinear"(%x, %hw) <{align_corners}> : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
ge.graph @resize {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i32>
  %dynamic = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
  %fixed = ge.resize_bilinear %x size [224, 320] half_pixel_centers : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>) -> !ge.tensor<[1, 3, 224, 320], f32, NCHW>
  %plain = ge.resize_bilinear %fixed size [112, 160] : (!ge.tensor<[1, 3, 224, 320], f32, NCHW>) -> !ge.tensor<[1, 3, 112, 160], f32, NCHW>
  ge.output %dynamic, %plain : !ge.tensor<[1, 3, -1, -1], f32, NCHW>, !ge.tensor<[1, 3, 112, 160], f32, NCHW>
}

// ONNX Resize: to known sizes (fixed extents), by scales fed at run time, and a crop with its roi;
// grid_sample to the grid's extents.
// CHECK-LABEL: ge.graph @interpolation {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
// CHECK-NEXT:    %scales = ge.data 1 "scales" : !ge.tensor<[4], f32>
// CHECK-NEXT:    %roi = ge.data 2 "roi" : !ge.tensor<[4], f32>
// CHECK-NEXT:    %grid = ge.data 3 "grid" : !ge.tensor<[1, 5, 6, 2], f32>
// CHECK-NEXT:    %hw = ge.const dense<[3, 5]> : tensor<2xi64>
// CHECK-NEXT:    %cubic = ge.resize %x sizes %hw axes [2, 3] mode "cubic" coordinates "half_pixel" cubic_coeff_a -5.000000e-01 exclude_outside : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, 3, 5], f32>
// CHECK-NEXT:    %nearest = ge.resize %x scales %scales axes [0, 1, 2, 3] mode "nearest" coordinates "asymmetric" nearest_mode "floor" : !ge.tensor<[1, 3, 4, 4], f32> scales !ge.tensor<[4], f32> -> !ge.tensor<[-1, -1, -1, -1], f32>
// CHECK-NEXT:    %crop = ge.resize %x roi %roi sizes %hw axes [2, 3] mode "linear" coordinates "tf_crop_and_resize" antialias extrapolation_value 1.000000e+00 : !ge.tensor<[1, 3, 4, 4], f32> roi !ge.tensor<[4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, 3, 5], f32>
// CHECK-NEXT:    %aspect = ge.resize %x sizes %hw axes [2, 3] mode "linear" coordinates "align_corners" keep_aspect_ratio_policy "not_larger" : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, 3, 3], f32>
// CHECK-NEXT:    %sampled = ge.grid_sample %x, %grid mode "cubic" padding "reflection" align_corners : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[1, 5, 6, 2], f32>) -> !ge.tensor<[1, 3, 5, 6], f32>
// GENERIC-LABEL: "ge.graph"() <{sym_name = "interpolation"}> ({
// GENERIC:         %crop = "ge.resize"(%x, %roi, %hw) <{axes = array<i64: 2, 3>, mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", antialias, extrapolation_value = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[4], f32>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 3, 3, 5], f32>
ge.graph @interpolation {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %scales = ge.data 1 "scales" : !ge.tensor<[4], f32>
  %roi = ge.data 2 "roi" : !ge.tensor<[4], f32>
  %grid = ge.data 3 "grid" : !ge.tensor<[1, 5, 6, 2], f32>
  %hw = ge.const dense<[3, 5]> : tensor<2xi64>
  %cubic = ge.resize %x sizes %hw axes [2, 3] mode "cubic" coordinates "half_pixel" cubic_coeff_a -0.5 exclude_outside : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, 3, 5], f32>
  %nearest = ge.resize %x scales %scales axes [0, 1, 2, 3] mode "nearest" coordinates "asymmetric" nearest_mode "floor" : !ge.tensor<[1, 3, 4, 4], f32> scales !ge.tensor<[4], f32> -> !ge.tensor<[-1, -1, -1, -1], f32>
  %crop = ge.resize %x roi %roi sizes %hw axes [2, 3] mode "linear" coordinates "tf_crop_and_resize" antialias extrapolation_value 1.0 : !ge.tensor<[1, 3, 4, 4], f32> roi !ge.tensor<[4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, 3, 5], f32>
  %aspect = ge.resize %x sizes %hw axes [2, 3] mode "linear" coordinates "align_corners" keep_aspect_ratio_policy "not_larger" : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, 3, 3], f32>
  %sampled = ge.grid_sample %x, %grid mode "cubic" padding "reflection" align_corners : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[1, 5, 6, 2], f32>) -> !ge.tensor<[1, 3, 5, 6], f32>
  ge.output %cubic, %nearest, %crop, %aspect, %sampled : !ge.tensor<[1, 3, 3, 5], f32>, !ge.tensor<[-1, -1, -1, -1], f32>, !ge.tensor<[1, 3, 3, 5], f32>, !ge.tensor<[1, 3, 3, 3], f32>, !ge.tensor<[1, 3, 5, 6], f32>
}

// Comparisons and float tests broadcast numpy-style to an i1 result; is_inf names the signs it detects.
// CHECK-LABEL: ge.graph @comparisons {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %y = ge.data 1 "y" : !ge.tensor<[3], f32>
// CHECK-NEXT:    %eq = ge.equal %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %lt = ge.less %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %gt = ge.greater %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %le = ge.less_equal %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %ge = ge.greater_equal %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %nan = ge.is_nan %x : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %inf = ge.is_inf %x detect_positive detect_negative : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    %neg_inf = ge.is_inf %x detect_negative : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:    ge.output %eq, %lt, %gt, %le, %ge, %nan, %inf, %neg_inf : !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "comparisons"}> ({
// GENERIC:         %neg_inf = "ge.is_inf"(%x) <{detect_negative}> : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
ge.graph @comparisons {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
  %y = ge.data 1 "y" : !ge.tensor<[3], f32>
  %eq = ge.equal %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
  %lt = ge.less %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
  %gt = ge.greater %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
  %le = ge.less_equal %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
  %ge = ge.greater_equal %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
  %nan = ge.is_nan %x : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
  %inf = ge.is_inf %x detect_positive detect_negative : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
  %neg_inf = ge.is_inf %x detect_negative : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], i1>
  ge.output %eq, %lt, %gt, %le, %ge, %nan, %inf, %neg_inf : !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>, !ge.tensor<[-1, 3], i1>
}

// Logic ops on i1, bitwise ops and shifts on integers, select broadcasting all three operands.
// CHECK-LABEL: ge.graph @logic_and_bits {
// CHECK-NEXT:    %a = ge.data 0 "a" : !ge.tensor<[2, 1], i1>
// CHECK-NEXT:    %b = ge.data 1 "b" : !ge.tensor<[3], i1>
// CHECK-NEXT:    %n = ge.data 2 "n" : !ge.tensor<[-1, 3], ui8>
// CHECK-NEXT:    %x = ge.data 3 "x" : !ge.tensor<[3], f32>
// CHECK-NEXT:    %and = ge.logical_and %a, %b : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
// CHECK-NEXT:    %or = ge.logical_or %a, %b : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
// CHECK-NEXT:    %xor = ge.logical_xor %a, %b : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
// CHECK-NEXT:    %not = ge.logical_not %b : !ge.tensor<[3], i1>
// CHECK-NEXT:    %band = ge.bitwise_and %n, %n : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
// CHECK-NEXT:    %bor = ge.bitwise_or %n, %n : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
// CHECK-NEXT:    %bxor = ge.bitwise_xor %n, %n : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
// CHECK-NEXT:    %bnot = ge.bitwise_not %n : !ge.tensor<[-1, 3], ui8>
// CHECK-NEXT:    %shl = ge.bit_shift %n, %n direction "left" : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
// CHECK-NEXT:    %picked = ge.select %a, %x, %x : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], f32>
// CHECK-NEXT:    ge.output %and, %or, %xor, %not, %band, %bor, %bxor, %bnot, %shl, %picked : !ge.tensor<[2, 3], i1>, !ge.tensor<[2, 3], i1>, !ge.tensor<[2, 3], i1>, !ge.tensor<[3], i1>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[2, 3], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "logic_and_bits"}> ({
// GENERIC:         %shl = "ge.bit_shift"(%n, %n) <{direction = "left"}> : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
ge.graph @logic_and_bits {
  %a = ge.data 0 "a" : !ge.tensor<[2, 1], i1>
  %b = ge.data 1 "b" : !ge.tensor<[3], i1>
  %n = ge.data 2 "n" : !ge.tensor<[-1, 3], ui8>
  %x = ge.data 3 "x" : !ge.tensor<[3], f32>
  %and = ge.logical_and %a, %b : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
  %or = ge.logical_or %a, %b : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
  %xor = ge.logical_xor %a, %b : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
  %not = ge.logical_not %b : !ge.tensor<[3], i1>
  %band = ge.bitwise_and %n, %n : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
  %bor = ge.bitwise_or %n, %n : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
  %bxor = ge.bitwise_xor %n, %n : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
  %bnot = ge.bitwise_not %n : !ge.tensor<[-1, 3], ui8>
  %shl = ge.bit_shift %n, %n direction "left" : (!ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>) -> !ge.tensor<[-1, 3], ui8>
  %picked = ge.select %a, %x, %x : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], f32>
  ge.output %and, %or, %xor, %not, %band, %bor, %bxor, %bnot, %shl, %picked : !ge.tensor<[2, 3], i1>, !ge.tensor<[2, 3], i1>, !ge.tensor<[2, 3], i1>, !ge.tensor<[3], i1>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[-1, 3], ui8>, !ge.tensor<[2, 3], f32>
}

// Element-wise math: mod (floored, or fmod), sign-aware ops of any number type, float functions.
// CHECK-LABEL: ge.graph @math_functions {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %i = ge.data 1 "i" : !ge.tensor<[3], i32>
// CHECK-NEXT:    %mod = ge.mod %i, %i : (!ge.tensor<[3], i32>, !ge.tensor<[3], i32>) -> !ge.tensor<[3], i32>
// CHECK-NEXT:    %fmod = ge.mod %x, %x fmod : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %neg = ge.neg %i : !ge.tensor<[3], i32>
// CHECK-NEXT:    %abs = ge.abs %i : !ge.tensor<[3], i32>
// CHECK-NEXT:    %sign = ge.sign %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %reciprocal = ge.reciprocal %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %floor = ge.floor %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %ceil = ge.ceil %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %round = ge.round %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %sin = ge.sin %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %cos = ge.cos %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %tan = ge.tan %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %asin = ge.asin %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %acos = ge.acos %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %atan = ge.atan %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %sinh = ge.sinh %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %cosh = ge.cosh %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %asinh = ge.asinh %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %acosh = ge.acosh %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %atanh = ge.atanh %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    ge.output %mod, %fmod, %neg, %abs, %sign, %reciprocal, %floor, %ceil, %round, %sin, %cos, %tan, %asin, %acos, %atan, %sinh, %cosh, %asinh, %acosh, %atanh : !ge.tensor<[3], i32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[3], i32>, !ge.tensor<[3], i32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "math_functions"}> ({
// GENERIC:         %fmod = "ge.mod"(%x, %x) <{fmod}> : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], f32>
ge.graph @math_functions {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
  %i = ge.data 1 "i" : !ge.tensor<[3], i32>
  %mod = ge.mod %i, %i : (!ge.tensor<[3], i32>, !ge.tensor<[3], i32>) -> !ge.tensor<[3], i32>
  %fmod = ge.mod %x, %x fmod : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], f32>
  %neg = ge.neg %i : !ge.tensor<[3], i32>
  %abs = ge.abs %i : !ge.tensor<[3], i32>
  %sign = ge.sign %x : !ge.tensor<[-1, 3], f32>
  %reciprocal = ge.reciprocal %x : !ge.tensor<[-1, 3], f32>
  %floor = ge.floor %x : !ge.tensor<[-1, 3], f32>
  %ceil = ge.ceil %x : !ge.tensor<[-1, 3], f32>
  %round = ge.round %x : !ge.tensor<[-1, 3], f32>
  %sin = ge.sin %x : !ge.tensor<[-1, 3], f32>
  %cos = ge.cos %x : !ge.tensor<[-1, 3], f32>
  %tan = ge.tan %x : !ge.tensor<[-1, 3], f32>
  %asin = ge.asin %x : !ge.tensor<[-1, 3], f32>
  %acos = ge.acos %x : !ge.tensor<[-1, 3], f32>
  %atan = ge.atan %x : !ge.tensor<[-1, 3], f32>
  %sinh = ge.sinh %x : !ge.tensor<[-1, 3], f32>
  %cosh = ge.cosh %x : !ge.tensor<[-1, 3], f32>
  %asinh = ge.asinh %x : !ge.tensor<[-1, 3], f32>
  %acosh = ge.acosh %x : !ge.tensor<[-1, 3], f32>
  %atanh = ge.atanh %x : !ge.tensor<[-1, 3], f32>
  ge.output %mod, %fmod, %neg, %abs, %sign, %reciprocal, %floor, %ceil, %round, %sin, %cos, %tan, %asin, %acos, %atan, %sinh, %cosh, %asinh, %acosh, %atanh : !ge.tensor<[3], i32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[3], i32>, !ge.tensor<[3], i32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>
}

// Activations keep their operand's type; parameters print as f64 properties; prelu broadcasts its slope.
// CHECK-LABEL: ge.graph @activations {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %s = ge.data 1 "s" : !ge.tensor<[3], f32>
// CHECK-NEXT:    %leaky = ge.leaky_relu %x alpha 1.000000e-01 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %elu = ge.elu %x alpha 1.000000e+00 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %celu = ge.celu %x alpha 2.000000e+00 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %thresholded = ge.thresholded_relu %x alpha 5.000000e-01 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %selu = ge.selu %x alpha 1.500000e+00 gamma 2.000000e+00 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %hard_sigmoid = ge.hard_sigmoid %x alpha 2.000000e-01 beta 5.000000e-01 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %shrink = ge.shrink %x bias 0.000000e+00 lambd 5.000000e-01 : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %hard_swish = ge.hard_swish %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %softplus = ge.softplus %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %softsign = ge.softsign %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %mish = ge.mish %x : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %prelu = ge.prelu %x, %s : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    ge.output %leaky, %elu, %celu, %thresholded, %selu, %hard_sigmoid, %shrink, %hard_swish, %softplus, %softsign, %mish, %prelu : !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "activations"}> ({
// GENERIC:         %selu = "ge.selu"(%x) <{alpha = 1.500000e+00 : f64, gamma = 2.000000e+00 : f64}> : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], f32>
ge.graph @activations {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
  %s = ge.data 1 "s" : !ge.tensor<[3], f32>
  %leaky = ge.leaky_relu %x alpha 1.000000e-01 : !ge.tensor<[-1, 3], f32>
  %elu = ge.elu %x alpha 1.000000e+00 : !ge.tensor<[-1, 3], f32>
  %celu = ge.celu %x alpha 2.000000e+00 : !ge.tensor<[-1, 3], f32>
  %thresholded = ge.thresholded_relu %x alpha 5.000000e-01 : !ge.tensor<[-1, 3], f32>
  %selu = ge.selu %x alpha 1.500000e+00 gamma 2.000000e+00 : !ge.tensor<[-1, 3], f32>
  %hard_sigmoid = ge.hard_sigmoid %x alpha 2.000000e-01 beta 5.000000e-01 : !ge.tensor<[-1, 3], f32>
  %shrink = ge.shrink %x bias 0.000000e+00 lambd 5.000000e-01 : !ge.tensor<[-1, 3], f32>
  %hard_swish = ge.hard_swish %x : !ge.tensor<[-1, 3], f32>
  %softplus = ge.softplus %x : !ge.tensor<[-1, 3], f32>
  %softsign = ge.softsign %x : !ge.tensor<[-1, 3], f32>
  %mish = ge.mish %x : !ge.tensor<[-1, 3], f32>
  %prelu = ge.prelu %x, %s : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
  ge.output %leaky, %elu, %celu, %thresholded, %selu, %hard_sigmoid, %shrink, %hard_swish, %softplus, %softsign, %mish, %prelu : !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], f32>
}

// Trilu keeps a triangle of the last two dimensions from diagonal k; without upper, the lower one.
// CHECK-LABEL: ge.graph @triangles {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 4, 5], f32>
// CHECK-NEXT:    %upper = ge.trilu %x k 1 upper : !ge.tensor<[-1, 4, 5], f32>
// CHECK-NEXT:    %lower = ge.trilu %x k -2 : !ge.tensor<[-1, 4, 5], f32>
// CHECK-NEXT:    ge.output %upper, %lower : !ge.tensor<[-1, 4, 5], f32>, !ge.tensor<[-1, 4, 5], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "triangles"}> ({
// GENERIC:         %upper = "ge.trilu"(%x) <{k = 1 : i64, upper}> : (!ge.tensor<[-1, 4, 5], f32>) -> !ge.tensor<[-1, 4, 5], f32>
ge.graph @triangles {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4, 5], f32>
  %upper = ge.trilu %x k 1 upper : !ge.tensor<[-1, 4, 5], f32>
  %lower = ge.trilu %x k -2 : !ge.tensor<[-1, 4, 5], f32>
  ge.output %upper, %lower : !ge.tensor<[-1, 4, 5], f32>, !ge.tensor<[-1, 4, 5], f32>
}


// Expand broadcasts against a static shape, tile repeats, log-softmax keeps the type.
// CHECK-LABEL: ge.graph @structure {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 1, 4], f32>
// CHECK-NEXT:    %e = ge.expand %x shape [2, 1, 3, 1] : !ge.tensor<[-1, 1, 4], f32> -> !ge.tensor<[2, -1, 3, 4], f32>
// CHECK-NEXT:    %t = ge.tile %x repeats [1, 3, 2] : !ge.tensor<[-1, 1, 4], f32> -> !ge.tensor<[-1, 3, 8], f32>
// CHECK-NEXT:    %l = ge.log_softmax %x axis -1 : !ge.tensor<[-1, 1, 4], f32>
// CHECK-NEXT:    ge.output %e, %t, %l : !ge.tensor<[2, -1, 3, 4], f32>, !ge.tensor<[-1, 3, 8], f32>, !ge.tensor<[-1, 1, 4], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "structure"}> ({
// GENERIC:         %t = "ge.tile"(%x) <{repeats = array<i64: 1, 3, 2>}> : (!ge.tensor<[-1, 1, 4], f32>) -> !ge.tensor<[-1, 3, 8], f32>
ge.graph @structure {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 1, 4], f32>
  %e = ge.expand %x shape [2, 1, 3, 1] : !ge.tensor<[-1, 1, 4], f32> -> !ge.tensor<[2, -1, 3, 4], f32>
  %t = ge.tile %x repeats [1, 3, 2] : !ge.tensor<[-1, 1, 4], f32> -> !ge.tensor<[-1, 3, 8], f32>
  %l = ge.log_softmax %x axis -1 : !ge.tensor<[-1, 1, 4], f32>
  ge.output %e, %t, %l : !ge.tensor<[2, -1, 3, 4], f32>, !ge.tensor<[-1, 3, 8], f32>, !ge.tensor<[-1, 1, 4], f32>
}

// The reductions beyond sum, mean and max, with and without keep_dims.
// CHECK-LABEL: ge.graph @more_reductions {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    %p = ge.reduce_prod %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
// CHECK-NEXT:    %m = ge.reduce_min %x axes [0] keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[1, 8], f32>
// CHECK-NEXT:    %a = ge.reduce_l1 %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
// CHECK-NEXT:    %b = ge.reduce_l2 %x axes [-1] keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], f32>
// CHECK-NEXT:    %s = ge.reduce_sum_square %x axes [0, 1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[], f32>
// CHECK-NEXT:    %ls = ge.reduce_log_sum %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
// CHECK-NEXT:    %lse = ge.reduce_log_sum_exp %x axes [] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    ge.output %p, %m, %a, %b, %s, %ls, %lse : !ge.tensor<[-1], f32>, !ge.tensor<[1, 8], f32>, !ge.tensor<[-1], f32>, !ge.tensor<[-1, 1], f32>, !ge.tensor<[], f32>, !ge.tensor<[-1], f32>, !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "more_reductions"}> ({
// GENERIC:         %b = "ge.reduce_l2"(%x) <{axes = array<i64: -1>, keep_dims}> : (!ge.tensor<[-1, 8], f32>) -> !ge.tensor<[-1, 1], f32>
ge.graph @more_reductions {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 8], f32>
  %p = ge.reduce_prod %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
  %m = ge.reduce_min %x axes [0] keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[1, 8], f32>
  %a = ge.reduce_l1 %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
  %b = ge.reduce_l2 %x axes [-1] keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], f32>
  %s = ge.reduce_sum_square %x axes [0, 1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[], f32>
  %ls = ge.reduce_log_sum %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
  %lse = ge.reduce_log_sum_exp %x axes [] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 8], f32>
  ge.output %p, %m, %a, %b, %s, %ls, %lse : !ge.tensor<[-1], f32>, !ge.tensor<[1, 8], f32>, !ge.tensor<[-1], f32>, !ge.tensor<[-1, 1], f32>, !ge.tensor<[], f32>, !ge.tensor<[-1], f32>, !ge.tensor<[-1, 8], f32>
}

// Arg-reductions give i64 positions; top-k gives the values and their positions.
// CHECK-LABEL: ge.graph @selection {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    %i = ge.arg_max %x axis 1 keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], i64>
// CHECK-NEXT:    %j = ge.arg_min %x axis 0 select_last_index : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[8], i64>
// CHECK-NEXT:    %v, %k = ge.top_k %x k 3 axis -1 largest sorted : !ge.tensor<[-1, 8], f32> -> (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], i64>)
// CHECK-NEXT:    %w, %n = ge.top_k %x k 2 axis 0 : !ge.tensor<[-1, 8], f32> -> (!ge.tensor<[2, 8], f32>, !ge.tensor<[2, 8], i64>)
// CHECK-NEXT:    ge.output %i, %j, %v, %k, %w, %n : !ge.tensor<[-1, 1], i64>, !ge.tensor<[8], i64>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], i64>, !ge.tensor<[2, 8], f32>, !ge.tensor<[2, 8], i64>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "selection"}> ({
// GENERIC:         %j = "ge.arg_min"(%x) <{axis = 0 : i64, select_last_index}> : (!ge.tensor<[-1, 8], f32>) -> !ge.tensor<[8], i64>
// GENERIC:         %v, %k = "ge.top_k"(%x) <{k = 3 : i64, axis = -1 : i64, largest, sorted}> : (!ge.tensor<[-1, 8], f32>) -> (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], i64>)
// GENERIC:         %w, %n = "ge.top_k"(%x) <{k = 2 : i64, axis = 0 : i64}> : (!ge.tensor<[-1, 8], f32>) -> (!ge.tensor<[2, 8], f32>, !ge.tensor<[2, 8], i64>)
ge.graph @selection {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 8], f32>
  %i = ge.arg_max %x axis 1 keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], i64>
  %j = ge.arg_min %x axis 0 select_last_index : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[8], i64>
  %v, %k = ge.top_k %x k 3 axis -1 largest sorted : !ge.tensor<[-1, 8], f32> -> (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], i64>)
  %w, %n = ge.top_k %x k 2 axis 0 : !ge.tensor<[-1, 8], f32> -> (!ge.tensor<[2, 8], f32>, !ge.tensor<[2, 8], i64>)
  ge.output %i, %j, %v, %k, %w, %n : !ge.tensor<[-1, 1], i64>, !ge.tensor<[8], i64>, !ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], i64>, !ge.tensor<[2, 8], f32>, !ge.tensor<[2, 8], i64>
}

// Instance normalization with per-channel parameters; LRN across channels.
// CHECK-LABEL: ge.graph @normalizations {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3, 8, 8], f32>
// CHECK-NEXT:    %s = ge.const dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %y = ge.instance_norm %x, %s, %s epsilon 1.000000e-05 : (!ge.tensor<[-1, 3, 8, 8], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
// CHECK-NEXT:    %z = ge.lrn %y size 3 alpha 1.000000e-04 beta 7.500000e-01 bias 1.000000e+00 : !ge.tensor<[-1, 3, 8, 8], f32>
// CHECK-NEXT:    ge.output %z : !ge.tensor<[-1, 3, 8, 8], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "normalizations"}> ({
// GENERIC:         %z = "ge.lrn"(%y) <{size = 3 : i64, alpha = 1.000000e-04 : f64, beta = 7.500000e-01 : f64, bias = 1.000000e+00 : f64}> : (!ge.tensor<[-1, 3, 8, 8], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
ge.graph @normalizations {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3, 8, 8], f32>
  %s = ge.const dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = ge.instance_norm %x, %s, %s epsilon 1.0e-05 : (!ge.tensor<[-1, 3, 8, 8], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
  %z = ge.lrn %y size 3 alpha 1.0e-04 beta 7.5e-01 bias 1.0 : !ge.tensor<[-1, 3, 8, 8], f32>
  ge.output %z : !ge.tensor<[-1, 3, 8, 8], f32>
}

// A transposed convolution with output padding; a grouped one with a bias whose pads extend (-1) the output.
// CHECK-LABEL: ge.graph @conv_transpose {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 8, 4, 4], f32>
// CHECK-NEXT:    %w = ge.data 1 "w" : !ge.tensor<[8, 3, 3, 3], f32>
// CHECK-NEXT:    %b = ge.data 2 "b" : !ge.tensor<[6], f32>
// CHECK-NEXT:    %y = ge.conv_transpose %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] output_padding [1, 1] groups 1 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8, 3, 3, 3], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
// CHECK-NEXT:    %z = ge.conv_transpose %x, %w, %b strides [1, 2] pads [0, -1, 2, 0] dilations [2, 1] output_padding [0, 0] groups 2 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8, 3, 3, 3], f32>, !ge.tensor<[6], f32>) -> !ge.tensor<[-1, 6, 9, 7], f32>
// CHECK-NEXT:    ge.output %y, %z : !ge.tensor<[-1, 3, 8, 8], f32>, !ge.tensor<[-1, 6, 9, 7], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "conv_transpose"}> ({
// GENERIC:         %z = "ge.conv_transpose"(%x, %w, %b) <{strides = array<i64: 1, 2>, pads = array<i64: 0, -1, 2, 0>, dilations = array<i64: 2, 1>, output_padding = array<i64: 0, 0>, groups = 2 : i64}> : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8, 3, 3, 3], f32>, !ge.tensor<[6], f32>) -> !ge.tensor<[-1, 6, 9, 7], f32>
ge.graph @conv_transpose {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 8, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[8, 3, 3, 3], f32>
  %b = ge.data 2 "b" : !ge.tensor<[6], f32>
  %y = ge.conv_transpose %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] output_padding [1, 1] groups 1 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8, 3, 3, 3], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
  %z = ge.conv_transpose %x, %w, %b strides [1, 2] pads [0, -1, 2, 0] dilations [2, 1] output_padding [0, 0] groups 2 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8, 3, 3, 3], f32>, !ge.tensor<[6], f32>) -> !ge.tensor<[-1, 6, 9, 7], f32>
  ge.output %y, %z : !ge.tensor<[-1, 3, 8, 8], f32>, !ge.tensor<[-1, 6, 9, 7], f32>
}

// GENERIC-LABEL: "ge.graph"() <{sym_name = "trilu"}> ({
// GENERIC:         %u = "ge.trilu"(%x) <{k = 1 : i64, upper}> : (!ge.tensor<[-1, 4, 5], f32>) -> !ge.tensor<[-1, 4, 5], f32>
ge.graph @trilu {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4, 5], f32>
  %u = ge.trilu %x k 1 upper : !ge.tensor<[-1, 4, 5], f32>
  %l = ge.trilu %u k -2 : !ge.tensor<[-1, 4, 5], f32>
  ge.output %l : !ge.tensor<[-1, 4, 5], f32>
}

// Running sums: inclusive, exclusive, and from the end.
// CHECK-LABEL: ge.graph @cum_sum {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    %a = ge.cum_sum %x axis 1 : !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    %b = ge.cum_sum %a axis 0 exclusive reverse : !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:    ge.output %b : !ge.tensor<[-1, 8], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "cum_sum"}> ({
// GENERIC:         %b = "ge.cum_sum"(%a) <{axis = 0 : i64, exclusive, reverse}> : (!ge.tensor<[-1, 8], f32>) -> !ge.tensor<[-1, 8], f32>
ge.graph @cum_sum {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 8], f32>
  %a = ge.cum_sum %x axis 1 : !ge.tensor<[-1, 8], f32>
  %b = ge.cum_sum %a axis 0 exclusive reverse : !ge.tensor<[-1, 8], f32>
  ge.output %b : !ge.tensor<[-1, 8], f32>
}

// Bit casts between types of one width: float to int, unsigned to signed, a bool to its byte.
// CHECK-LABEL: ge.graph @bitcast {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
// CHECK-NEXT:    %flag = ge.data 1 "flag" : !ge.tensor<[4], i1>
// CHECK-NEXT:    %bits = ge.bitcast %x to ui32 : !ge.tensor<[-1, 3], f32> -> !ge.tensor<[-1, 3], ui32>
// CHECK-NEXT:    %signed = ge.bitcast %bits to i32 : !ge.tensor<[-1, 3], ui32> -> !ge.tensor<[-1, 3], i32>
// CHECK-NEXT:    %byte = ge.bitcast %flag to ui8 : !ge.tensor<[4], i1> -> !ge.tensor<[4], ui8>
// CHECK-NEXT:    ge.output %signed, %byte : !ge.tensor<[-1, 3], i32>, !ge.tensor<[4], ui8>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "bitcast"}> ({
// GENERIC:         %bits = "ge.bitcast"(%x) <{to = ui32}> : (!ge.tensor<[-1, 3], f32>) -> !ge.tensor<[-1, 3], ui32>
ge.graph @bitcast {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 3], f32>
  %flag = ge.data 1 "flag" : !ge.tensor<[4], i1>
  %bits = ge.bitcast %x to ui32 : !ge.tensor<[-1, 3], f32> -> !ge.tensor<[-1, 3], ui32>
  %signed = ge.bitcast %bits to i32 : !ge.tensor<[-1, 3], ui32> -> !ge.tensor<[-1, 3], i32>
  %byte = ge.bitcast %flag to ui8 : !ge.tensor<[4], i1> -> !ge.tensor<[4], ui8>
  ge.output %signed, %byte : !ge.tensor<[-1, 3], i32>, !ge.tensor<[4], ui8>
}

// Running products, and a scatter that adds its updates along axis 1.
// CHECK-LABEL: ge.graph @cum_prod_and_scatter {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[-1, 5], f32>
// CHECK-NEXT:    %i = ge.data 1 "i" : !ge.tensor<[-1, 2], i64>
// CHECK-NEXT:    %p = ge.cum_prod %x axis 0 exclusive reverse : !ge.tensor<[-1, 5], f32>
// CHECK-NEXT:    %u = ge.slice %p
// CHECK-NEXT:    %y = ge.scatter_elements %p, %i, %u axis 1 reduction "add" : (!ge.tensor<[-1, 5], f32>, !ge.tensor<[-1, 2], i64>, !ge.tensor<[-1, 2], f32>) -> !ge.tensor<[-1, 5], f32>
// CHECK-NEXT:    ge.output %y : !ge.tensor<[-1, 5], f32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "ge.graph"() <{sym_name = "cum_prod_and_scatter"}> ({
// GENERIC:         %p = "ge.cum_prod"(%x) <{axis = 0 : i64, exclusive, reverse}> : (!ge.tensor<[-1, 5], f32>) -> !ge.tensor<[-1, 5], f32>
// GENERIC:         %y = "ge.scatter_elements"(%p, %i, %u) <{axis = 1 : i64, reduction = "add"}> : (!ge.tensor<[-1, 5], f32>, !ge.tensor<[-1, 2], i64>, !ge.tensor<[-1, 2], f32>) -> !ge.tensor<[-1, 5], f32>
ge.graph @cum_prod_and_scatter {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 5], f32>
  %i = ge.data 1 "i" : !ge.tensor<[-1, 2], i64>
  %p = ge.cum_prod %x axis 0 exclusive reverse : !ge.tensor<[-1, 5], f32>
  %u = ge.slice %p starts [0] ends [2] axes [1] steps [1] : !ge.tensor<[-1, 5], f32> -> !ge.tensor<[-1, 2], f32>
  %y = ge.scatter_elements %p, %i, %u axis 1 reduction "add" : (!ge.tensor<[-1, 5], f32>, !ge.tensor<[-1, 2], i64>, !ge.tensor<[-1, 2], f32>) -> !ge.tensor<[-1, 5], f32>
  ge.output %y : !ge.tensor<[-1, 5], f32>
}
