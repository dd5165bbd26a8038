// A default-device with the wrong number of ids is reported as the device attribute's error.
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:1"}' --verify-diagnostics | filecheck %s --check-prefix=TWO
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:0:1:0:2"}' --verify-diagnostics | filecheck %s --check-prefix=FIVE

// TWO: #df.device has 2 ids, expected 3 or 4 (cluster:server:device[:numa]) or host
// FIVE: #df.device has 5 ids, expected 3 or 4 (cluster:server:device[:numa]) or host

// A deploy info that does not fit the graph is reported with the file and the JSON path: a name
// no node has, a node it does not place, a node placed by both its name and its alias, an
// invoke of no invoked closure, an invoke placing a sub-FlowGraph; and a device the resource
// config lacks. The files are parsed by dfir-opt (passes read no files): their own errors
// (dfir.frontend.deploy) come through as they are, and dfir-opt exits with 1.
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-unknown-node.json --verify-diagnostics | filecheck %s --check-prefix=GHOST
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-unplaced.json --verify-diagnostics | filecheck %s --check-prefix=UNPLACED
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-name-and-alias.json --verify-diagnostics | filecheck %s --check-prefix=BOTH
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-unknown-invoke.json --verify-diagnostics | filecheck %s --check-prefix=INVOKE
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-invoke-file.json --verify-diagnostics | filecheck %s --check-prefix=SUBGRAPH
// RUN: not dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-undeclared.json --resource-config=%S/Inputs/place-nodes/resources-one-device.json 2>&1 | filecheck %s --check-prefix=UNDECLARED
// RUN: dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-unknown-node.json --resource-config=%S/Inputs/place-nodes/resources.json --verify-diagnostics | filecheck %s --check-prefix=GHOST
// RUN: not dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-twice.json 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-empty.json 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/deploy-truncated.json 2>&1 | filecheck %s --check-prefix=TRUNCATED
// RUN: not dfir-opt %s -p place-nodes --deploy-info=%S/Inputs/place-nodes/no-such-file.json 2>&1 | filecheck %s --check-prefix=MISSING

// dfir-opt's deploy flags need place-nodes, and --resource-config needs --deploy-info.
// RUN: not dfir-opt %s -p sort-nodes --deploy-info=%S/Inputs/place-nodes/deploy.json 2>&1 | filecheck %s --check-prefix=NO-PASS
// RUN: not dfir-opt %s -p place-nodes --resource-config=%S/Inputs/place-nodes/resources.json 2>&1 | filecheck %s --check-prefix=NO-INFO
// NO-PASS: dfir-opt: --deploy-info needs place-nodes in the pass pipeline
// NO-INFO: dfir-opt: --resource-config needs --deploy-info

// GHOST: file={{.*}}deploy-unknown-node.json; $.deploy_info[1].flow_node_name: no node is named or aliased 'ghost'; the nodes are ['a', 'b']
// UNPLACED: file={{.*}}deploy-unplaced.json; $: node "b" (b.py:2) is not placed: name it or its alias in a flow_node_list or deploy_info entry
// BOTH: file={{.*}}deploy-name-and-alias.json; $.deploy_info[2].flow_node_name: node 'b' is placed by its alias 'b_alias' and by its name at $.deploy_info[1].flow_node_name
// INVOKE: file={{.*}}deploy-unknown-invoke.json; $.batch_deploy_info[0].invoke_list[0].invoke_name: node 'a' has no invoked closure 'mpl'; its closures are ['mlp', 'other']
// SUBGRAPH: file={{.*}}deploy-invoke-file.json; $.batch_deploy_info[0].invoke_list[0].deploy_info_file: invoke 'mlp' runs an AscendGraph; a deploy_info_file places a sub-FlowGraph: give logic_device_list
// UNDECLARED: deploy info {{.*}}deploy-undeclared.json $.deploy_info[1].flow_node_name (node 'b') names device 0:0:1, which the resource config does not declare
// TWICE: file={{.*}}deploy-twice.json; $.deploy_info[0].flow_node_name:
// EMPTY: file={{.*}}deploy-empty.json; $:
// TRUNCATED: file={{.*}}deploy-truncated.json; the deploy info is not valid JSON: Expecting value at line 1 column 18
// MISSING: file={{.*}}no-such-file.json; cannot read the deploy info: No such file or directory

df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
ge.graph @mlp {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @invoking_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"} {
  df.invoked_closure "other" @mlp_pp
  df.invoked_closure "mlp" @mlp_pp
}

df.graph @g attributes {options = {}} {
  %in = df.data "in" index 0
  %a = df.node "a"(%in) pp @invoking_pp {loc = "a.py:1"} : 1 -> 1
  %b = df.node "b"(%a) pp @unary_pp {loc = "b.py:2", alias = "b_alias"} : 1 -> 1
  df.output %b
}
