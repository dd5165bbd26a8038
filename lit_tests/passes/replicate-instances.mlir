// replicate-instances turns a node placed on N >= 2 devices (`devices`, from place-nodes) into N
// df.node instances where it was, each with its device, `instance` and `dispatch`, and merges
// each output port of the instances with one df.gather that takes the node's place in every use.
// A node fed by a balance scatter or gather node dispatches by route label, any other round robin.
// RUN: dfir-opt %s -p replicate-instances | filecheck %s
// The output parses back and verifies: instances share a name, gathers take instances in order.
// RUN: dfir-opt %s -p replicate-instances | dfir-opt | filecheck %s

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @split_pp [#df.func<"split"(0, 1) -> (0, 1)>] {kind = "py_func"}

// One node on two devices between two single-instance nodes.
// CHECK-LABEL: df.graph @two_instances
// CHECK-NEXT:    %{{.*}} = df.data "in" index 0
// CHECK-NEXT:    %[[FIRST:.*]] = df.node "first"(%{{.*}}) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// CHECK-NEXT:    %[[W0:.*]] = df.node "work"(%[[FIRST]]) pp @unary_pp {loc = "w.py:2", device = #df.device<0:0:0>, instance = #df.instance<0 of 2>, dispatch = "round_robin"} : 1 -> 1
// CHECK-NEXT:    %[[W1:.*]] = df.node "work"(%[[FIRST]]) pp @unary_pp {loc = "w.py:2", device = #df.device<0:0:1>, instance = #df.instance<1 of 2>, dispatch = "round_robin"} : 1 -> 1
// CHECK-NEXT:    %[[G:.*]] = df.gather %[[W0]], %[[W1]]
// CHECK-NEXT:    %[[LAST:.*]] = df.node "last"(%[[G]]) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// CHECK-NEXT:    df.output %[[LAST]], %[[G]]
// CHECK-NEXT:  }
df.graph @two_instances {
  %in = df.data "in" index 0
  %first = df.node "first"(%in) pp @unary_pp {device = #df.device<host>} : 1 -> 1
  %work = df.node "work"(%first) pp @unary_pp {loc = "w.py:2", devices = [#df.device<0:0:0>, #df.device<0:0:1>]} : 1 -> 1
  %last = df.node "last"(%work) pp @unary_pp {device = #df.device<host>} : 1 -> 1
  df.output %last, %work
}

// A scatter node feeding a replicated node with two outputs: route-label dispatch, one gather per
// port; the gather node after it keeps its single instance. Devices keep their instance order
// (host CPU and numa ids included), and a node with one entry in `devices` just gets `device`.
// CHECK-LABEL: df.graph @balanced
// CHECK-NEXT:    %{{.*}} = df.data "in" index 0
// CHECK-NEXT:    %[[S0:.*]], %[[S1:.*]] = df.node "scatter"(%{{.*}}, %{{.*}}) pp @split_pp {balance = #df.balance<scatter>, device = #df.device<host>} : 2 -> 2
// CHECK-NEXT:    %[[A0:.*]], %[[B0:.*]] = df.node "work"(%[[S0]], %[[S1]]) pp @split_pp {device = #df.device<0:0:1:1>, instance = #df.instance<0 of 3>, dispatch = "route_label"} : 2 -> 2
// CHECK-NEXT:    %[[A1:.*]], %[[B1:.*]] = df.node "work"(%[[S0]], %[[S1]]) pp @split_pp {device = #df.device<0:0:-1:0>, instance = #df.instance<1 of 3>, dispatch = "route_label"} : 2 -> 2
// CHECK-NEXT:    %[[A2:.*]], %[[B2:.*]] = df.node "work"(%[[S0]], %[[S1]]) pp @split_pp {device = #df.device<0:0:0:0>, instance = #df.instance<2 of 3>, dispatch = "route_label"} : 2 -> 2
// CHECK-NEXT:    %[[GA:.*]] = df.gather %[[A0]], %[[A1]], %[[A2]]
// CHECK-NEXT:    %[[GB:.*]] = df.gather %[[B0]], %[[B1]], %[[B2]]
// CHECK-NEXT:    %{{.*}}, %{{.*}} = df.node "gather"(%[[GA]], %[[GB]]) pp @split_pp {balance = #df.balance<gather>, device = #df.device<0:0:2>} : 2 -> 2
// CHECK-NEXT:    df.output
// CHECK-NEXT:  }
df.graph @balanced {
  %in = df.data "in" index 0
  %s:2 = df.node "scatter"(%in, %in) pp @split_pp {balance = #df.balance<scatter>, device = #df.device<host>} : 2 -> 2
  %w:2 = df.node "work"(%s#0, %s#1) pp @split_pp {devices = [#df.device<0:0:1:1>, #df.device<0:0:-1:0>, #df.device<0:0:0:0>]} : 2 -> 2
  %g:2 = df.node "gather"(%w#0, %w#1) pp @split_pp {balance = #df.balance<gather>, devices = [#df.device<0:0:2>]} : 2 -> 2
  df.output %g#0, %g#1
}

// A replicated node fed through the gather of another replicated node that scatters: the
// producers behind a df.gather decide the dispatch too.
// CHECK-LABEL: df.graph @chained
// CHECK:         %[[G:.*]] = df.gather %{{.*}}, %{{.*}}
// CHECK-NEXT:    %{{.*}} = df.node "b"(%[[G]]) pp @unary_pp {device = #df.device<0:0:0>, instance = #df.instance<0 of 2>, dispatch = "route_label"} : 1 -> 1
// CHECK-NEXT:    %{{.*}} = df.node "b"(%[[G]]) pp @unary_pp {device = #df.device<0:0:1>, instance = #df.instance<1 of 2>, dispatch = "route_label"} : 1 -> 1
// CHECK-NEXT:    df.gather
df.graph @chained {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @unary_pp {balance = #df.balance<scatter>, devices = [#df.device<0:0:0>, #df.device<0:0:1>]} : 1 -> 1
  %b = df.node "b"(%a) pp @unary_pp {devices = [#df.device<0:0:0>, #df.device<0:0:1>]} : 1 -> 1
  df.output %b
}
