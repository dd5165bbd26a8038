// align-inputs copies the graph's `align` onto every node with >= 2 inputs whose process point
// is a GE graph or has a plain (not stream_input) func taking >= 2 of them; every instance of a
// replicated node gets it. Nodes with one input and nodes whose multi-input funcs are all
// stream_input are left alone. A cache of 0 switches alignment off; a graph without `align`
// is left alone.
// RUN: dfir-opt %s -p align-inputs | filecheck %s
// RUN: dfir-opt %s -p align-inputs | dfir-opt | filecheck %s

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.func_pp @methods_pp [#df.func<"one"(0) -> (0)>, #df.func<"pair"(1, 2) -> (1)>] {kind = "py_func"}
df.func_pp @split_inputs_pp [#df.func<"one"(0) -> (0)>, #df.func<"two"(1) -> (1)>] {kind = "py_func"}
df.func_pp @stream_pp [#df.func<"merge"(0, 1) -> (0), stream_input>] {kind = "py_func"}
df.func_pp @mixed_pp [#df.func<"merge"(0, 1) -> (0), stream_input>, #df.func<"pair"(2, 3) -> (1)>] {kind = "py_func"}
df.graph_pp @ge_pp graph @add_graph {framework = "ge"}
ge.graph @add_graph {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.data 1 "y" : !ge.tensor<[2], f32>
  %z = ge.add %x, %y : (!ge.tensor<[2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2], f32>
  ge.output %z : !ge.tensor<[2], f32>
}

// CHECK-LABEL: df.graph @aligned
// CHECK:         df.node "one"(%{{.*}}) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    df.node "add"(%{{.*}}, %{{.*}}) pp @add_pp {align = #df.align<cache = 256, timeout = 60000, dropout>} : 2 -> 1
// CHECK-NEXT:    df.node "add2"(%{{.*}}, %{{.*}}) pp @add_pp {instance = #df.instance<0 of 2>, align = #df.align<cache = 256, timeout = 60000, dropout>} : 2 -> 1
// CHECK-NEXT:    df.node "add2"(%{{.*}}, %{{.*}}) pp @add_pp {instance = #df.instance<1 of 2>, align = #df.align<cache = 256, timeout = 60000, dropout>} : 2 -> 1
// CHECK-NEXT:    df.gather
// CHECK-NEXT:    df.node "methods"(%{{.*}}, %{{.*}}, %{{.*}}) pp @methods_pp {align = #df.align<cache = 256, timeout = 60000, dropout>} : 3 -> 2
// CHECK-NEXT:    df.node "split_inputs"(%{{.*}}, %{{.*}}) pp @split_inputs_pp : 2 -> 2
// CHECK-NEXT:    df.node "stream"(%{{.*}}, %{{.*}}) pp @stream_pp : 2 -> 1
// CHECK-NEXT:    df.node "mixed"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) pp @mixed_pp {align = #df.align<cache = 256, timeout = 60000, dropout>} : 4 -> 2
// CHECK-NEXT:    df.node "ge"(%{{.*}}, %{{.*}}) pp @ge_pp {align = #df.align<cache = 256, timeout = 60000, dropout>} : 2 -> 1
df.graph @aligned attributes {align = #df.align<cache = 256, timeout = 60000, dropout>} {
  %x = df.data "x" index 0
  %one = df.node "one"(%x) pp @unary_pp : 1 -> 1
  %add = df.node "add"(%x, %one) pp @add_pp : 2 -> 1
  %add2_0 = df.node "add2"(%x, %add) pp @add_pp {instance = #df.instance<0 of 2>} : 2 -> 1
  %add2_1 = df.node "add2"(%x, %add) pp @add_pp {instance = #df.instance<1 of 2>} : 2 -> 1
  %add2 = df.gather %add2_0, %add2_1
  %methods:2 = df.node "methods"(%x, %add2, %one) pp @methods_pp : 3 -> 2
  %split:2 = df.node "split_inputs"(%x, %one) pp @split_inputs_pp : 2 -> 2
  %stream = df.node "stream"(%x, %one) pp @stream_pp : 2 -> 1
  %mixed:2 = df.node "mixed"(%x, %one, %x, %one) pp @mixed_pp : 4 -> 2
  %ge = df.node "ge"(%x, %one) pp @ge_pp : 2 -> 1
  df.output %methods#0, %methods#1, %split#0, %split#1, %stream, %mixed#0, %mixed#1, %ge
}

// A cache of 0 is alignment off; the graph's `align` stays, no node gets one.
// CHECK-LABEL: df.graph @off attributes {align = #df.align<cache = 0, timeout = -1>}
// CHECK-NEXT:    df.data
// CHECK-NEXT:    df.node "add"(%{{.*}}, %{{.*}}) pp @add_pp : 2 -> 1
df.graph @off attributes {align = #df.align<cache = 0, timeout = -1>} {
  %x = df.data "x" index 0
  %add = df.node "add"(%x, %x) pp @add_pp : 2 -> 1
  df.output %add
}

// CHECK-LABEL: df.graph @unaligned
// CHECK-NEXT:    df.data
// CHECK-NEXT:    df.node "add"(%{{.*}}, %{{.*}}) pp @add_pp : 2 -> 1
df.graph @unaligned {
  %x = df.data "x" index 0
  %add = df.node "add"(%x, %x) pp @add_pp : 2 -> 1
  df.output %add
}
