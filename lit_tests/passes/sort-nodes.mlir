// sort-nodes puts each graph body in topological order: flow data by index, then nodes (ready
// nodes in written order), then df.output.
// RUN: dfir-opt %s -p sort-nodes | filecheck %s
// RUN: dfir-opt %s -p sort-nodes | dfir-opt -p sort-nodes | filecheck %s

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @binary_pp [#df.func<"f"(0, 1) -> (0)>] {kind = "py_func"}
df.func_pp @fork_pp [#df.func<"f"(0) -> (0, 1)>] {kind = "py_func"}
df.func_pp @source_pp [#df.func<"f"() -> (0)>] {kind = "py_func"}

// An already sorted graph is unchanged.
// CHECK-LABEL: df.graph @already_sorted
// CHECK-NEXT:    %sorted_in = df.data "in" index 0
// CHECK-NEXT:    %sorted_a = df.node "a"(%sorted_in) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    %sorted_b = df.node "b"(%sorted_a) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    df.output %sorted_b
// CHECK-NEXT:  }
df.graph @already_sorted attributes {options = {}} {
  %sorted_in = df.data "in" index 0
  %sorted_a = df.node "a"(%sorted_in) pp @unary_pp : 1 -> 1
  %sorted_b = df.node "b"(%sorted_a) pp @unary_pp : 1 -> 1
  df.output %sorted_b
}

// A chain written backwards comes out producer first.
// CHECK-LABEL: df.graph @reversed_chain
// CHECK-NEXT:    %chain_in = df.data "in" index 0
// CHECK-NEXT:    %chain_a = df.node "a"(%chain_in) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    %chain_b = df.node "b"(%chain_a) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    %chain_c = df.node "c"(%chain_b) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    df.output %chain_c
// CHECK-NEXT:  }
df.graph @reversed_chain attributes {options = {}} {
  %chain_c = df.node "c"(%chain_b) pp @unary_pp : 1 -> 1
  %chain_b = df.node "b"(%chain_a) pp @unary_pp : 1 -> 1
  %chain_a = df.node "a"(%chain_in) pp @unary_pp : 1 -> 1
  %chain_in = df.data "in" index 0
  df.output %chain_c
}

// Flow data come first, ordered by index, wherever they were written.
// CHECK-LABEL: df.graph @data_by_index
// CHECK-NEXT:    %zero = df.data "zero" index 0
// CHECK-NEXT:    %one = df.data "one" index 1
// CHECK-NEXT:    %two = df.data "two" index 2
// CHECK-NEXT:    %index_sum = df.node "sum"(%two, %zero) pp @binary_pp : 2 -> 1
// CHECK-NEXT:    df.output %index_sum, %one
// CHECK-NEXT:  }
df.graph @data_by_index attributes {options = {}} {
  %two = df.data "two" index 2
  %index_sum = df.node "sum"(%two, %zero) pp @binary_pp : 2 -> 1
  %one = df.data "one" index 1
  %zero = df.data "zero" index 0
  df.output %index_sum, %one
}

// Ties are broken by written order: "right" was written before "left", and both are ready
// once "fork" has run, so "right" stays first; "join" waits for both.
// CHECK-LABEL: df.graph @diamond_keeps_written_order
// CHECK-NEXT:    %diamond_in = df.data "in" index 0
// CHECK-NEXT:    %diamond_fork, %diamond_fork_1 = df.node "fork"(%diamond_in) pp @fork_pp : 1 -> 2
// CHECK-NEXT:    %diamond_right = df.node "right"(%diamond_fork_1) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    %diamond_left = df.node "left"(%diamond_fork) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    %diamond_join = df.node "join"(%diamond_left, %diamond_right) pp @binary_pp : 2 -> 1
// CHECK-NEXT:    df.output %diamond_join
// CHECK-NEXT:  }
df.graph @diamond_keeps_written_order attributes {options = {}} {
  %diamond_join = df.node "join"(%diamond_left, %diamond_right) pp @binary_pp : 2 -> 1
  %diamond_right = df.node "right"(%diamond_fork#1) pp @unary_pp : 1 -> 1
  %diamond_left = df.node "left"(%diamond_fork#0) pp @unary_pp : 1 -> 1
  %diamond_fork:2 = df.node "fork"(%diamond_in) pp @fork_pp : 1 -> 2
  %diamond_in = df.data "in" index 0
  df.output %diamond_join
}

// Nodes fed only by flow data or by nothing are ready from the start; "mix", written first,
// goes ahead of the ready "late" as soon as its producers are placed.
// CHECK-LABEL: df.graph @sources_ready_first
// CHECK-NEXT:    %ready_in = df.data "in" index 0
// CHECK-NEXT:    %ready_generated = df.node "generate"() pp @source_pp : 0 -> 1
// CHECK-NEXT:    %ready_scaled = df.node "scale"(%ready_in) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    %ready_mixed = df.node "mix"(%ready_generated, %ready_scaled) pp @binary_pp : 2 -> 1
// CHECK-NEXT:    %ready_late = df.node "late"(%ready_in) pp @unary_pp : 1 -> 1
// CHECK-NEXT:    df.output %ready_mixed, %ready_late
// CHECK-NEXT:  }
df.graph @sources_ready_first attributes {options = {}} {
  %ready_mixed = df.node "mix"(%ready_generated, %ready_scaled) pp @binary_pp : 2 -> 1
  %ready_generated = df.node "generate"() pp @source_pp : 0 -> 1
  %ready_scaled = df.node "scale"(%ready_in) pp @unary_pp : 1 -> 1
  %ready_late = df.node "late"(%ready_in) pp @unary_pp : 1 -> 1
  %ready_in = df.data "in" index 0
  df.output %ready_mixed, %ready_late
}
