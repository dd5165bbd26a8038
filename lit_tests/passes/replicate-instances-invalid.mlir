// replicate-instances refuses a `devices` that lists no device; the verifier refuses a df.gather
// that does not take one output port of every instance of one node, in instance order, and
// instances that share a name without distinct `instance`s of one count.
// RUN: dfir-opt %s -p replicate-instances --split-input-file --verify-diagnostics | filecheck %s

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}

// A node needs at least one device to run on.
// CHECK: node "a" (a.py:1): `devices` lists no device
df.graph @no_device {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {loc = "a.py:1", devices = []} : 1 -> 1
  df.output %a
}

// -----

// A gather of one instance merges nothing.
// CHECK: df.gather merges the instances of a node and needs at least 2 operands, got 1
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @one_operand {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {device = #df.device<0:0:0>, instance = #df.instance<0 of 1>} : 1 -> 1
  %g = df.gather %a
  df.output %g
}

// -----

// A gather takes node outputs, not graph inputs.
// CHECK: df.gather operand 0 comes from df.data, not a df.node
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @from_data {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {device = #df.device<0:0:0>, instance = #df.instance<0 of 2>} : 1 -> 1
  %g = df.gather %in, %a
  df.output %g
}

// -----

// A gather takes one output port of every instance.
// CHECK: df.gather operand 1 is not output 0 of an instance of node "a" (a.py:1)
df.func_pp @two_pp [#df.func<"f"(0) -> (0, 1)>] {kind = "py_func"}
df.graph @mixed_ports {
  %in = df.data "in" index 0
  %a:2 = df.node "a"(%in) pp @two_pp {loc = "a.py:1", instance = #df.instance<0 of 2>} : 1 -> 2
  %b:2 = df.node "a"(%in) pp @two_pp {loc = "a.py:1", instance = #df.instance<1 of 2>} : 1 -> 2
  %g = df.gather %a#0, %b#1
  df.output %g
}

// -----

// A gather takes the instances of one node, not of two.
// CHECK: df.gather operand 1 is not output 0 of an instance of node "a"
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @two_nodes {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {instance = #df.instance<0 of 2>} : 1 -> 1
  %b = df.node "b"(%in) pp @unary_pp {instance = #df.instance<1 of 2>} : 1 -> 1
  %g = df.gather %a, %b
  df.output %g
}

// -----

// A gather takes the instances in instance order.
// CHECK: df.gather operand 0 must come from #df.instance<0 of 2> of node "a", got #df.instance<1 of 2>
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @out_of_order {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {instance = #df.instance<0 of 2>} : 1 -> 1
  %b = df.node "a"(%in) pp @unary_pp {instance = #df.instance<1 of 2>} : 1 -> 1
  %g = df.gather %b, %a
  df.output %g
}

// -----

// A gather takes only nodes that are instances.
// CHECK: df.gather operand 1 must come from #df.instance<1 of 2> of node "a", got no instance
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @missing_instance {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {instance = #df.instance<0 of 2>} : 1 -> 1
  %b = df.node "a"(%in) pp @unary_pp : 1 -> 1
  %g = df.gather %a, %b
  df.output %g
}

// -----

// Instances sharing a name agree on their count.
// CHECK: df.graph @counts_differ: duplicate node name: node "a" (a.py:1) and node "a" (a.py:2)
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @counts_differ {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {loc = "a.py:1", instance = #df.instance<0 of 2>} : 1 -> 1
  %b = df.node "a"(%in) pp @unary_pp {loc = "a.py:2", instance = #df.instance<1 of 3>} : 1 -> 1
  df.output %a, %b
}

// -----

// Instances sharing a name have distinct indexes.
// CHECK: df.graph @same_instance: duplicate node name: node "a" (a.py:1) and node "a" (a.py:2)
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @same_instance {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {loc = "a.py:1", instance = #df.instance<1 of 2>} : 1 -> 1
  %b = df.node "a"(%in) pp @unary_pp {loc = "a.py:2", instance = #df.instance<1 of 2>} : 1 -> 1
  df.output %a, %b
}
