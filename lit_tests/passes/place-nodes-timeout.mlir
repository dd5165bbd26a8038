// A deploy entry's `udf_timeout_ms` goes on each UDF node it places (by name or alias) and on a
// node running a sub-FlowGraph, whose nodes take it; a GE graph node gets none, nor does a node
// whose entry gives none.
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-timeout.json | filecheck %s

df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
ge.graph @mlp {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.flow_graph_pp @inner_pp graph @inner

// CHECK-LABEL: df.graph @inner
// CHECK-NEXT:    %in = df.data "y" index 0
// CHECK-NEXT:    %c = df.node "c"(%in) pp @unary_pp {device = #df.device<host>, udf_timeout_ms = 40 : i64} : 1 -> 1
df.graph @inner {
  %in = df.data "y" index 0
  %c = df.node "c"(%in) pp @unary_pp : 1 -> 1
  df.output %c
}

// CHECK-LABEL: df.graph @timed
// CHECK-NEXT:    %in_1 = df.data "in" index 0
// CHECK-NEXT:    %a = df.node "a"(%in_1) pp @unary_pp {device = #df.device<host>, udf_timeout_ms = 40 : i64} : 1 -> 1
// CHECK-NEXT:    %b = df.node "b"(%a) pp @unary_pp {alias = "b_alias", device = #df.device<host>} : 1 -> 1
// CHECK-NEXT:    %g = df.node "g"(%b) pp @mlp_pp {device = #df.device<host>} : 1 -> 1
// CHECK-NEXT:    %s = df.node "sub"(%g) pp @inner_pp {device = #df.device<host>, udf_timeout_ms = 40 : i64} : 1 -> 1
df.graph @timed {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp : 1 -> 1
  %b = df.node "b"(%a) pp @unary_pp {alias = "b_alias"} : 1 -> 1
  %g = df.node "g"(%b) pp @mlp_pp : 1 -> 1
  %s = df.node "sub"(%g) pp @inner_pp : 1 -> 1
  df.output %s
}
