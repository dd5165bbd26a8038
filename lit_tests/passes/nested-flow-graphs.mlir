// A sub-FlowGraph is a `df.graph` that a `df.flow_graph_pp` runs: as a node's process point
// (@inner, run by node "sub") or as a UDF's invoked closure (@invoked, key "flow" of @caller_pp).
// Every pass handles its nodes like any other; this file runs the nested IR through each one.
// RUN: dfir-opt %s | dfir-opt | filecheck %s --check-prefix=ROUND
// RUN: dfir-opt %s -p sort-nodes | filecheck %s --check-prefix=SORT
// RUN: dfir-opt %s -p fingerprint-subgraphs | filecheck %s --check-prefix=KEY
// RUN: dfir-opt %s -p place-nodes | filecheck %s --check-prefix=PARENT
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/nested/deploy.json | filecheck %s --check-prefix=DEPLOY
// RUN: dfir-opt %s -p place-nodes,replicate-instances --deploy-info=%S/Inputs/nested/deploy.json | filecheck %s --check-prefix=REPLICATE
// RUN: dfir-opt %s -p align-inputs | filecheck %s --check-prefix=ALIGN
// The parent of a sub-FlowGraph has one instance: a node running one, and a UDF invoking one.
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/nested/deploy-two-parents.json --verify-diagnostics | filecheck %s --check-prefix=TWO-PARENTS
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/nested/deploy-two-callers.json --verify-diagnostics | filecheck %s --check-prefix=TWO-CALLERS
// TWO-PARENTS: file={{.*}}deploy-two-parents.json; $.batch_deploy_info[1].flow_node_list[0]: node "sub" runs sub-FlowGraph @inner, so it cannot be multi-instance, but it has 2 instances
// TWO-CALLERS: file={{.*}}deploy-two-callers.json; $.batch_deploy_info[1].invoke_list[0].invoke_name: invoke 'flow' runs a sub-FlowGraph, so its parent cannot be multi-instance, but the parent's logic_device_list '0:0:0,0:0:1' has 2 devices

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @pair_pp [#df.func<"pair"(0, 1) -> (0)>] {kind = "py_func"}

// The sub-FlowGraph of node "sub": written out of order, with an alignment of its own; without
// a deploy info its nodes go where the parent is, with one the parent's invoke "inner" (its
// FlowGraphProcessPoint's `point_name`) gives their devices.
// ROUND-LABEL: df.graph @inner attributes {align = #df.align<cache = 4, timeout = 100>}
// ROUND:       df.flow_graph_pp @inner_pp graph @inner {point_name = "inner"}
// SORT-LABEL:  df.graph @inner
// SORT-NEXT:     df.data "x" index 0
// SORT-NEXT:     df.data "y" index 1
// SORT-NEXT:     df.node "once"
// SORT-NEXT:     df.node "both"
// KEY:         df.graph @inner attributes {align = #df.align<cache = 4, timeout = 100>, fingerprint = "sha256:
// KEY:         df.flow_graph_pp @inner_pp graph @inner {point_name = "inner", fingerprint = "sha256:
// PARENT-LABEL: df.graph @inner
// PARENT:        df.node "both"({{.*}}) pp @pair_pp {device = #df.device<host>} : 2 -> 1
// PARENT:        df.node "once"({{.*}}) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// DEPLOY-LABEL: df.graph @inner
// DEPLOY:        df.node "both"({{.*}}) pp @pair_pp {devices = [#df.device<0:0:2>, #df.device<0:0:3>]} : 2 -> 1
// DEPLOY:        df.node "once"({{.*}}) pp @unary_pp {devices = [#df.device<0:0:2>, #df.device<0:0:3>]} : 1 -> 1
// REPLICATE-LABEL: df.graph @inner
// REPLICATE-COUNT-2: df.node "both"
// REPLICATE:     df.gather
// ALIGN-LABEL:  df.graph @inner
// ALIGN:         df.node "both"({{.*}}) pp @pair_pp {align = #df.align<cache = 4, timeout = 100>} : 2 -> 1
df.graph @inner attributes {align = #df.align<cache = 4, timeout = 100>} {
  %x = df.data "x" index 0
  %y = df.data "y" index 1
  %both = df.node "both"(%once, %y) pp @pair_pp : 2 -> 1
  %once = df.node "once"(%x) pp @unary_pp : 1 -> 1
  df.output %both
}
df.flow_graph_pp @inner_pp graph @inner {point_name = "inner"}

// The sub-FlowGraph UDF @caller_pp invokes as closure "flow", placed by the invoke's nested file.
// PARENT-LABEL: df.graph @invoked
// PARENT:        df.node "once"({{.*}}) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// DEPLOY-LABEL: df.graph @invoked
// DEPLOY-NEXT:   df.data
// DEPLOY-NEXT:   df.node "once"({{.*}}) pp @unary_pp {device = #df.device<0:0:1>} : 1 -> 1
// DEPLOY-NEXT:   df.node "twice"({{.*}}) pp @unary_pp {device = #df.device<host>} : 1 -> 1
df.graph @invoked {
  %v = df.data "v" index 0
  %once = df.node "once"(%v) pp @unary_pp : 1 -> 1
  %twice = df.node "twice"(%once) pp @unary_pp : 1 -> 1
  df.output %twice
}
df.flow_graph_pp @invoked_pp graph @invoked
df.func_pp @caller_pp [#df.func<"call"(0) -> (0)>] {kind = "py_func"} {
  df.invoked_closure "flow" @invoked_pp
}

// The top-level graph: the one no df.flow_graph_pp runs. Its fingerprint covers both sub-graphs.
// KEY-LABEL:   df.graph @top attributes {fingerprint = "sha256:
// DEPLOY-LABEL: df.graph @top
// DEPLOY:        df.node "pre"({{.*}}) pp @unary_pp {device = #df.device<0:0:0>} : 1 -> 1
// DEPLOY:        df.node "sub"({{.*}}) pp @inner_pp {device = #df.device<0:0:1>} : 2 -> 1
// DEPLOY:        df.node "caller"({{.*}}) pp @caller_pp {device = #df.device<0:0:0>} : 1 -> 1
df.graph @top {
  %a = df.data "a" index 0
  %pre = df.node "pre"(%a) pp @unary_pp : 1 -> 1
  %sub = df.node "sub"(%pre, %a) pp @inner_pp : 2 -> 1
  %caller = df.node "caller"(%sub) pp @caller_pp : 1 -> 1
  df.output %caller
}
