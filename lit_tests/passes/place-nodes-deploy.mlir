// With `deploy-info`, place-nodes places every node as the file says, by name or alias: one
// device is `device`, several are `devices` in instance order (sorted by ids unless the file
// keeps its order), `-1` is the host and `0:0:-1:0` a server's host CPU; an invoke's devices are
// recorded in `invokes`. A device set before the pass is replaced. `resource-config` declares
// the devices (Inputs/place-nodes/).
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy.json --resource-config=%S/Inputs/place-nodes/resources.json | filecheck %s --check-prefixes=CHECK,SORTED
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy.json | filecheck %s --check-prefixes=CHECK,SORTED
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-ordered.json | filecheck %s --check-prefixes=CHECK,ORDERED
// The output parses back, and replicate-instances makes one node per instance of it.
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy.json | dfir-opt -p replicate-instances | filecheck %s --check-prefix=REPLICATED

df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
ge.graph @mlp {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @invoking_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"} {
  df.invoked_closure "mlp" @mlp_pp
  df.invoked_closure "other" @mlp_pp
}

// CHECK-LABEL: df.graph @deployed
// CHECK-NEXT:    %deployed_in = df.data "in" index 0
// CHECK-NEXT:    %deployed_c = df.node "c"(%deployed_in) pp @unary_pp {device = #df.device<0:0:2:0>} : 1 -> 1
// CHECK-NEXT:    %deployed_x = df.node "x"(%deployed_c) pp @unary_pp {alias = "b_alias", device = #df.device<0:0:1>} : 1 -> 1
// CHECK-NEXT:    %deployed_a = df.node "a"(%deployed_x) pp @unary_pp {device = #df.device<0:0:1>} : 1 -> 1
// SORTED-NEXT:   %deployed_work = df.node "work"(%deployed_a) pp @invoking_pp {loc = "w.py:1", devices = [#df.device<0:0:0>, #df.device<0:0:1>], invokes = {mlp = [#df.device<0:0:2>, #df.device<0:0:3>]}} : 1 -> 1
// ORDERED-NEXT:  %deployed_work = df.node "work"(%deployed_a) pp @invoking_pp {loc = "w.py:1", devices = [#df.device<0:0:1>, #df.device<0:0:0>], invokes = {mlp = [#df.device<0:0:3>, #df.device<0:0:2>]}} : 1 -> 1
// CHECK-NEXT:    %deployed_numa = df.node "numa"(%deployed_work) pp @unary_pp {devices = [#df.device<0:0:0:0>, #df.device<0:0:0:1>, #df.device<0:0:1:0>, #df.device<0:0:1:1>]} : 1 -> 1
// CHECK-NEXT:    %deployed_on_host = df.node "on_host"(%deployed_numa) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// CHECK-NEXT:    %deployed_host_cpu = df.node "host_cpu"(%deployed_on_host) pp @unary_pp {device = #df.device<0:0:-1:0>} : 1 -> 1
// CHECK-NEXT:    df.output %deployed_host_cpu
// CHECK-NEXT:  }

// REPLICATED:      df.node "work"(%{{.*}}) pp @invoking_pp {loc = "w.py:1", invokes = {mlp = [#df.device<0:0:2>, #df.device<0:0:3>]}, device = #df.device<0:0:0>, instance = #df.instance<0 of 2>, dispatch = "round_robin"} : 1 -> 1
// REPLICATED-NEXT: df.node "work"(%{{.*}}) pp @invoking_pp {loc = "w.py:1", invokes = {mlp = [#df.device<0:0:2>, #df.device<0:0:3>]}, device = #df.device<0:0:1>, instance = #df.instance<1 of 2>, dispatch = "round_robin"} : 1 -> 1
// REPLICATED-NEXT: df.gather
// REPLICATED-NEXT: df.node "numa"(%{{.*}}) pp @unary_pp {device = #df.device<0:0:0:0>, instance = #df.instance<0 of 4>, dispatch = "round_robin"} : 1 -> 1
// REPLICATED-NEXT: df.node "numa"(%{{.*}}) pp @unary_pp {device = #df.device<0:0:0:1>, instance = #df.instance<1 of 4>, dispatch = "round_robin"} : 1 -> 1
// REPLICATED-NEXT: df.node "numa"(%{{.*}}) pp @unary_pp {device = #df.device<0:0:1:0>, instance = #df.instance<2 of 4>, dispatch = "round_robin"} : 1 -> 1
// REPLICATED-NEXT: df.node "numa"(%{{.*}}) pp @unary_pp {device = #df.device<0:0:1:1>, instance = #df.instance<3 of 4>, dispatch = "round_robin"} : 1 -> 1
// REPLICATED-NEXT: df.gather
df.graph @deployed attributes {options = {}} {
  %deployed_in = df.data "in" index 0
  %deployed_c = df.node "c"(%deployed_in) pp @unary_pp : 1 -> 1
  %deployed_x = df.node "x"(%deployed_c) pp @unary_pp {alias = "b_alias"} : 1 -> 1
  %deployed_a = df.node "a"(%deployed_x) pp @unary_pp {device = #df.device<1:0:3>} : 1 -> 1
  %deployed_work = df.node "work"(%deployed_a) pp @invoking_pp {loc = "w.py:1"} : 1 -> 1
  %deployed_numa = df.node "numa"(%deployed_work) pp @unary_pp : 1 -> 1
  %deployed_on_host = df.node "on_host"(%deployed_numa) pp @unary_pp : 1 -> 1
  %deployed_host_cpu = df.node "host_cpu"(%deployed_on_host) pp @unary_pp : 1 -> 1
  df.output %deployed_host_cpu
}
