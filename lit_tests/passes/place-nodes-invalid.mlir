// A default-device with the wrong number of ids is reported as the device attribute's error.
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:1"}' --verify-diagnostics | filecheck %s --check-prefix=TWO
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:0:1:0:2"}' --verify-diagnostics | filecheck %s --check-prefix=FIVE

// TWO: #df.device has 2 ids, expected 3 or 4 (cluster:server:device[:numa]) or host
// FIVE: #df.device has 5 ids, expected 3 or 4 (cluster:server:device[:numa]) or host

// A deploy info defect is reported with the file and the JSON path of the entry.
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy-unknown-node.json"}' --verify-diagnostics | filecheck %s --check-prefix=GHOST
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy-range.json"}' --verify-diagnostics | filecheck %s --check-prefix=RANGE
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy-twice.json"}' --verify-diagnostics | filecheck %s --check-prefix=TWICE
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy-empty.json"}' --verify-diagnostics | filecheck %s --check-prefix=EMPTY
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy-truncated.json"}' --verify-diagnostics | filecheck %s --check-prefix=TRUNCATED
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/no-such-file.json"}' --verify-diagnostics | filecheck %s --check-prefix=MISSING
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy-unknown-node.json" resource-config="%S/Inputs/place-nodes/resources-one-device.json"}' --verify-diagnostics | filecheck %s --check-prefix=GHOST
// RUN: dfir-opt %s -p 'place-nodes{deploy-info="%S/Inputs/place-nodes/deploy.json" resource-config="%S/Inputs/place-nodes/resources-one-device.json"}' --verify-diagnostics | filecheck %s --check-prefix=UNDECLARED

// GHOST: file={{.*}}deploy-unknown-node.json; $.deploy_info[1].flow_node_name: no node is named or aliased 'ghost'; the nodes are ['a']
// RANGE: file={{.*}}deploy-range.json; $.batch_deploy_info[0].logic_device_list: '0:0:0~1' is a range; device ranges are not supported yet, give one device
// TWICE: file={{.*}}deploy-twice.json; $.deploy_info[0].flow_node_name: node 'a' is already placed by $.batch_deploy_info[0].flow_node_list[0]
// EMPTY: file={{.*}}deploy-empty.json; $: expected 'deploy_info' or 'batch_deploy_info'
// TRUNCATED: file={{.*}}deploy-truncated.json; the deploy info is not valid JSON: Expecting value: line 1 column 18 (char 17)
// MISSING: file={{.*}}no-such-file.json; cannot read the deploy info: No such file or directory
// UNDECLARED: file={{.*}}resources-one-device.json; deploy info $.deploy_info[0].flow_node_name (node 'c') names device 0:0:2:0, which the resource config does not declare (it declares 0:0:1)

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}

df.graph @wrong_id_count attributes {options = {}} {
  %in = df.data "in" index 0
  %out = df.node "a"(%in) pp @unary_pp : 1 -> 1
  df.output %out
}
