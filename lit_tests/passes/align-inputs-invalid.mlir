// align-inputs reads alignments the #df.align attribute has checked: a hand-written cache outside
// [0, 1024] or a timeout neither -1 nor in (0, 600000] ms is refused with the value and the range,
// on a graph and on a node alike.
// RUN: dfir-opt %s -p align-inputs --split-input-file --verify-diagnostics | filecheck %s

// A graph caches at most 1024 groups.
// CHECK: #df.align cache 2048 is outside [0, 1024]
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @cache_too_large attributes {align = #df.align<cache = 2048, timeout = 100>} {
  %x = df.data "x" index 0
  %add = df.node "add"(%x, %x) pp @add_pp : 2 -> 1
  df.output %add
}

// -----

// A graph timeout of 0 is neither "forever" (-1) nor a wait.
// CHECK: #df.align timeout 0 must be -1 or in (0, 600000] ms
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @timeout_zero attributes {align = #df.align<cache = 8, timeout = 0>} {
  %x = df.data "x" index 0
  %add = df.node "add"(%x, %x) pp @add_pp : 2 -> 1
  df.output %add
}

// -----

// A node waits at most ten minutes.
// CHECK: #df.align timeout 600001 must be -1 or in (0, 600000] ms
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @node_timeout_too_long {
  %x = df.data "x" index 0
  %add = df.node "add"(%x, %x) pp @add_pp {align = #df.align<cache = 8, timeout = 600001>} : 2 -> 1
  df.output %add
}

// -----

// A node cache is not negative.
// CHECK: #df.align cache -1 is outside [0, 1024]
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @node_cache_negative {
  %x = df.data "x" index 0
  %add = df.node "add"(%x, %x) pp @add_pp {align = #df.align<cache = -1, timeout = -1, dropout>} : 2 -> 1
  df.output %add
}
