// Every verifier error of the df dialect, once. Each case names its graph or process point after
// the behaviour; the CHECK line is the exact diagnostic.
// RUN: dfir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// A node's operand count must equal its input_num.
// CHECK: node "add": expected 2 inputs (input_num), got 1
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @too_few_inputs attributes {options = {}} {
  %x = df.data "x" index 0
  %sum = df.node "add"(%x) pp @add_pp : 2 -> 1
  df.output %sum
}

// -----

// A node's result count must equal its output_num (only the generic form can disagree); the
// node's `loc` appears in its label.
// CHECK: node "split" (split.py:7): expected 2 outputs (output_num), got 1
df.func_pp @split_pp [#df.func<"split"(0) -> (0, 1)>] {kind = "py_func"}
df.graph @too_few_outputs attributes {options = {}} {
  %x = df.data "x" index 0
  %half = "df.node"(%x) <{node_name = "split", pp = @split_pp, input_num = 1 : i64, output_num = 2 : i64}> {loc = "split.py:7"} : (!df.flow) -> !df.flow
  df.output %half
}

// -----

// A node must name an existing process point.
// CHECK: node "relu": process point @missing_pp does not exist
df.graph @missing_process_point attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @missing_pp : 1 -> 1
  df.output %y
}

// -----

// A symbol that is not a process point (here a df.graph) does not count as one.
// CHECK: node "call": process point @callee does not exist
df.graph @callee attributes {options = {}} {
  df.output
}
df.graph @graph_as_process_point attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "call"(%x) pp @callee : 1 -> 1
  df.output %y
}

// -----

// The process point's funcs must own every input port of the node.
// CHECK: node "add": the funcs of @half_pp own input ports [0], expected each of 0..1 exactly once
df.func_pp @half_pp [#df.func<"add"(0) -> (0)>] {kind = "py_func"}
df.graph @input_port_not_owned attributes {options = {}} {
  %x = df.data "x" index 0
  %sum = df.node "add"(%x, %x) pp @half_pp : 2 -> 1
  df.output %sum
}

// -----

// No input port may be owned by two funcs.
// CHECK: node "both": the funcs of @overlap_pp own input ports [0, 0], expected each of 0..0 exactly once
df.func_pp @overlap_pp [#df.func<"f"(0) -> (0)>, #df.func<"g"(0) -> ()>] {kind = "py_func"}
df.graph @input_port_owned_twice attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "both"(%x) pp @overlap_pp : 1 -> 1
  df.output %y
}

// -----

// The process point's funcs must own every output port of the node.
// CHECK: node "split": the funcs of @one_out_pp own output ports [0], expected each of 0..1 exactly once
df.func_pp @one_out_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @output_port_not_owned attributes {options = {}} {
  %x = df.data "x" index 0
  %y:2 = df.node "split"(%x) pp @one_out_pp : 1 -> 2
  df.output %y#0, %y#1
}

// -----

// Nodes of a graph may not form a cycle.
// CHECK: df.graph @cycle: the graph has a cycle: pong -> ping -> pong
df.func_pp @pass_pp [#df.func<"f"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @cycle attributes {options = {}} {
  %x = df.data "x" index 0
  %ping = df.node "ping"(%x, %pong) pp @pass_pp : 2 -> 1
  %pong = df.node "pong"(%ping, %x) pp @pass_pp : 2 -> 1
  df.output %pong
}

// -----

// A node may not consume its own output.
// CHECK: df.graph @self_loop: the graph has a cycle: echo -> echo
df.func_pp @echo_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @self_loop attributes {options = {}} {
  %echo = df.node "echo"(%echo) pp @echo_pp : 1 -> 1
  df.output %echo
}

// -----

// Every flow data must feed a node or an output.
// CHECK: df.graph @unused_flow_data: flow data "unused" is not used by any node or output
df.graph @unused_flow_data attributes {options = {}} {
  %used = df.data "used" index 0
  %unused = df.data "unused" index 1
  df.output %used
}

// -----

// Flow data names are unique within a graph.
// CHECK: df.graph @duplicate_flow_data: flow data "x" is defined twice
df.graph @duplicate_flow_data attributes {options = {}} {
  %first = df.data "x" index 0
  %second = df.data "x" index 1
  df.output %first, %second
}

// -----

// Flow data indexes number the graph's inputs 0..n-1, without gaps.
// CHECK: df.graph @index_gap: flow data indexes [0, 2] must be 0..1, each used once
df.graph @index_gap attributes {options = {}} {
  %a = df.data "a" index 0
  %b = df.data "b" index 2
  df.output %a, %b
}

// -----

// ... and without repeats.
// CHECK: df.graph @index_repeated: flow data indexes [1, 1] must be 0..1, each used once
df.graph @index_repeated attributes {options = {}} {
  %a = df.data "a" index 1
  %b = df.data "b" index 1
  df.output %a, %b
}

// -----

// Node names are unique within a graph; both nodes are named with their locations.
// CHECK: df.graph @duplicate_node_names: duplicate node name: node "relu" (a.py:1) and node "relu" (a.py:2)
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @duplicate_node_names attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {loc = "a.py:1"} : 1 -> 1
  %z = df.node "relu"(%y) pp @relu_pp {loc = "a.py:2"} : 1 -> 1
  df.output %z
}

// -----

// A graph's last op is its df.output.
// CHECK: Operation df.node terminates block in single-block region but is not a terminator
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @no_output attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp : 1 -> 1
}

// -----

// df.output terminates the graph: nothing may follow it.
// CHECK: 'df.output' must be the last operation in its parent block
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @op_after_output attributes {options = {}} {
  %x = df.data "x" index 0
  df.output %x
  %y = df.node "relu"(%x) pp @relu_pp : 1 -> 1
}

// -----

// A graph body is one block, even when empty.
// CHECK: Region 'body' at position 0 expected a single block, but got 0 blocks
df.graph @empty_region attributes {options = {}} {
}

// -----

// An empty graph block still needs its df.output.
// CHECK: Operation df.graph contains empty block in single-block region that expects at least a terminator
df.graph @empty_block attributes {options = {}} {
^bb0:
}

// -----

// A graph process point must name a ge.graph of the module.
// CHECK: df.graph_pp @missing_graph_pp: GE graph @missing does not exist
df.graph_pp @missing_graph_pp graph @missing {framework = "ge"}

// -----

// A df.graph of the same name is not a GE graph.
// CHECK: df.graph_pp @flow_graph_pp: GE graph @flow does not exist
df.graph_pp @flow_graph_pp graph @flow {framework = "ge"}
df.graph @flow attributes {options = {}} {
  df.output
}

// -----

// Process points are module symbols: two may not share a name.
// CHECK: Redefinition of symbol "twice_pp"
df.func_pp @twice_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.func_pp @twice_pp [#df.func<"g"(0) -> (0)>] {kind = "py_func"}

// -----

// The funcs of a function process point are #df.func attributes.
// CHECK: "f" should be of base attribute df.func
df.func_pp @not_func_pp ["f"] {kind = "py_func"}

// -----

// df.data lives only in a df.graph.
// CHECK: 'df.data' expects parent op 'df.graph'
%x = df.data "x" index 0

// -----

// df.node lives only in a df.graph.
// CHECK: 'df.node' expects parent op 'df.graph'
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
%y = df.node "relu"() pp @relu_pp : 0 -> 1

// -----

// df.output lives only in a df.graph.
// CHECK: 'df.output' expects parent op 'df.graph'
df.output

// -----

// df.invoked_closure lives only in a df.func_pp.
// CHECK: 'df.invoked_closure' expects parent op 'df.func_pp'
df.invoked_closure "invoke" @some_pp

// -----

// A node's process point is a symbol reference, not a string.
// CHECK: invalid.mlir:[[# @LINE + 4]]:38
// CHECK: expected a process point symbol such as @add_pp, got "add_pp"
df.graph @string_process_point attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "add"(%x) pp "add_pp" : 1 -> 1
  df.output %y
}

// -----

// A graph process point's graph is a symbol reference, not a string.
// CHECK: invalid.mlir:[[# @LINE + 2]]:42
// CHECK: expected a GE graph symbol such as @mlp, got "mlp"
df.graph_pp @string_graph_pp graph "mlp" {framework = "ge"}

// -----

// #df.align caches at most 1024 groups.
// CHECK: #df.align cache 1025 is outside [0, 1024]
df.graph @cache_too_large attributes {align = #df.align<cache = 1025, timeout = 100>} {
  df.output
}

// -----

// #df.align cache is not negative.
// CHECK: #df.align cache -1 is outside [0, 1024]
df.graph @cache_negative attributes {align = #df.align<cache = -1, timeout = 100>} {
  df.output
}

// -----

// #df.align timeout 0 means neither "forever" (-1) nor a wait.
// CHECK: #df.align timeout 0 must be -1 or in (0, 600000] ms
df.graph @timeout_zero attributes {align = #df.align<cache = 1, timeout = 0>} {
  df.output
}

// -----

// #df.align waits at most ten minutes.
// CHECK: #df.align timeout 600001 must be -1 or in (0, 600000] ms
df.graph @timeout_too_long attributes {align = #df.align<cache = 1, timeout = 600001>} {
  df.output
}

// -----

// -1 is the only negative #df.align timeout.
// CHECK: #df.align timeout -2 must be -1 or in (0, 600000] ms
df.graph @timeout_negative attributes {align = #df.align<cache = 1, timeout = -2>} {
  df.output
}

// -----

// A #df.instance index is below the replica count.
// CHECK: #df.instance index 2 is outside [0, 2)
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @instance_out_of_range attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {instance = #df.instance<2 of 2>} : 1 -> 1
  df.output %y
}

// -----

// A node replicated zero times has no valid #df.instance.
// CHECK: #df.instance index 0 is outside [0, 0)
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @instance_of_zero attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {instance = #df.instance<0 of 0>} : 1 -> 1
  df.output %y
}

// -----

// A #df.device is host or 3 or 4 ids, never 2.
// CHECK: #df.device has 2 ids, expected 3 or 4 (cluster:server:device[:numa]) or host
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @device_two_ids attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {device = #df.device<0:1>} : 1 -> 1
  df.output %y
}

// -----

// ... nor 5.
// CHECK: #df.device has 5 ids, expected 3 or 4 (cluster:server:device[:numa]) or host
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @device_five_ids attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {device = #df.device<0:0:1:0:2>} : 1 -> 1
  df.output %y
}

// -----

// A single -1 is the plan's spelling of the host, not the IR's.
// CHECK: #df.device has 1 ids, expected 3 or 4 (cluster:server:device[:numa]) or host
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @device_minus_one attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {device = #df.device<-1>} : 1 -> 1
  df.output %y
}

// -----

// A balance role is scatter or gather.
// CHECK: invalid.mlir:[[# @LINE + 5]]:62
// CHECK: Expected one of 'gather', 'scatter'
df.func_pp @relu_pp [#df.func<"relu"(0) -> (0)>] {kind = "py_func"}
df.graph @balance_role attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "relu"(%x) pp @relu_pp {balance = #df.balance<both>} : 1 -> 1
  df.output %y
}

// -----

// A UDF payload is base64 text (the printer writes it unescaped).
// CHECK: df.func_pp @bad_payload_pp: payload is not base64 text
df.func_pp @bad_payload_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"} payload "a\"b"

// -----

// The attributes the place phase writes on a node are declared: a device must be a #df.device.
// CHECK: "0:0:1" should be of base attribute df.device
df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @device_not_an_attribute attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "f"(%x) pp @f_pp {device = "0:0:1"} : 1 -> 1
  df.output %y
}

// -----

// ... and every entry of `devices` too.
// CHECK: "host" should be of base attribute df.device
df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @devices_entry_not_an_attribute attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "f"(%x) pp @f_pp {devices = [#df.device<0:0:1>, "host"]} : 1 -> 1
  df.output %y
}

// -----

// An instance is a #df.instance.
// CHECK: 0 : i64 should be of base attribute df.instance
df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @instance_not_an_attribute attributes {options = {}} {
  %x = df.data "x" index 0
  %y = df.node "f"(%x) pp @f_pp {instance = 0} : 1 -> 1
  df.output %y
}

// -----

// A df.flow_graph_pp runs a df.graph of the module.
// CHECK: df.flow_graph_pp @missing_pp: sub-FlowGraph @missing does not exist
df.flow_graph_pp @missing_pp graph @missing

// -----

// Sub-FlowGraphs may not run themselves, directly or through others.
// CHECK: df.flow_graph_pp @a_pp: sub-FlowGraphs form a cycle: @a_pp -> @b_pp -> @a_pp
df.graph @a {
  %x = df.data "x" index 0
  %y = df.node "runs_b"(%x) pp @b_pp : 1 -> 1
  df.output %y
}
df.flow_graph_pp @a_pp graph @a
df.graph @b {
  %x = df.data "x" index 0
  %y = df.node "runs_a"(%x) pp @a_pp : 1 -> 1
  df.output %y
}
df.flow_graph_pp @b_pp graph @b

// -----

// A node running a sub-FlowGraph has its inputs and outputs.
// CHECK: node "wrong_ports": expected 1 inputs and 1 outputs (sub-FlowGraph @one_in), got 2 -> 1
df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}
df.graph @one_in {
  %x = df.data "x" index 0
  %y = df.node "inner"(%x) pp @unary_pp : 1 -> 1
  df.output %y
}
df.flow_graph_pp @one_in_pp graph @one_in
df.graph @wrong_arity {
  %a = df.data "a" index 0
  %b = df.data "b" index 1
  %y = df.node "wrong_ports"(%a, %b) pp @one_in_pp : 2 -> 1
  df.output %y
}

// -----

// A CountBatch needs a positive batch size.
// CHECK: #df.count_batch on input 0: CountBatch.batch_size should be larger than zero, but got 0
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @zero_batch_size {
  %x = df.data "x" index 0
  %n = df.node "n"(%x) pp @id_pp {batch = [#df.count_batch<input = 0, size = 0, stride = 0, timeout = 0>]} : 1 -> 1
  df.output %n
}

// -----

// The sliding stride lies in [0, batch_size].
// CHECK: #df.count_batch on input 0: CountBatch.slide_stride should be in [0, 4], but got 5
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @stride_past_batch {
  %x = df.data "x" index 0
  %n = df.node "n"(%x) pp @id_pp {batch = [#df.count_batch<input = 0, size = 4, stride = 5, timeout = 0>]} : 1 -> 1
  df.output %n
}

// -----

// The timeout lies in [0, 4294967295) ms.
// CHECK: #df.count_batch on input 0: CountBatch.timeout should be in [0, 4294967295) ms, but got -1
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @negative_timeout {
  %x = df.data "x" index 0
  %n = df.node "n"(%x) pp @id_pp {batch = [#df.count_batch<input = 0, size = 4, stride = 0, timeout = -1>]} : 1 -> 1
  df.output %n
}

// -----

// A time window is -1 or positive.
// CHECK: #df.time_batch on input 0: TimeBatch.time_window should be -1 or larger than zero, but got 0
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @zero_window {
  %x = df.data "x" index 0
  %n = df.node "n"(%x) pp @id_pp {batch = [#df.time_batch<input = 0, window = 0, dim = -1>]} : 1 -> 1
  df.output %n
}

// -----

// batch_dim is -1 (a new dimension) or a dimension.
// CHECK: #df.time_batch on input 0: TimeBatch.batch_dim should be -1 or larger, but got -2
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @bad_batch_dim {
  %x = df.data "x" index 0
  %n = df.node "n"(%x) pp @id_pp {batch = [#df.time_batch<input = 0, window = 5, dim = -2>]} : 1 -> 1
  df.output %n
}

// -----

// A batch names an input of its node.
// CHECK: node "n": batch on input 1, but the node has 1 inputs
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @batch_past_inputs {
  %x = df.data "x" index 0
  %n = df.node "n"(%x) pp @id_pp {batch = [#df.count_batch<input = 1, size = 4, stride = 0, timeout = 0>]} : 1 -> 1
  df.output %n
}

// -----

// One batch per input, in input order.
// CHECK: node "j": batch inputs [0, 0] must be distinct and in increasing order
df.func_pp @join_pp [#df.func<"join"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @two_batches_on_one_input {
  %x = df.data "x" index 0
  %j = df.node "j"(%x, %x) pp @join_pp {batch = [#df.count_batch<input = 0, size = 4, stride = 0, timeout = 0>, #df.time_batch<input = 0, window = 5, dim = -1>]} : 2 -> 1
  df.output %j
}
