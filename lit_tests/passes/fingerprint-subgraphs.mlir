// fingerprint-subgraphs puts `fingerprint = "sha256:<hex>"` on every process point, GE graph and
// df.graph. Keys are structural: SSA names do not matter; a change inside a process point changes
// its key, the keys of what refers to it, and the graph's, and no other. FileCheck variables
// carry each key from one split to the next.
// RUN: dfir-opt %s --split-input-file -p fingerprint-subgraphs | filecheck %s
// RUN: dfir-opt %s --split-input-file -p 'fingerprint-subgraphs{salt="sha256:0"}' | filecheck %s --check-prefix=SALT
// RUN: dfir-opt %s --split-input-file -p 'fingerprint-subgraphs{keep_existing=true}' | filecheck %s --check-prefix=KEEP

// Every keyed op gets a fingerprint; nodes, data and outputs do not.
// CHECK-LABEL: df.func_pp @inc_pp
// CHECK-SAME:    fingerprint = "[[FUNC:sha256:[0-9a-f]{64}]]"
// CHECK:       ge.graph @double attributes {fingerprint = "[[GE:sha256:[0-9a-f]{64}]]"}
// CHECK:       df.graph_pp @double_pp graph @double {framework = "ge", fingerprint = "[[GPP:sha256:[0-9a-f]{64}]]"}
// CHECK:       df.graph @pipeline attributes {fingerprint = "[[GRAPH:sha256:[0-9a-f]{64}]]"}
// CHECK-NEXT:    %in = df.data "in" index 0
// CHECK-NEXT:    %a = df.node "a"(%in) pp @inc_pp : 1 -> 1
// SALT-LABEL: df.func_pp @inc_pp
// SALT-SAME:    fingerprint = "[[SALTED:sha256:[0-9a-f]{64}]]"
df.func_pp @inc_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func"} payload "gASVAAAA"
ge.graph @double {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %two = ge.const dense<[2.0, 2.0]> : tensor<2xf32>
  %y = ge.mul %x, %two : (!ge.tensor<[2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}
df.graph_pp @double_pp graph @double {framework = "ge"}
df.graph @pipeline {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @inc_pp : 1 -> 1
  %b = df.node "b"(%a) pp @double_pp : 1 -> 1
  df.output %b
}

// -----

// The same module with every SSA value renamed keeps every key.
// CHECK-LABEL: df.func_pp @inc_pp
// CHECK-SAME:    fingerprint = "[[FUNC]]"
// CHECK:       ge.graph @double attributes {fingerprint = "[[GE]]"}
// CHECK:       df.graph_pp @double_pp graph @double {framework = "ge", fingerprint = "[[GPP]]"}
// CHECK:       df.graph @pipeline attributes {fingerprint = "[[GRAPH]]"}
// SALT-LABEL: df.func_pp @inc_pp
// SALT-SAME:    fingerprint = "[[SALTED]]"
df.func_pp @inc_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func"} payload "gASVAAAA"
ge.graph @double {
  %input = ge.data 0 "x" : !ge.tensor<[2], f32>
  %0 = ge.const dense<[2.0, 2.0]> : tensor<2xf32>
  %1 = ge.mul %input, %0 : (!ge.tensor<[2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2], f32>
  ge.output %1 : !ge.tensor<[2], f32>
}
df.graph_pp @double_pp graph @double {framework = "ge"}
df.graph @pipeline {
  %source = df.data "in" index 0
  %first = df.node "a"(%source) pp @inc_pp : 1 -> 1
  %second = df.node "b"(%first) pp @double_pp : 1 -> 1
  df.output %second
}

// -----

// A different constant in the GE graph changes the GE graph's key, its process point's (which
// refers to it) and the graph's; the UDF's key stays.
// CHECK-LABEL: df.func_pp @inc_pp
// CHECK-SAME:    fingerprint = "[[FUNC]]"
// CHECK:       ge.graph @double attributes
// CHECK-NOT:   [[GE]]
// CHECK:       df.graph_pp @double_pp
// CHECK-NOT:   [[GPP]]
// CHECK:       df.graph @pipeline
// CHECK-NOT:   [[GRAPH]]
// CHECK:       df.output %b
// SALT-LABEL: df.func_pp @inc_pp
// SALT-SAME:    fingerprint = "[[SALTED]]"
df.func_pp @inc_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func"} payload "gASVAAAA"
ge.graph @double {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %three = ge.const dense<[3.0, 3.0]> : tensor<2xf32>
  %y = ge.mul %x, %three : (!ge.tensor<[2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}
df.graph_pp @double_pp graph @double {framework = "ge"}
df.graph @pipeline {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @inc_pp : 1 -> 1
  %b = df.node "b"(%a) pp @double_pp : 1 -> 1
  df.output %b
}

// -----

// A different UDF payload changes the UDF's key and the graph's; the GE graph's stays.
// CHECK-LABEL: df.func_pp @inc_pp
// CHECK-NOT:   [[FUNC]]
// CHECK:       ge.graph @double attributes {fingerprint = "[[GE]]"}
// CHECK:       df.graph_pp @double_pp graph @double {framework = "ge", fingerprint = "[[GPP]]"}
// CHECK:       df.graph @pipeline
// CHECK-NOT:   [[GRAPH]]
// CHECK:       df.output %b
// SALT-LABEL: df.func_pp @inc_pp
// SALT-NOT:    [[SALTED]]
// SALT:        ge.graph @double
df.func_pp @inc_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func"} payload "gASVAAAB"
ge.graph @double {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %two = ge.const dense<[2.0, 2.0]> : tensor<2xf32>
  %y = ge.mul %x, %two : (!ge.tensor<[2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}
df.graph_pp @double_pp graph @double {framework = "ge"}
df.graph @pipeline {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @inc_pp : 1 -> 1
  %b = df.node "b"(%a) pp @double_pp : 1 -> 1
  df.output %b
}

// -----

// An op that already carries a fingerprint: with keep_existing it keeps it and the graph hashes
// the kept one (the compile cache's reused process points); without, it is computed again.
// CHECK-LABEL: df.func_pp @kept_pp
// CHECK-NOT:     sha256:feed
// CHECK:       df.graph @keeping
// KEEP-LABEL:  df.func_pp @kept_pp
// KEEP-SAME:     fingerprint = "sha256:feed"
// KEEP:        df.graph @keeping attributes {fingerprint = "[[KEPT:sha256:[0-9a-f]{64}]]"}
df.func_pp @kept_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func", fingerprint = "sha256:feed"} payload "gASVAAAA"
df.graph @keeping {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @kept_pp : 1 -> 1
  df.output %a
}

// -----

// Another kept fingerprint gives the graph another key.
// KEEP-LABEL:  df.func_pp @kept_pp
// KEEP-SAME:     fingerprint = "sha256:beef"
// KEEP:        df.graph @keeping
// KEEP-NOT:      [[KEPT]]
// KEEP:          df.output
df.func_pp @kept_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func", fingerprint = "sha256:beef"} payload "gASVAAAA"
df.graph @keeping {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @kept_pp : 1 -> 1
  df.output %a
}
