// place-nodes gives every node without a `device` the default device (the host unless
// `default-device` names another); nodes that already have one keep it. The option's value is
// quoted: the pass pipeline syntax reads 0:0:1:0 and -1 unquoted as something else.
// Without `deploy-info` every node has one instance; place-nodes-deploy.mlir places by a file.
// RUN: dfir-opt %s -p place-nodes | filecheck %s --check-prefixes=CHECK,HOST
// RUN: dfir-opt %s -p 'place-nodes{default-device=host}' | filecheck %s --check-prefixes=CHECK,HOST
// RUN: dfir-opt %s -p 'place-nodes{default-device="-1"}' | filecheck %s --check-prefixes=CHECK,HOST
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:0:1:0"}' | filecheck %s --check-prefixes=CHECK,NUMA
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:1:2"}' | filecheck %s --check-prefixes=CHECK,DEVICE

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}

// Nodes get the default device; flow data and the output carry none.
// CHECK-LABEL: df.graph @unplaced
// CHECK-NEXT:    %unplaced_in = df.data "in" index 0
// HOST-NEXT:     %unplaced_a = df.node "a"(%unplaced_in) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// HOST-NEXT:     %unplaced_b = df.node "b"(%unplaced_a) pp @unary_pp {loc = "b.py:3", device = #df.device<host>} : 1 -> 1
// NUMA-NEXT:     %unplaced_a = df.node "a"(%unplaced_in) pp @unary_pp {device = #df.device<0:0:1:0>} : 1 -> 1
// NUMA-NEXT:     %unplaced_b = df.node "b"(%unplaced_a) pp @unary_pp {loc = "b.py:3", device = #df.device<0:0:1:0>} : 1 -> 1
// DEVICE-NEXT:   %unplaced_a = df.node "a"(%unplaced_in) pp @unary_pp {device = #df.device<0:1:2>} : 1 -> 1
// DEVICE-NEXT:   %unplaced_b = df.node "b"(%unplaced_a) pp @unary_pp {loc = "b.py:3", device = #df.device<0:1:2>} : 1 -> 1
// CHECK-NEXT:    df.output %unplaced_b
// CHECK-NEXT:  }
df.graph @unplaced attributes {options = {}} {
  %unplaced_in = df.data "in" index 0
  %unplaced_a = df.node "a"(%unplaced_in) pp @unary_pp : 1 -> 1
  %unplaced_b = df.node "b"(%unplaced_a) pp @unary_pp {loc = "b.py:3"} : 1 -> 1
  df.output %unplaced_b
}

// A device set before the pass wins over the default, host included; the others are placed.
// CHECK-LABEL: df.graph @partly_placed
// CHECK-NEXT:    %partly_in = df.data "in" index 0
// CHECK-NEXT:    %partly_pinned = df.node "pinned"(%partly_in) pp @unary_pp {device = #df.device<1:0:3>} : 1 -> 1
// CHECK-NEXT:    %partly_on_host = df.node "on_host"(%partly_pinned) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// HOST-NEXT:     %partly_free = df.node "free"(%partly_on_host) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// NUMA-NEXT:     %partly_free = df.node "free"(%partly_on_host) pp @unary_pp {device = #df.device<0:0:1:0>} : 1 -> 1
// DEVICE-NEXT:   %partly_free = df.node "free"(%partly_on_host) pp @unary_pp {device = #df.device<0:1:2>} : 1 -> 1
// CHECK-NEXT:    df.output %partly_free
// CHECK-NEXT:  }
df.graph @partly_placed attributes {options = {}} {
  %partly_in = df.data "in" index 0
  %partly_pinned = df.node "pinned"(%partly_in) pp @unary_pp {device = #df.device<1:0:3>} : 1 -> 1
  %partly_on_host = df.node "on_host"(%partly_pinned) pp @unary_pp {device = #df.device<host>} : 1 -> 1
  %partly_free = df.node "free"(%partly_on_host) pp @unary_pp : 1 -> 1
  df.output %partly_free
}
