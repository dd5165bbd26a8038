// A ge.outputMaxSize below the bytes the output's shape ranges allow is an error at the graph's
// ge.output naming the output and both numbers.
// RUN: dfir-opt %s -p plan-output-size --verify-diagnostics | filecheck %s

// CHECK: ge.outputMaxSize of output 1 of graph below_the_proof is 50 bytes, below the 128 bytes its shape ranges allow; give at least that, or narrow the input shapes (ge.inputShape)
ge.graph @below_the_proof attributes {output_max_size = array<i64: 1000, 50>} {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  ge.output %x, %x : !ge.tensor<[1:8, 4], f32>, !ge.tensor<[1:8, 4], f32>
}
