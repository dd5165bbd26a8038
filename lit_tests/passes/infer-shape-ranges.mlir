// infer-shape-ranges re-runs every op's shape function on its operands' current types and
// narrows each result type to what they allow (intersected with the declared type); small
// integer tensors carry their values' ranges, so a size computed from a shape folds.
// RUN: dfir-opt %s -p infer-shape-ranges | filecheck %s
// RUN: dfir-opt %s -p infer-shape-ranges | dfir-opt -p infer-shape-ranges | filecheck %s

// Ranges flow through matmul, broadcasting add, relu and a reshape with -1.
// CHECK-LABEL: ge.graph @mlp_chain
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
// CHECK-NEXT:    %w = ge.const
// CHECK-NEXT:    %b = ge.const
// CHECK-NEXT:    %h = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[1:8, 2], f32>
// CHECK-NEXT:    %a = ge.add %h, %b : (!ge.tensor<[1:8, 2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[1:8, 2], f32>
// CHECK-NEXT:    %r = ge.relu %a : !ge.tensor<[1:8, 2], f32>
// CHECK-NEXT:    %f = ge.reshape %r to [-1] : !ge.tensor<[1:8, 2], f32> -> !ge.tensor<[2:16], f32>
// CHECK-NEXT:    ge.output %f : !ge.tensor<[2:16], f32>
ge.graph @mlp_chain {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  %w = ge.const dense<1.0> : tensor<4x2xf32>
  %b = ge.const dense<0.5> : tensor<2xf32>
  %h = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  %a = ge.add %h, %b : (!ge.tensor<[-1, 2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[-1, 2], f32>
  %r = ge.relu %a : !ge.tensor<[-1, 2], f32>
  %f = ge.reshape %r to [-1] : !ge.tensor<[-1, 2], f32> -> !ge.tensor<[-1], f32>
  ge.output %f : !ge.tensor<[-1], f32>
}

// A declared type narrower than the inferred one is kept (intersected), and what follows sees it.
// CHECK-LABEL: ge.graph @declared_narrower
// CHECK:         %h = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[2:4, 2], f32>
// CHECK-NEXT:    %s = ge.sub %h, %h : (!ge.tensor<[2:4, 2], f32>, !ge.tensor<[2:4, 2], f32>) -> !ge.tensor<[2:4, 2], f32>
ge.graph @declared_narrower {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  %w = ge.const dense<1.0> : tensor<4x2xf32>
  %h = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[2:4, 2], f32>
  %s = ge.sub %h, %h : (!ge.tensor<[2:4, 2], f32>, !ge.tensor<[2:4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  ge.output %s : !ge.tensor<[-1, 2], f32>
}

// Convolution and pooling output sizes are computed on both ends of a range; concat sums.
// CHECK-LABEL: ge.graph @conv_pool_concat
// CHECK:         %c = ge.conv2d %x, %k strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!ge.tensor<[1, 3, 16:64, 32], f32, NCHW>, !ge.tensor<[4, 3, 3, 3], f32>) -> !ge.tensor<[1, 4, 8:32, 16], f32, NCHW>
// CHECK-NEXT:    %p = ge.max_pool %c kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 4, 8:32, 16], f32, NCHW> -> !ge.tensor<[1, 4, 4:16, 8], f32, NCHW>
// CHECK-NEXT:    %j = ge.concat %p, %p axis 2 : (!ge.tensor<[1, 4, 4:16, 8], f32, NCHW>, !ge.tensor<[1, 4, 4:16, 8], f32, NCHW>) -> !ge.tensor<[1, 4, 8:32, 8], f32, NCHW>
ge.graph @conv_pool_concat {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 16:64, 32], f32, NCHW>
  %k = ge.const dense<0.1> : tensor<4x3x3x3xf32>
  %c = ge.conv2d %x, %k strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!ge.tensor<[1, 3, 16:64, 32], f32, NCHW>, !ge.tensor<[4, 3, 3, 3], f32>) -> !ge.tensor<[1, 4, -1, 16], f32, NCHW>
  %p = ge.max_pool %c kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 4, -1, 16], f32, NCHW> -> !ge.tensor<[1, 4, -1, 8], f32, NCHW>
  %j = ge.concat %p, %p axis 2 : (!ge.tensor<[1, 4, -1, 8], f32, NCHW>, !ge.tensor<[1, 4, -1, 8], f32, NCHW>) -> !ge.tensor<[1, 4, -1, 8], f32, NCHW>
  ge.output %j : !ge.tensor<[1, 4, -1, 8], f32, NCHW>
}

// The seed's resize, sized by the input's own height and width (shape, then slice): the size's
// values are ranges, so the output is bounded by the input's ranges.
// CHECK-LABEL: ge.graph @resize_to_input_size
// CHECK:         %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
// CHECK-NEXT:    ge.output %y : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
ge.graph @resize_to_input_size {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
  %s = ge.shape %x : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW> -> !ge.tensor<[4], i64>
  %hw = ge.slice %s starts [2] ends [4] axes [0] steps [1] : !ge.tensor<[4], i64> -> !ge.tensor<[2], i64>
  %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32, NCHW>
}

// The seed's resize exactly: the size is a graph input, whose values nothing bounds.
// CHECK-LABEL: ge.graph @resize_to_fed_size
// CHECK:         %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
ge.graph @resize_to_fed_size {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i32>
  %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32, NCHW>
}

// Shape arithmetic folds: height x 3 / 2 and width x 4 / 2 bound the output at 2592 x 3456, the
// largest output the seed's ge.outputMaxSize (107495424 = 1 x 3 x 2592 x 3456 x 4) allows.
// CHECK-LABEL: ge.graph @resize_scaled
// CHECK:         %y = ge.resize_bilinear %x, %hw2 align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 3, 1:2592, 2:3456], f32, NCHW>
ge.graph @resize_scaled {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>
  %s = ge.shape %x : !ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW> -> !ge.tensor<[4], i64>
  %hw = ge.slice %s starts [2] ends [4] axes [0] steps [1] : !ge.tensor<[4], i64> -> !ge.tensor<[2], i64>
  %scale = ge.const dense<[3, 4]> : tensor<2xi64>
  %big = ge.mul %hw, %scale : (!ge.tensor<[2], i64>, !ge.tensor<[2], i64>) -> !ge.tensor<[2], i64>
  %two = ge.const dense<2> : tensor<i64>
  %hw2 = ge.div %big, %two : (!ge.tensor<[2], i64>, !ge.tensor<[], i64>) -> !ge.tensor<[2], i64>
  %y = ge.resize_bilinear %x, %hw2 align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32, NCHW>, !ge.tensor<[2], i64>) -> !ge.tensor<[1, 3, -1, -1], f32, NCHW>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32, NCHW>
}

// Select broadcasts its condition and both values together: a size-1 condition dimension takes
// the values' range, and a comparison's i1 result carries its operands' broadcast range.
// CHECK-LABEL: ge.graph @select_broadcasts_three_ways
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[1:8, 1, 4], f32>
// CHECK-NEXT:    %y = ge.data 1 "y" : !ge.tensor<[3, 1], f32>
// CHECK-NEXT:    %c = ge.data 2 "c" : !ge.tensor<[2:5, 1, 1], i1>
// CHECK-NEXT:    %lt = ge.less %x, %y : (!ge.tensor<[1:8, 1, 4], f32>, !ge.tensor<[3, 1], f32>) -> !ge.tensor<[1:8, 3, 4], i1>
// CHECK-NEXT:    %z = ge.select %c, %x, %y : (!ge.tensor<[2:5, 1, 1], i1>, !ge.tensor<[1:8, 1, 4], f32>, !ge.tensor<[3, 1], f32>) -> !ge.tensor<[2:5, 3, 4], f32>
// CHECK-NEXT:    %w = ge.select %lt, %z, %x : (!ge.tensor<[1:8, 3, 4], i1>, !ge.tensor<[2:5, 3, 4], f32>, !ge.tensor<[1:8, 1, 4], f32>) -> !ge.tensor<[2:5, 3, 4], f32>
ge.graph @select_broadcasts_three_ways {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 1, 4], f32>
  %y = ge.data 1 "y" : !ge.tensor<[3, 1], f32>
  %c = ge.data 2 "c" : !ge.tensor<[2:5, 1, 1], i1>
  %lt = ge.less %x, %y : (!ge.tensor<[1:8, 1, 4], f32>, !ge.tensor<[3, 1], f32>) -> !ge.tensor<[-1, 3, 4], i1>
  %z = ge.select %c, %x, %y : (!ge.tensor<[2:5, 1, 1], i1>, !ge.tensor<[1:8, 1, 4], f32>, !ge.tensor<[3, 1], f32>) -> !ge.tensor<[-1, 3, 4], f32>
  %w = ge.select %lt, %z, %x : (!ge.tensor<[-1, 3, 4], i1>, !ge.tensor<[-1, 3, 4], f32>, !ge.tensor<[1:8, 1, 4], f32>) -> !ge.tensor<[-1, 3, 4], f32>
  ge.output %w : !ge.tensor<[-1, 3, 4], f32>
}

// Tile multiplies a range by its repeat; expand broadcasts a range against 1s; top-k fixes its
// axis to k and keeps the rest.
// CHECK-LABEL: ge.graph @tile_expand_top_k
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[1:4, 1, 6], f32>
// CHECK-NEXT:    %t = ge.tile %x repeats [3, 2, 1] : !ge.tensor<[1:4, 1, 6], f32> -> !ge.tensor<[3:12, 2, 6], f32>
// CHECK-NEXT:    %e = ge.expand %x shape [2, 1, 5, 1] : !ge.tensor<[1:4, 1, 6], f32> -> !ge.tensor<[2, 1:4, 5, 6], f32>
// CHECK-NEXT:    %v, %i = ge.top_k %t k 2 axis 0 largest sorted : !ge.tensor<[3:12, 2, 6], f32> -> (!ge.tensor<[2, 2, 6], f32>, !ge.tensor<[2, 2, 6], i64>)
ge.graph @tile_expand_top_k {
  %x = ge.data 0 "x" : !ge.tensor<[1:4, 1, 6], f32>
  %t = ge.tile %x repeats [3, 2, 1] : !ge.tensor<[1:4, 1, 6], f32> -> !ge.tensor<[-1, 2, 6], f32>
  %e = ge.expand %x shape [2, 1, 5, 1] : !ge.tensor<[1:4, 1, 6], f32> -> !ge.tensor<[2, -1, 5, 6], f32>
  %v, %i = ge.top_k %t k 2 axis 0 largest sorted : !ge.tensor<[-1, 2, 6], f32> -> (!ge.tensor<[2, 2, 6], f32>, !ge.tensor<[2, 2, 6], i64>)
  ge.output %e, %v, %i : !ge.tensor<[2, -1, 5, 6], f32>, !ge.tensor<[2, 2, 6], f32>, !ge.tensor<[2, 2, 6], i64>
}
