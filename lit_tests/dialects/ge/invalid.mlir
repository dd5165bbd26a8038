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

// A constant written with something other than a dense attribute.
// CHECK: ge.const expects a dense attribute, got 5 : i32
ge.graph @const_not_dense {
  %c = ge.const 5 : i32
  ge.output %c : !ge.tensor<[], i32>
}
