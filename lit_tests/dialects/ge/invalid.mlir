// Every diagnostic of the ge dialect, once: type parse errors point at the text, op verifier
// errors name the op and the numbers.
// RUN: dfir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// A dimension range whose lower bound exceeds its upper bound.
// CHECK: !ge.tensor<[5:3], f32>
// CHECK: dimension range 5:3 has its lower bound above its upper bound
ge.graph @range_upside_down {
  %x = ge.data 0 "x" : !ge.tensor<[5:3], f32>
  ge.output %x : !ge.tensor<[5:3], f32>
}

// -----

// A fixed size below -1.
// CHECK: dimension size must be >= 0 or -1 (unknown), got -2
ge.graph @negative_size {
  %x = ge.data 0 "x" : !ge.tensor<[-2], f32>
  ge.output %x : !ge.tensor<[-2], f32>
}

// -----

// A range with a negative lower bound.
// CHECK: dimension lower bound must be >= 0, got -3
ge.graph @negative_lower_bound {
  %x = ge.data 0 "x" : !ge.tensor<[-3:4], f32>
  ge.output %x : !ge.tensor<[-3:4], f32>
}

// -----

// An element type that is no GE data type.
// CHECK: element type index is not a GE data type, expected one of f32, f16, bf16, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64
ge.graph @index_elements {
  %x = ge.data 0 "x" : !ge.tensor<[2], index>
  ge.output %x : !ge.tensor<[2], index>
}

// -----

// A format the dialect does not know.
// CHECK: unknown tensor format 'NC1HWC0', expected one of ND, NCHW, NHWC
ge.graph @unknown_format {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32, NC1HWC0>
  ge.output %x : !ge.tensor<[2], f32, NC1HWC0>
}

// -----

// A graph without ge.output.
// CHECK: ge.graph @no_output: expected exactly one ge.output, found 0
ge.graph @no_output {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
}

// -----

// A graph with two ge.output ops.
// CHECK: ge.graph @two_outputs: expected exactly one ge.output, found 2
ge.graph @two_outputs {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}

// -----

// An op after ge.output.
// CHECK: ge.graph @output_not_last: ge.output must be the last op of the graph
ge.graph @output_not_last {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
  %y = ge.relu %x : !ge.tensor<[2], f32>
}

// -----

// A ge.output listing nothing.
// CHECK: ge.output: a graph needs at least one output
ge.graph @empty_output {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  "ge.output"() : () -> ()
}

// -----

// Two inputs with the same index.
// CHECK: ge.graph @repeated_index: data index 0 is used by more than one ge.data
ge.graph @repeated_index {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.data 0 "y" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}

// -----

// Input indexes with a gap.
// CHECK: ge.graph @index_gap: data indexes must be 0..1, got [0, 2]
ge.graph @index_gap {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.data 2 "y" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}

// -----

// A negative input index.
// CHECK: ge.data: index must be >= 0, got -1
ge.graph @negative_index {
  %x = ge.data -1 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}

// -----

// Two ops with the same name (an input and a tensor op share one namespace).
// CHECK: ge.graph @repeated_name: op name "x" is used more than once
ge.graph @repeated_name {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.relu %x {name = "x"} : !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}

// -----

// ge.data outside a ge.graph.
// CHECK: 'ge.data' expects parent op 'ge.graph'
%x = ge.data 0 "x" : !ge.tensor<[2], f32>

// -----

// Shapes that do not broadcast.
// CHECK: ge.add: shapes [2, 3] and [4] do not broadcast: dimension 1 is 3 vs 4
ge.graph @no_broadcast {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.data 1 "y" : !ge.tensor<[4], f32>
  %z = ge.add %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[2, 3], f32>
  ge.output %z : !ge.tensor<[2, 3], f32>
}

// -----

// Ranges that can never be equal do not broadcast either.
// CHECK: ge.mul: shapes [2:4] and [5:8] do not broadcast: dimension 0 is 2:4 vs 5:8
ge.graph @disjoint_ranges {
  %x = ge.data 0 "x" : !ge.tensor<[2:4], f32>
  %y = ge.data 1 "y" : !ge.tensor<[5:8], f32>
  %z = ge.mul %x, %y : (!ge.tensor<[2:4], f32>, !ge.tensor<[5:8], f32>) -> !ge.tensor<[-1], f32>
  ge.output %z : !ge.tensor<[-1], f32>
}

// -----

// Operands of different element types.
// CHECK: ge.sub: element types differ: lhs f32, rhs i32
ge.graph @mixed_elements {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.data 1 "y" : !ge.tensor<[2], i32>
  %z = ge.sub %x, %y : (!ge.tensor<[2], f32>, !ge.tensor<[2], i32>) -> !ge.tensor<[2], f32>
  ge.output %z : !ge.tensor<[2], f32>
}

// -----

// A declared result type that contradicts the inferred one.
// CHECK: ge.add: result type !ge.tensor<[2, 4], f32> is incompatible with the inferred type !ge.tensor<[2, 3], f32>
ge.graph @wrong_result {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %z = ge.add %x, %x : (!ge.tensor<[2, 3], f32>, !ge.tensor<[2, 3], f32>) -> !ge.tensor<[2, 4], f32>
  ge.output %z : !ge.tensor<[2, 4], f32>
}

// -----

// Inner dimensions of a matrix product that differ.
// CHECK: ge.matmul: inner dimensions differ: lhs [2, 3] has 3 columns, rhs [4, 5] has 4 rows
ge.graph @matmul_inner {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %w = ge.data 1 "w" : !ge.tensor<[4, 5], f32>
  %y = ge.matmul %x, %w : (!ge.tensor<[2, 3], f32>, !ge.tensor<[4, 5], f32>) -> !ge.tensor<[2, 5], f32>
  ge.output %y : !ge.tensor<[2, 5], f32>
}

// -----

// A matrix product of a vector.
// CHECK: ge.matmul: rhs must have rank >= 2, got [3]
ge.graph @matmul_vector {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %v = ge.data 1 "v" : !ge.tensor<[3], f32>
  %y = ge.matmul %x, %v : (!ge.tensor<[2, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}

// -----

// Batch dimensions of a matrix product that do not broadcast.
// CHECK: ge.matmul: batch dimensions [2] and [3] do not broadcast: dimension 0 is 2 vs 3
ge.graph @matmul_batch {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[3, 4, 4], f32>
  %y = ge.matmul %x, %w : (!ge.tensor<[2, 4, 4], f32>, !ge.tensor<[3, 4, 4], f32>) -> !ge.tensor<[2, 4, 4], f32>
  ge.output %y : !ge.tensor<[2, 4, 4], f32>
}

// -----

// A reshape target entry below -1.
// CHECK: ge.reshape: target shape entries must be >= -1, got [2, -3]
ge.graph @reshape_negative {
  %x = ge.data 0 "x" : !ge.tensor<[6], f32>
  %y = ge.reshape %x to [2, -3] : !ge.tensor<[6], f32> -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}

// -----

// A reshape target with two -1.
// CHECK: ge.reshape: target shape [-1, -1] has more than one -1
ge.graph @reshape_two_unknowns {
  %x = ge.data 0 "x" : !ge.tensor<[6], f32>
  %y = ge.reshape %x to [-1, -1] : !ge.tensor<[6], f32> -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}

// -----

// A 0 (copy) beyond the input's rank.
// CHECK: ge.reshape: target shape [3, 0] copies dimension 1 (a 0 at index 1) but the input [6] has rank 1
ge.graph @reshape_copy_out_of_range {
  %x = ge.data 0 "x" : !ge.tensor<[6], f32>
  %y = ge.reshape %x to [3, 0] : !ge.tensor<[6], f32> -> !ge.tensor<[3, 2], f32>
  ge.output %y : !ge.tensor<[3, 2], f32>
}

// -----

// Static element counts that differ.
// CHECK: ge.reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)
ge.graph @reshape_count {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.reshape %x to [4, 2] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[4, 2], f32>
  ge.output %y : !ge.tensor<[4, 2], f32>
}

// -----

// A -1 that cannot take a whole size.
// CHECK: ge.reshape: cannot reshape [2, 3] (6 elements) to [4, -1]: 6 is not a multiple of 4
ge.graph @reshape_not_multiple {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.reshape %x to [4, -1] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[4, 1], f32>
  ge.output %y : !ge.tensor<[4, 1], f32>
}

// -----

// A -1 beside a copied 0-sized dimension.
// CHECK: ge.reshape: cannot reshape [0, 3] to [0, -1]: the size of -1 is ambiguous when the other dimensions hold 0 elements
ge.graph @reshape_ambiguous {
  %x = ge.data 0 "x" : !ge.tensor<[0, 3], f32>
  %y = ge.reshape %x to [0, -1] : !ge.tensor<[0, 3], f32> -> !ge.tensor<[0, 3], f32>
  ge.output %y : !ge.tensor<[0, 3], f32>
}

// -----

// A constant whose result type is not its value's.
// CHECK: ge.const: result type !ge.tensor<[-1], f32> must be !ge.tensor<[2], f32>, the type of its value
ge.graph @const_result {
  %c = "ge.const"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> !ge.tensor<[-1], f32>
  ge.output %c : !ge.tensor<[-1], f32>
}

// -----

// A constant of an element type that is no GE data type.
// CHECK: ge.const: element type index is not a GE data type
ge.graph @const_index {
  %c = "ge.const"() <{value = dense<[1, 2]> : tensor<2xindex>}> : () -> !ge.tensor<[2], i64>
  ge.output %c : !ge.tensor<[2], i64>
}

// -----

// A constant whose value is not a tensor.
// CHECK: ge.const: value must have a tensor type, got vector<2xf32>
ge.graph @const_vector {
  %c = "ge.const"() <{value = dense<[1.0, 2.0]> : vector<2xf32>}> : () -> !ge.tensor<[2], f32>
  ge.output %c : !ge.tensor<[2], f32>
}

// -----

// A weight blob whose type is not a tensor.
// CHECK: ge.const: value must have a tensor type, got vector<2xf32>
ge.graph @blob_vector {
  %c = "ge.const"() <{value = dense_resource<weight_v> : vector<2xf32>}> : () -> !ge.tensor<[2], f32>
  ge.output %c : !ge.tensor<[2], f32>
}

// -----

// A constant written with something other than a dense attribute.
// CHECK: ge.const expects a dense or dense_resource attribute, got 5 : i32
ge.graph @const_not_dense {
  %c = ge.const 5 : i32
  ge.output %c : !ge.tensor<[], i32>
}

// -----

// Float math on an integer tensor.
// CHECK: ge.exp: operand must have a floating-point element type, got i32
ge.graph @unary_on_integers {
  %x = ge.data 0 "x" : !ge.tensor<[2], i32>
  %y = ge.exp %x : !ge.tensor<[2], i32>
  ge.output %y : !ge.tensor<[2], i32>
}
// -----

// An unknown gelu approximation.
// CHECK: ge.gelu: approximate must be one of none, tanh, got 'erf'
ge.graph @gelu_mode {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.gelu %x approximate "erf" : !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}
// -----

// Division operands that do not broadcast.
// CHECK: ge.div: shapes [2, 3] and [2] do not broadcast: dimension 1 is 3 vs 2
ge.graph @div_broadcast {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.data 1 "y" : !ge.tensor<[2], f32>
  %z = ge.div %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2, 3], f32>
  ge.output %z : !ge.tensor<[2, 3], f32>
}
// -----

// Adjoints that leave the inner dimensions unequal.
// CHECK: ge.batch_matmul: inner dimensions differ: lhs [2, 4, 8] contributes 4, rhs [2, 4, 8] contributes 8
ge.graph @batch_matmul_adjoint {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4, 8], f32>
  %z = ge.batch_matmul %x, %x adj_x adj_y : (!ge.tensor<[2, 4, 8], f32>, !ge.tensor<[2, 4, 8], f32>) -> !ge.tensor<[2, 8, 4], f32>
  ge.output %z : !ge.tensor<[2, 8, 4], f32>
}
// -----

// A gemm bias that does not broadcast to the result.
// CHECK: ge.gemm: c [3, 5] and [2] do not broadcast: dimension 1 is 5 vs 2
ge.graph @gemm_c {
  %a = ge.data 0 "a" : !ge.tensor<[3, 4], f32>
  %b = ge.data 1 "b" : !ge.tensor<[4, 5], f32>
  %c = ge.data 2 "c" : !ge.tensor<[2], f32>
  %y = ge.gemm %a, %b, %c alpha 1.0 beta 1.0 : (!ge.tensor<[3, 4], f32>, !ge.tensor<[4, 5], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[3, 5], f32>
  ge.output %y : !ge.tensor<[3, 5], f32>
}
// -----

// A filter expecting other input channels.
// CHECK: ge.conv2d: input [1, 3, 8, 8] has 3 channels but filter [4, 2, 3, 3] with groups 1 expects 2
ge.graph @conv_channels {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 8, 8], f32>
  %w = ge.data 1 "w" : !ge.tensor<[4, 2, 3, 3], f32>
  %y = ge.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!ge.tensor<[1, 3, 8, 8], f32>, !ge.tensor<[4, 2, 3, 3], f32>) -> !ge.tensor<[1, 4, 6, 6], f32>
  ge.output %y : !ge.tensor<[1, 4, 6, 6], f32>
}
// -----

// An input range whose largest size cannot hold the dilated kernel.
// CHECK: ge.conv2d: input [1, 3, 1:4, 8] is too small: dimension 2 with padding is at most 4, but the window spans 5
ge.graph @conv_too_small {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 1:4, 8], f32>
  %w = ge.data 1 "w" : !ge.tensor<[4, 3, 3, 3], f32>
  %y = ge.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [2, 1] groups 1 : (!ge.tensor<[1, 3, 1:4, 8], f32>, !ge.tensor<[4, 3, 3, 3], f32>) -> !ge.tensor<[1, 4, -1, 6], f32>
  ge.output %y : !ge.tensor<[1, 4, -1, 6], f32>
}
// -----

// Output channels that groups do not divide.
// CHECK: ge.conv2d: filter [3, 1, 1, 1] has 3 output channels, which is not a multiple of groups 2
ge.graph @conv_groups {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[3, 1, 1, 1], f32>
  %y = ge.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 2 : (!ge.tensor<[1, 2, 4, 4], f32>, !ge.tensor<[3, 1, 1, 1], f32>) -> !ge.tensor<[1, 3, 4, 4], f32>
  ge.output %y : !ge.tensor<[1, 3, 4, 4], f32>
}
// -----

// Image ops read NCHW (or ND) tensors only.
// CHECK: ge.conv2d: input format NHWC is not supported, expected NCHW or ND
ge.graph @conv_nhwc {
  %x = ge.data 0 "x" : !ge.tensor<[1, 4, 4, 3], f32, NHWC>
  %w = ge.data 1 "w" : !ge.tensor<[2, 3, 1, 1], f32>
  %y = ge.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!ge.tensor<[1, 4, 4, 3], f32, NHWC>, !ge.tensor<[2, 3, 1, 1], f32>) -> !ge.tensor<[1, 2, 4, 3], f32, NHWC>
  ge.output %y : !ge.tensor<[1, 2, 4, 3], f32, NHWC>
}
// -----

// A pool of a matrix: no spatial dimension.
// CHECK: ge.max_pool: input must have rank >= 3 (N, C and spatial dimensions), got [2, 3]
ge.graph @pool_rank {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.max_pool %x kernel [2] strides [1] pads [0, 0] dilations [1] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 2], f32>
  ge.output %y : !ge.tensor<[2, 2], f32>
}
// -----

// An average of integers (max pooling takes them, average pooling does not).
// CHECK: ge.avg_pool: input must have a floating-point element type, got i32
ge.graph @avg_pool_integers {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], i32>
  %y = ge.avg_pool %x kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4], i32> -> !ge.tensor<[1, 2, 3, 3], i32>
  ge.output %y : !ge.tensor<[1, 2, 3, 3], i32>
}
// -----

// A 2-D kernel over a 3-D (NCDHW) input.
// CHECK: ge.avg_pool: kernel must have 3 entries, got [2, 2]
ge.graph @pool_kernel_rank {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4, 4], f32>
  %y = ge.avg_pool %x kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4, 4], f32> -> !ge.tensor<[1, 2, 3, 3, 3], f32>
  ge.output %y : !ge.tensor<[1, 2, 3, 3, 3], f32>
}
// -----

// A 1-D (NCW) convolution with 2-D pads.
// CHECK: ge.conv2d: pads must have 2 entries, got [0, 0, 0, 0]
ge.graph @conv_1d_pads {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 8], f32>
  %w = ge.data 1 "w" : !ge.tensor<[3, 2, 3], f32>
  %y = ge.conv2d %x, %w strides [1] pads [0, 0, 0, 0] dilations [1] groups 1 : (!ge.tensor<[1, 2, 8], f32>, !ge.tensor<[3, 2, 3], f32>) -> !ge.tensor<[1, 3, 6], f32>
  ge.output %y : !ge.tensor<[1, 3, 6], f32>
}
// -----

// A 3-D transposed convolution whose filter has a rank of its own.
// CHECK: ge.conv_transpose: filter must have rank 5, got [2, 3, 2, 2]
ge.graph @conv_transpose_filter_rank {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[2, 3, 2, 2], f32>
  %y = ge.conv_transpose %x, %w strides [1, 1, 1] pads [0, 0, 0, 0, 0, 0] dilations [1, 1, 1] output_padding [0, 0, 0] groups 1 : (!ge.tensor<[1, 2, 4, 4, 4], f32>, !ge.tensor<[2, 3, 2, 2], f32>) -> !ge.tensor<[1, 3, 5, 5, 5], f32>
  ge.output %y : !ge.tensor<[1, 3, 5, 5, 5], f32>
}
// -----

// A stride of 0.
// CHECK: ge.max_pool: strides must be >= 1, got [0, 1]
ge.graph @pool_strides {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], f32>
  %y = ge.max_pool %x kernel [2, 2] strides [0, 1] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4], f32> -> !ge.tensor<[1, 2, 3, 3], f32>
  ge.output %y : !ge.tensor<[1, 2, 3, 3], f32>
}
// -----

// Pool padding as large as the window.
// CHECK: ge.avg_pool: pads [0, 0, 2, 0] must be smaller than the window extent 2
ge.graph @pool_pads {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], f32>
  %y = ge.avg_pool %x kernel [2, 2] strides [1, 1] pads [0, 0, 2, 0] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4], f32> -> !ge.tensor<[1, 2, 3, 5], f32>
  ge.output %y : !ge.tensor<[1, 2, 3, 5], f32>
}
// -----

// A declared pooling result that contradicts the window formula.
// CHECK: ge.max_pool: result type !ge.tensor<[1, 2, 4, 4], f32> is incompatible with the inferred type !ge.tensor<[1, 2, 2, 2], f32>
ge.graph @pool_wrong_result {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], f32>
  %y = ge.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 2, 4, 4], f32> -> !ge.tensor<[1, 2, 4, 4], f32>
  ge.output %y : !ge.tensor<[1, 2, 4, 4], f32>
}
// -----

// A global pool of a matrix.
// CHECK: ge.global_avg_pool: input must have rank >= 3, got [2, 3]
ge.graph @global_pool_rank {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.global_avg_pool %x : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}
// -----

// Batch-norm parameters of another channel count.
// CHECK: ge.batch_norm: mean [4] must have one entry per channel of the input [1, 3, 2, 2]: 4 vs 3
ge.graph @batch_norm_channels {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 2, 2], f32>
  %p = ge.data 1 "p" : !ge.tensor<[3], f32>
  %m = ge.data 2 "m" : !ge.tensor<[4], f32>
  %y = ge.batch_norm %x, %p, %p, %m, %p epsilon 1.0e-05 : (!ge.tensor<[1, 3, 2, 2], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>, !ge.tensor<[4], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[1, 3, 2, 2], f32>
  ge.output %y : !ge.tensor<[1, 3, 2, 2], f32>
}
// -----

// A layer-norm scale that does not fit the normalized dimensions.
// CHECK: ge.layer_norm: scale [3] does not broadcast to the normalized dimensions [4]
ge.graph @layer_norm_scale {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %s = ge.data 1 "s" : !ge.tensor<[3], f32>
  %y = ge.layer_norm %x, %s axis -1 epsilon 1.0e-05 : (!ge.tensor<[2, 4], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 4], f32>
  ge.output %y : !ge.tensor<[2, 4], f32>
}
// -----

// A softmax axis beyond the rank.
// CHECK: ge.softmax: axis 2 is out of range for [2, 4] (valid: -2..1)
ge.graph @softmax_axis {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.softmax %x axis 2 : !ge.tensor<[2, 4], f32>
  ge.output %y : !ge.tensor<[2, 4], f32>
}
// -----

// A perm that repeats a dimension.
// CHECK: ge.transpose: perm [0, 0] is not a permutation of the 2 dimensions of [2, 4]
ge.graph @transpose_perm {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.transpose %x perm [0, 0] : !ge.tensor<[2, 4], f32> -> !ge.tensor<[2, 2], f32>
  ge.output %y : !ge.tensor<[2, 2], f32>
}
// -----

// Concat operands that disagree off the axis.
// CHECK: ge.concat: operand 1 [3, 2] differs from [2, 4] in dimension 0: 2 vs 3
ge.graph @concat_dims {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.data 1 "y" : !ge.tensor<[3, 2], f32>
  %z = ge.concat %x, %y axis 1 : (!ge.tensor<[2, 4], f32>, !ge.tensor<[3, 2], f32>) -> !ge.tensor<[2, 6], f32>
  ge.output %z : !ge.tensor<[2, 6], f32>
}
// -----

// Split sizes that do not add up to the dimension.
// CHECK: ge.split: sizes [1, 2] sum to 3 but dimension 1 of [2, 4] is 4
ge.graph @split_sum {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %a, %b = ge.split %x axis 1 sizes [1, 2] : !ge.tensor<[2, 4], f32> -> !ge.tensor<[2, 1], f32>, !ge.tensor<[2, 2], f32>
  ge.output %a : !ge.tensor<[2, 1], f32>
}
// -----

// A split declaring fewer results than it has sizes.
// CHECK: ge.split: 1 results declared, 2 inferred
ge.graph @split_results {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %a = ge.split %x axis 1 sizes [1, 3] : !ge.tensor<[2, 4], f32> -> !ge.tensor<[2, 1], f32>
  ge.output %a : !ge.tensor<[2, 1], f32>
}
// -----

// A slice step of 0.
// CHECK: ge.slice: steps must not be 0, got [0]
ge.graph @slice_step {
  %x = ge.data 0 "x" : !ge.tensor<[4], f32>
  %y = ge.slice %x starts [0] ends [4] axes [0] steps [0] : !ge.tensor<[4], f32> -> !ge.tensor<[4], f32>
  ge.output %y : !ge.tensor<[4], f32>
}
// -----

// Slice parameter lists of different lengths.
// CHECK: ge.slice: starts [0, 1] and ends [4] differ in length
ge.graph @slice_lengths {
  %x = ge.data 0 "x" : !ge.tensor<[4, 4], f32>
  %y = ge.slice %x starts [0, 1] ends [4] axes [0, 1] steps [1, 1] : !ge.tensor<[4, 4], f32> -> !ge.tensor<[4, 3], f32>
  ge.output %y : !ge.tensor<[4, 3], f32>
}
// -----

// Float indices.
// CHECK: ge.gather: indices must have element type i32 or i64, got f32
ge.graph @gather_indices {
  %x = ge.data 0 "x" : !ge.tensor<[4, 4], f32>
  %i = ge.data 1 "i" : !ge.tensor<[2], f32>
  %y = ge.gather %x, %i axis 0 : (!ge.tensor<[4, 4], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2, 4], f32>
  ge.output %y : !ge.tensor<[2, 4], f32>
}
// -----

// Squeezing a dimension that is never 1.
// CHECK: ge.squeeze: dimension 0 of [2:4, 3] is 2:4, not 1
ge.graph @squeeze_not_one {
  %x = ge.data 0 "x" : !ge.tensor<[2:4, 3], f32>
  %y = ge.squeeze %x axes [0] : !ge.tensor<[2:4, 3], f32> -> !ge.tensor<[3], f32>
  ge.output %y : !ge.tensor<[3], f32>
}
// -----

// Unsqueeze axes naming one position twice.
// CHECK: ge.unsqueeze: axes [1, -2] name axis 1 more than once
ge.graph @unsqueeze_repeated {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %y = ge.unsqueeze %x axes [1, -2] : !ge.tensor<[3], f32> -> !ge.tensor<[3, 1, 1], f32>
  ge.output %y : !ge.tensor<[3, 1, 1], f32>
}
// -----

// Negative pads cropping more than the dimension holds.
// CHECK: ge.pad: pads [0, -3, 0, -2] crop 5 elements from dimension 1 of [2, 4], which has at most 4
ge.graph @pad_crop {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.pad %x pads [0, -3, 0, -2] mode "constant" value 0.0 : !ge.tensor<[2, 4], f32> -> !ge.tensor<[2, 0], f32>
  ge.output %y : !ge.tensor<[2, 0], f32>
}
// -----

// An unknown pad mode.
// CHECK: ge.pad: mode must be one of constant, reflect, edge, got 'wrap'
ge.graph @pad_mode {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.pad %x pads [0, 0, 0, 0] mode "wrap" value 0.0 : !ge.tensor<[2, 4], f32> -> !ge.tensor<[2, 4], f32>
  ge.output %y : !ge.tensor<[2, 4], f32>
}
// -----

// A flatten axis beyond the rank.
// CHECK: ge.flatten: axis 3 is out of range for [2, 4] (valid: -2..2)
ge.graph @flatten_axis {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.flatten %x axis 3 : !ge.tensor<[2, 4], f32> -> !ge.tensor<[8, 1], f32>
  ge.output %y : !ge.tensor<[8, 1], f32>
}
// -----

// Reduction axes naming one axis twice.
// CHECK: ge.reduce_sum: axes [0, -2] name axis 0 more than once
ge.graph @reduce_axes {
  %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
  %y = ge.reduce_sum %x axes [0, -2] : !ge.tensor<[2, 4], f32> -> !ge.tensor<[4], f32>
  ge.output %y : !ge.tensor<[4], f32>
}
// -----

// A cast to a type GE tensors cannot hold.
// CHECK: ge.cast: target index is not a GE data type
ge.graph @cast_target {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.cast %x to index : !ge.tensor<[2], f32> -> !ge.tensor<[2], i64>
  ge.output %y : !ge.tensor<[2], i64>
}
// -----

// A resize given both a size property and a size operand.
// CHECK: ge.resize_bilinear: give the output size either as the size property or as a size operand (exactly one)
ge.graph @resize_two_sizes {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i32>
  %y = ge.resize_bilinear %x, %hw size [8, 8] : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, 8, 8], f32>
  ge.output %y : !ge.tensor<[1, 3, 8, 8], f32>
}
// -----

// A size operand that is not a pair.
// CHECK: ge.resize_bilinear: size operand must have shape [2], got [3]
ge.graph @resize_size_shape {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %hw = ge.data 1 "hw" : !ge.tensor<[3], i64>
  %y = ge.resize_bilinear %x, %hw : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[3], i64>) -> !ge.tensor<[1, 3, -1, -1], f32>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32>
}
// -----

// Two coordinate conventions at once.
// CHECK: ge.resize_bilinear: align_corners and half_pixel_centers exclude each other
ge.graph @resize_coordinates {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %y = ge.resize_bilinear %x size [8, 8] align_corners half_pixel_centers : (!ge.tensor<[1, 3, 4, 4], f32>) -> !ge.tensor<[1, 3, 8, 8], f32>
  ge.output %y : !ge.tensor<[1, 3, 8, 8], f32>
}
// -----

// A resize mode ONNX does not have.
// CHECK: ge.resize: mode must be one of nearest, linear, cubic, got 'area'
ge.graph @resize_mode {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i64>
  %y = ge.resize %x sizes %hw axes [2, 3] mode "area" coordinates "half_pixel" : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, -1, -1], f32>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32>
}
// -----

// An option of another mode.
// CHECK: ge.resize: cubic_coeff_a does not apply to mode 'linear' with coordinates 'half_pixel'
ge.graph @resize_option {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i64>
  %y = ge.resize %x sizes %hw axes [2, 3] mode "linear" coordinates "half_pixel" cubic_coeff_a -0.5 : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, -1, -1], f32>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32>
}
// -----

// A crop without its roi.
// CHECK: ge.resize: a roi operand goes with coordinates 'tf_crop_and_resize' (and only with them)
ge.graph @resize_roi {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %hw = ge.data 1 "hw" : !ge.tensor<[2], i64>
  %y = ge.resize %x sizes %hw axes [2, 3] mode "linear" coordinates "tf_crop_and_resize" : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, -1, -1], f32>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32>
}
// -----

// Scales for more axes than `axes` names.
// CHECK: ge.resize: scales must have shape [2] (axes [2, 3]), got [4]
ge.graph @resize_scales_shape {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %s = ge.data 1 "s" : !ge.tensor<[4], f32>
  %y = ge.resize %x scales %s axes [2, 3] mode "nearest" coordinates "asymmetric" : !ge.tensor<[1, 3, 4, 4], f32> scales !ge.tensor<[4], f32> -> !ge.tensor<[1, 3, -1, -1], f32>
  ge.output %y : !ge.tensor<[1, 3, -1, -1], f32>
}
// -----

// Neither scales nor sizes.
// CHECK: ge.resize: needs a scales or a sizes operand
ge.graph @resize_no_target {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %y = ge.resize %x axes [2, 3] mode "nearest" coordinates "asymmetric" : !ge.tensor<[1, 3, 4, 4], f32> -> !ge.tensor<[1, 3, 4, 4], f32>
  ge.output %y : !ge.tensor<[1, 3, 4, 4], f32>
}
// -----

// A grid of 3-D points for 2-D images.
// CHECK: ge.grid_sample: grid [1, 5, 6, 3] must end in 2 coordinates: 3 vs 2
ge.graph @grid_sample_points {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %grid = ge.data 1 "grid" : !ge.tensor<[1, 5, 6, 3], f32>
  %y = ge.grid_sample %x, %grid mode "linear" padding "zeros" : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[1, 5, 6, 3], f32>) -> !ge.tensor<[1, 3, 5, 6], f32>
  ge.output %y : !ge.tensor<[1, 3, 5, 6], f32>
}
// -----

// A padding mode GridSample does not have.
// CHECK: ge.grid_sample: padding_mode must be one of zeros, border, reflection, got 'edge'
ge.graph @grid_sample_padding {
  %x = ge.data 0 "x" : !ge.tensor<[1, 3, 4, 4], f32>
  %grid = ge.data 1 "grid" : !ge.tensor<[1, 5, 6, 2], f32>
  %y = ge.grid_sample %x, %grid mode "linear" padding "edge" : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[1, 5, 6, 2], f32>) -> !ge.tensor<[1, 3, 5, 6], f32>
  ge.output %y : !ge.tensor<[1, 3, 5, 6], f32>
}
// -----

// A variable without a name.
// CHECK: ge.variable: the variable name must not be empty
ge.graph @variable_name {
  %w = ge.variable "" dense<[1.0]> : tensor<1xf32>
  ge.output %w : !ge.tensor<[1], f32>
}

// -----

// A backend that is not one of the device backends.
// CHECK: ge.graph @gpu: unknown backend "gpu", expected one of ['reference', 'iree-cpu', 'iree-cuda', 'onnxruntime']
ge.graph @gpu backend "gpu" {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}

// -----

// A comparison of operands with different element types.
// CHECK: ge.less: element types differ: lhs f32, rhs i32
ge.graph @compare_mixed_types {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %y = ge.data 1 "y" : !ge.tensor<[3], i32>
  %z = ge.less %x, %y : (!ge.tensor<[3], f32>, !ge.tensor<[3], i32>) -> !ge.tensor<[3], i1>
  ge.output %z : !ge.tensor<[3], i1>
}

// -----

// A comparison declared with the operands' element type instead of i1.
// CHECK: ge.equal: result type !ge.tensor<[3], f32> is incompatible with the inferred type !ge.tensor<[3], i1>
ge.graph @compare_result_type {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %z = ge.equal %x, %x : (!ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// A logical op on floats.
// CHECK: ge.logical_or: lhs must have element type i1, got f32
ge.graph @logical_of_floats {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %z = ge.logical_or %x, %x : (!ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// Not of an integer tensor.
// CHECK: ge.logical_not: operand must have element type i1, got i32
ge.graph @not_of_integers {
  %x = ge.data 0 "x" : !ge.tensor<[3], i32>
  %z = ge.logical_not %x : !ge.tensor<[3], i32>
  ge.output %z : !ge.tensor<[3], i32>
}

// -----

// A bitwise op on booleans.
// CHECK: ge.bitwise_xor: lhs must have an integer element type, got i1
ge.graph @bitwise_of_booleans {
  %x = ge.data 0 "x" : !ge.tensor<[3], i1>
  %z = ge.bitwise_xor %x, %x : (!ge.tensor<[3], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[3], i1>
  ge.output %z : !ge.tensor<[3], i1>
}

// -----

// Bitwise not of floats.
// CHECK: ge.bitwise_not: operand must have an integer element type, got f32
ge.graph @bitwise_not_of_floats {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %z = ge.bitwise_not %x : !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// A shift in a direction that is neither left nor right.
// CHECK: ge.bit_shift: direction must be one of left, right, got 'up'
ge.graph @shift_direction {
  %x = ge.data 0 "x" : !ge.tensor<[3], ui8>
  %z = ge.bit_shift %x, %x direction "up" : (!ge.tensor<[3], ui8>, !ge.tensor<[3], ui8>) -> !ge.tensor<[3], ui8>
  ge.output %z : !ge.tensor<[3], ui8>
}

// -----

// A select whose condition is not boolean.
// CHECK: ge.select: condition must have element type i1, got f32
ge.graph @select_condition {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %z = ge.select %x, %x, %x : (!ge.tensor<[3], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// A select whose condition does not broadcast with its values.
// CHECK: ge.select: shapes [2, 4] and [2, 3] do not broadcast: dimension 1 is 4 vs 3
ge.graph @select_shapes {
  %c = ge.data 0 "c" : !ge.tensor<[2, 4], i1>
  %x = ge.data 1 "x" : !ge.tensor<[2, 3], f32>
  %z = ge.select %c, %x, %x : (!ge.tensor<[2, 4], i1>, !ge.tensor<[2, 3], f32>, !ge.tensor<[2, 3], f32>) -> !ge.tensor<[2, 3], f32>
  ge.output %z : !ge.tensor<[2, 3], f32>
}

// -----

// The remainder of booleans.
// CHECK: ge.mod: lhs must have a numeric element type, got i1
ge.graph @mod_of_booleans {
  %x = ge.data 0 "x" : !ge.tensor<[3], i1>
  %z = ge.mod %x, %x : (!ge.tensor<[3], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[3], i1>
  ge.output %z : !ge.tensor<[3], i1>
}

// -----

// Negating booleans.
// CHECK: ge.neg: operand must have a numeric element type, got i1
ge.graph @neg_of_booleans {
  %x = ge.data 0 "x" : !ge.tensor<[3], i1>
  %z = ge.neg %x : !ge.tensor<[3], i1>
  ge.output %z : !ge.tensor<[3], i1>
}

// -----

// Rounding integers.
// CHECK: ge.round: operand must have a floating-point element type, got i32
ge.graph @round_of_integers {
  %x = ge.data 0 "x" : !ge.tensor<[3], i32>
  %z = ge.round %x : !ge.tensor<[3], i32>
  ge.output %z : !ge.tensor<[3], i32>
}

// -----

// A float test of integers.
// CHECK: ge.is_inf: operand must have a floating-point element type, got i64
ge.graph @is_inf_of_integers {
  %x = ge.data 0 "x" : !ge.tensor<[3], i64>
  %z = ge.is_inf %x detect_positive : (!ge.tensor<[3], i64>) -> !ge.tensor<[3], i1>
  ge.output %z : !ge.tensor<[3], i1>
}

// -----

// A prelu slope that would grow the input.
// CHECK: ge.prelu: slope [2, 3] does not broadcast to the input [3]
ge.graph @prelu_slope_grows_input {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %s = ge.data 1 "s" : !ge.tensor<[2, 3], f32>
  %z = ge.prelu %x, %s : (!ge.tensor<[3], f32>, !ge.tensor<[2, 3], f32>) -> !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// A prelu of booleans.
// CHECK: ge.prelu: input must have a numeric element type, got i1
ge.graph @prelu_of_booleans {
  %x = ge.data 0 "x" : !ge.tensor<[3], i1>
  %z = ge.prelu %x, %x : (!ge.tensor<[3], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[3], i1>
  ge.output %z : !ge.tensor<[3], i1>
}

// -----

// Celu divides by alpha, which must not be 0.
// CHECK: ge.celu: alpha must not be 0
ge.graph @celu_alpha_zero {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %z = ge.celu %x alpha 0.000000e+00 : !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// An activation of integers.
// CHECK: ge.leaky_relu: operand must have a floating-point element type, got i8
ge.graph @leaky_relu_of_integers {
  %x = ge.data 0 "x" : !ge.tensor<[3], i8>
  %z = ge.leaky_relu %x alpha 1.000000e-01 : !ge.tensor<[3], i8>
  ge.output %z : !ge.tensor<[3], i8>
}

// -----

// Trilu of a vector, which has no diagonal.
// CHECK: ge.trilu: input must have rank >= 2, got [3]
ge.graph @trilu_of_a_vector {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %z = ge.trilu %x k 0 upper : !ge.tensor<[3], f32>
  ge.output %z : !ge.tensor<[3], f32>
}

// -----

// An expand shape with a negative size.
// CHECK: ge.expand: shape must be >= 0, got [2, -1]
ge.graph @expand_negative {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.expand %x shape [2, -1] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}

// -----

// An expand shape the input does not broadcast against.
// CHECK: ge.expand: input [2, 3] and [4] do not broadcast: dimension 1 is 3 vs 4
ge.graph @expand_mismatch {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.expand %x shape [4] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 4], f32>
  ge.output %y : !ge.tensor<[2, 4], f32>
}

// -----

// Tile repeats for a different rank.
// CHECK: ge.tile: repeats must have 2 entries, got [2]
ge.graph @tile_count {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.tile %x repeats [2] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[4, 3], f32>
  ge.output %y : !ge.tensor<[4, 3], f32>
}

// -----

// A negative tile repeat.
// CHECK: ge.tile: repeats must be >= 0, got [1, -1]
ge.graph @tile_negative {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.tile %x repeats [1, -1] : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}

// -----

// A log-softmax of integers.
// CHECK: ge.log_softmax: input must have a floating-point element type, got i32
ge.graph @log_softmax_int {
  %i = ge.data 0 "i" : !ge.tensor<[2, 3], i32>
  %y = ge.log_softmax %i axis 0 : !ge.tensor<[2, 3], i32>
  ge.output %y : !ge.tensor<[2, 3], i32>
}

// -----

// A log-sum of integers.
// CHECK: ge.reduce_log_sum: input must have a floating-point element type, got i32
ge.graph @log_sum_int {
  %i = ge.data 0 "i" : !ge.tensor<[2, 3], i32>
  %y = ge.reduce_log_sum %i axes [0] : !ge.tensor<[2, 3], i32> -> !ge.tensor<[3], i32>
  ge.output %y : !ge.tensor<[3], i32>
}

// -----

// An arg-reduction axis out of range.
// CHECK: ge.arg_max: axis 2 is out of range for [2, 3] (valid: -2..1)
ge.graph @arg_axis {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.arg_max %x axis 2 : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2], i64>
  ge.output %y : !ge.tensor<[2], i64>
}

// -----

// An arg-reduction declared with a float result.
// CHECK: ge.arg_min: result type !ge.tensor<[2], f32> is incompatible with the inferred type !ge.tensor<[2], i64>
ge.graph @arg_result {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.arg_min %x axis 1 : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}

// -----

// A top-k larger than its dimension.
// CHECK: ge.top_k: k 4 exceeds dimension 1 of [2, 3]
ge.graph @top_k_large {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %v, %i2 = ge.top_k %x k 4 axis 1 largest sorted : !ge.tensor<[2, 3], f32> -> (!ge.tensor<[2, 4], f32>, !ge.tensor<[2, 4], i64>)
  ge.output %v : !ge.tensor<[2, 4], f32>
}

// -----

// A negative top-k.
// CHECK: ge.top_k: k must be >= 0, got [-1]
ge.graph @top_k_negative {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %v, %i2 = ge.top_k %x k -1 axis 1 : !ge.tensor<[2, 3], f32> -> (!ge.tensor<[2, 3], f32>, !ge.tensor<[2, 3], i64>)
  ge.output %v : !ge.tensor<[2, 3], f32>
}

// -----

// An instance normalization of a matrix.
// CHECK: ge.instance_norm: input must have rank >= 3, got [2, 3]
ge.graph @instance_rank {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %c = ge.const dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = ge.instance_norm %x, %c, %c epsilon 1.0e-05 : (!ge.tensor<[2, 3], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}

// -----

// Instance normalization parameters that miss channels.
// CHECK: ge.instance_norm: scale [3] must have one entry per channel of the input [1, 2, 4, 4]: 3 vs 2
ge.graph @instance_channels {
  %img = ge.data 0 "img" : !ge.tensor<[1, 2, 4, 4], f32>
  %c = ge.const dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = ge.instance_norm %img, %c, %c epsilon 1.0e-05 : (!ge.tensor<[1, 2, 4, 4], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[1, 2, 4, 4], f32>
  ge.output %y : !ge.tensor<[1, 2, 4, 4], f32>
}

// -----

// An LRN window of no channels.
// CHECK: ge.lrn: size must be >= 1, got [0]
ge.graph @lrn_size {
  %x = ge.data 0 "x" : !ge.tensor<[2, 3], f32>
  %y = ge.lrn %x size 0 alpha 1.0e-04 beta 7.5e-01 bias 1.0 : !ge.tensor<[2, 3], f32>
  ge.output %y : !ge.tensor<[2, 3], f32>
}

// -----

// An LRN of a vector.
// CHECK: ge.lrn: input must have rank >= 2, got [3]
ge.graph @lrn_rank {
  %c = ge.const dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = ge.lrn %c size 3 alpha 1.0e-04 beta 7.5e-01 bias 1.0 : !ge.tensor<[3], f32>
  ge.output %y : !ge.tensor<[3], f32>
}

// -----

// A transposed convolution whose input channels miss the filter rows.
// CHECK: ge.conv_transpose: input [1, 2, 4, 4] must have one channel per filter row of [3, 1, 2, 2]: 2 vs 3
ge.graph @conv_transpose_channels {
  %img = ge.data 0 "img" : !ge.tensor<[1, 2, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[3, 1, 2, 2], f32>
  %y = ge.conv_transpose %img, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0, 0] groups 1 : (!ge.tensor<[1, 2, 4, 4], f32>, !ge.tensor<[3, 1, 2, 2], f32>) -> !ge.tensor<[1, 1, 5, 5], f32>
  ge.output %y : !ge.tensor<[1, 1, 5, 5], f32>
}

// -----

// Negative output padding.
// CHECK: ge.conv_transpose: output_padding must be >= 0, got [0, -1]
ge.graph @conv_transpose_output_padding {
  %img = ge.data 0 "img" : !ge.tensor<[1, 2, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[2, 1, 2, 2], f32>
  %y = ge.conv_transpose %img, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0, -1] groups 1 : (!ge.tensor<[1, 2, 4, 4], f32>, !ge.tensor<[2, 1, 2, 2], f32>) -> !ge.tensor<[1, 1, 5, 4], f32>
  ge.output %y : !ge.tensor<[1, 1, 5, 4], f32>
}

// -----

// Pads that cut more than the output spans.
// CHECK: ge.conv_transpose: pads [3, 3, 0, 0] cut more than the output of [1, 2, 4, 4] spans along dimension 2
ge.graph @conv_transpose_pads {
  %img = ge.data 0 "img" : !ge.tensor<[1, 2, 4, 4], f32>
  %w = ge.data 1 "w" : !ge.tensor<[2, 1, 2, 2], f32>
  %y = ge.conv_transpose %img, %w strides [1, 1] pads [3, 3, 0, 0] dilations [1, 1] output_padding [0, 0] groups 1 : (!ge.tensor<[1, 2, 4, 4], f32>, !ge.tensor<[2, 1, 2, 2], f32>) -> !ge.tensor<[1, 1, 0, 5], f32>
  ge.output %y : !ge.tensor<[1, 1, 0, 5], f32>
}

// -----


// Running sums of booleans.
// CHECK: ge.cum_sum: input must be numeric, got i1
ge.graph @cum_sum_bool {
  %x = ge.data 0 "x" : !ge.tensor<[3], i1>
  %y = ge.cum_sum %x axis 0 : !ge.tensor<[3], i1>
  ge.output %y : !ge.tensor<[3], i1>
}

// -----

// A running-sum axis out of range.
// CHECK: ge.cum_sum: axis 2 is out of range for [3] (valid: -1..0)
ge.graph @cum_sum_axis {
  %x = ge.data 0 "x" : !ge.tensor<[3], f32>
  %y = ge.cum_sum %x axis 2 : !ge.tensor<[3], f32>
  ge.output %y : !ge.tensor<[3], f32>
}

// -----

// A bit cast between types of different widths.
// CHECK: ge.bitcast: f16 has 16 bits and f32 32; a bit cast needs equal widths
ge.graph @bitcast_widths {
  %x = ge.data 0 "x" : !ge.tensor<[3], f16>
  %y = ge.bitcast %x to f32 : !ge.tensor<[3], f16> -> !ge.tensor<[3], f32>
  ge.output %y : !ge.tensor<[3], f32>
}

// -----

// Bytes read as bools, which may be neither 0 nor 1.
// CHECK: ge.bitcast: i8 cannot be read as i1, whose bytes must be 0 or 1
ge.graph @bitcast_to_bool {
  %x = ge.data 0 "x" : !ge.tensor<[3], i8>
  %y = ge.bitcast %x to i1 : !ge.tensor<[3], i8> -> !ge.tensor<[3], i1>
  ge.output %y : !ge.tensor<[3], i1>
}

// -----

// A bit cast to a type GE tensors cannot hold.
// CHECK: ge.bitcast: target index is not a GE data type
ge.graph @bitcast_target {
  %x = ge.data 0 "x" : !ge.tensor<[3], i64>
  %y = "ge.bitcast"(%x) <{to = index}> : (!ge.tensor<[3], i64>) -> !ge.tensor<[3], i64>
  ge.output %y : !ge.tensor<[3], i64>
}

// -----

// A convolution of uint8 images: integer convolutions accumulate in i32.
// CHECK: ge.conv2d: input must have a floating-point or i32 element type, got ui8
ge.graph @conv2d_uint8 {
  %x = ge.data 0 "x" : !ge.tensor<[1, 2, 4, 4], ui8, NCHW>
  %w = ge.data 1 "w" : !ge.tensor<[3, 2, 1, 1], ui8>
  %y = ge.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!ge.tensor<[1, 2, 4, 4], ui8, NCHW>, !ge.tensor<[3, 2, 1, 1], ui8>) -> !ge.tensor<[1, 3, 4, 4], ui8, NCHW>
  ge.output %y : !ge.tensor<[1, 3, 4, 4], ui8, NCHW>
}

// -----

// Running products of booleans.
// CHECK: ge.cum_prod: input must be numeric, got i1
ge.graph @cum_prod_bool {
  %x = ge.data 0 "x" : !ge.tensor<[3], i1>
  %y = ge.cum_prod %x axis 0 : !ge.tensor<[3], i1>
  ge.output %y : !ge.tensor<[3], i1>
}

// -----

// A scatter with an unknown reduction.
// CHECK: ge.scatter_elements: reduction must be one of none, add, mul, max, min, got 'sum'
ge.graph @scatter_reduction {
  %x = ge.data 0 "x" : !ge.tensor<[3, 4], f32>
  %i = ge.data 1 "i" : !ge.tensor<[1, 4], i64>
  %u = ge.data 2 "u" : !ge.tensor<[1, 4], f32>
  %y = ge.scatter_elements %x, %i, %u axis 0 reduction "sum" : (!ge.tensor<[3, 4], f32>, !ge.tensor<[1, 4], i64>, !ge.tensor<[1, 4], f32>) -> !ge.tensor<[3, 4], f32>
  ge.output %y : !ge.tensor<[3, 4], f32>
}

// -----

// Scatter indices wider than the data off the axis.
// CHECK: ge.scatter_elements: indices [1, 5] exceed data [3, 4] in dimension 1, which is not the axis
ge.graph @scatter_wide {
  %x = ge.data 0 "x" : !ge.tensor<[3, 4], f32>
  %i = ge.data 1 "i" : !ge.tensor<[1, 5], i64>
  %u = ge.data 2 "u" : !ge.tensor<[1, 5], f32>
  %y = ge.scatter_elements %x, %i, %u axis 0 reduction "none" : (!ge.tensor<[3, 4], f32>, !ge.tensor<[1, 5], i64>, !ge.tensor<[1, 5], f32>) -> !ge.tensor<[3, 4], f32>
  ge.output %y : !ge.tensor<[3, 4], f32>
}

// -----

// Scatter updates of another element type.
// CHECK: ge.scatter_elements: data and updates must share one element type, got f32, f16
ge.graph @scatter_types {
  %x = ge.data 0 "x" : !ge.tensor<[3, 4], f32>
  %i = ge.data 1 "i" : !ge.tensor<[1, 4], i32>
  %u = ge.data 2 "u" : !ge.tensor<[1, 4], f16>
  %y = ge.scatter_elements %x, %i, %u axis 0 reduction "none" : (!ge.tensor<[3, 4], f32>, !ge.tensor<[1, 4], i32>, !ge.tensor<[1, 4], f16>) -> !ge.tensor<[3, 4], f32>
  ge.output %y : !ge.tensor<[3, 4], f32>
}
