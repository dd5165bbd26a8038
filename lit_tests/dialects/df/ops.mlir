// Round trip of every df op and attribute: the custom form parses back to itself, and the generic
// form parses back to the same custom form. Value names are unique in the file because xDSL
// keeps them module-wide.
// RUN: dfir-opt %s | dfir-opt | filecheck %s
// RUN: dfir-opt %s --print-op-generic | dfir-opt | filecheck %s
// RUN: dfir-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// A UDF with one entry point owning two inputs and one output, shipped as a payload.
// CHECK-LABEL: df.func_pp @one_entry_point_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"} payload "gASVAAAA"
// GENERIC-LABEL: "df.func_pp"() <{sym_name = "one_entry_point_pp", kind = "py_func", funcs = [#df.func<"add"(0, 1) -> (0)>], payload = "gASVAAAA"}> ({
df.func_pp @one_entry_point_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"} payload "gASVAAAA"

// A UDF class: one entry point per method, one of them consuming its inputs as queues; init
// params and the compile config are properties, other entries stay discardable attributes.
// CHECK-LABEL: df.func_pp @methods_pp [#df.func<"first"(0) -> (0)>, #df.func<"second"(1, 2) -> (1, 2), stream_input>] {kind = "py_func", init_params = {bias = "1", scale = "2"}, compile_config = "udf/config.json", owner = "team"}
// GENERIC-LABEL: "df.func_pp"() <{sym_name = "methods_pp", kind = "py_func", funcs = [#df.func<"first"(0) -> (0)>, #df.func<"second"(1, 2) -> (1, 2), stream_input>], init_params = {bias = "1", scale = "2"}, compile_config = "udf/config.json"}> ({
// GENERIC:         }) {owner = "team"} : () -> ()
df.func_pp @methods_pp [#df.func<"first"(0) -> (0)>, #df.func<"second"(1, 2) -> (1, 2), stream_input>] {kind = "py_func", init_params = {"bias" = "1", "scale" = "2"}, compile_config = "udf/config.json", owner = "team"}

// Entry points without inputs (a source) or without outputs (a sink).
// CHECK-LABEL: df.func_pp @source_pp [#df.func<"source"() -> (0)>] {kind = "py_func"}
// CHECK-LABEL: df.func_pp @sink_pp [#df.func<"sink"(0) -> ()>] {kind = "py_func"}
df.func_pp @source_pp [#df.func<"source"() -> (0)>] {kind = "py_func"}
df.func_pp @sink_pp [#df.func<"sink"(0) -> ()>] {kind = "py_func"}

// A UDF that may invoke models by key: its invoked closures form the process point's region.
// CHECK-LABEL: df.func_pp @invoking_pp [#df.func<"call"(0) -> (0)>] {kind = "py_func"} {
// CHECK-NEXT:    df.invoked_closure "invoke_relu" @relu_graph_pp
// CHECK-NEXT:    df.invoked_closure "invoke_onnx" @onnx_graph_pp
// CHECK-NEXT:  }
// GENERIC-LABEL: "df.func_pp"() <{sym_name = "invoking_pp", kind = "py_func", funcs = [#df.func<"call"(0) -> (0)>]}> ({
// GENERIC-NEXT:    "df.invoked_closure"() <{key = "invoke_relu", pp = @relu_graph_pp}> : () -> ()
df.func_pp @invoking_pp [#df.func<"call"(0) -> (0)>] {kind = "py_func"} {
  df.invoked_closure "invoke_relu" @relu_graph_pp
  df.invoked_closure "invoke_onnx" @onnx_graph_pp
}

ge.graph @relu {
  %relu_in = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
  %relu_out = ge.relu %relu_in : !ge.tensor<[-1, 4], f32>
  ge.output %relu_out : !ge.tensor<[-1, 4], f32>
}

// A graph process point runs a GE graph of the same module.
// CHECK-LABEL: df.graph_pp @relu_graph_pp graph @relu {framework = "ge", compile_config = "ge/relu.json"}
// GENERIC-LABEL: "df.graph_pp"() <{sym_name = "relu_graph_pp", graph = @relu, framework = "ge", compile_config = "ge/relu.json"}> : () -> ()
df.graph_pp @relu_graph_pp graph @relu {framework = "ge", compile_config = "ge/relu.json"}

// The framework names where the GE graph came from; the compile config is optional.
// CHECK-LABEL: df.graph_pp @onnx_graph_pp graph @relu {framework = "onnx"}
df.graph_pp @onnx_graph_pp graph @relu {framework = "onnx"}

// Flow data, a three-output node read by position, a graph node, outputs in fetch order; the
// graph options are properties, the node's `loc` and the data's `schema` discardable attributes.
// CHECK-LABEL: df.graph @wiring attributes {options = {ge.graph_key = "wiring", ge.runFlag = "1"}} {
// CHECK-NEXT:    %frames = df.data "FlowData" index 0 {schema = tensor<1x4xf32>}
// CHECK-NEXT:    %labels = df.data "FlowData_1" index 1
// CHECK-NEXT:    %sum = df.node "add"(%frames, %labels) pp @one_entry_point_pp {loc = "pipeline.py:12"} : 2 -> 1
// CHECK-NEXT:    %pair, %pair_1, %pair_2 = df.node "pair"(%sum, %frames, %labels) pp @methods_pp : 3 -> 3
// CHECK-NEXT:    %activated = df.node "relu"(%pair_1) pp @relu_graph_pp : 1 -> 1
// CHECK-NEXT:    df.output %activated, %pair, %pair_2
// CHECK-NEXT:  }
// GENERIC-LABEL: "df.graph"() <{sym_name = "wiring", options = {ge.graph_key = "wiring", ge.runFlag = "1"}}> ({
// GENERIC-NEXT:    %frames = "df.data"() <{data_name = "FlowData", index = 0 : i64}> {schema = tensor<1x4xf32>} : () -> !df.flow
// GENERIC-NEXT:    %labels = "df.data"() <{data_name = "FlowData_1", index = 1 : i64}> : () -> !df.flow
// GENERIC-NEXT:    %sum = "df.node"(%frames, %labels) <{node_name = "add", pp = @one_entry_point_pp, input_num = 2 : i64, output_num = 1 : i64}> {loc = "pipeline.py:12"} : (!df.flow, !df.flow) -> !df.flow
// GENERIC-NEXT:    %pair, %pair_1, %pair_2 = "df.node"(%sum, %frames, %labels) <{node_name = "pair", pp = @methods_pp, input_num = 3 : i64, output_num = 3 : i64}> : (!df.flow, !df.flow, !df.flow) -> (!df.flow, !df.flow, !df.flow)
// GENERIC-NEXT:    %activated = "df.node"(%pair_1)
// GENERIC-NEXT:    "df.output"(%activated, %pair, %pair_2) : (!df.flow, !df.flow, !df.flow) -> ()
df.graph @wiring attributes {options = {"ge.graph_key" = "wiring", "ge.runFlag" = "1"}} {
  %frames = df.data "FlowData" index 0 {schema = tensor<1x4xf32>}
  %labels = df.data "FlowData_1" index 1
  %sum = df.node "add"(%frames, %labels) pp @one_entry_point_pp {loc = "pipeline.py:12"} : 2 -> 1
  %pair:3 = df.node "pair"(%sum, %frames, %labels) pp @methods_pp : 3 -> 3
  %activated = df.node "relu"(%pair#1) pp @relu_graph_pp : 1 -> 1
  df.output %activated, %pair#0, %pair#2
}

// Source and sink nodes: no inputs, no outputs; a graph may have no inputs.
// CHECK-LABEL: df.graph @source_to_sink attributes {options = {}} {
// CHECK-NEXT:    %produced = df.node "source"() pp @source_pp : 0 -> 1
// CHECK-NEXT:    df.node "sink"(%produced) pp @sink_pp : 1 -> 0
// CHECK-NEXT:    df.output %produced
// CHECK-NEXT:  }
df.graph @source_to_sink attributes {options = {}} {
  %produced = df.node "source"() pp @source_pp : 0 -> 1
  df.node "sink"(%produced) pp @sink_pp : 1 -> 0
  df.output %produced
}

// Deployment attributes of nodes: logical devices (host, 3 and 4 ids), replicas, balance roles.
// CHECK-LABEL: df.graph @deployment attributes {options = {}} {
// CHECK-NEXT:    %requests = df.data "requests" index 0
// CHECK-NEXT:    %scattered = df.node "scatter"(%requests) pp @invoking_pp {device = #df.device<host>, balance = #df.balance<scatter>} : 1 -> 1
// CHECK-NEXT:    %left_result = df.node "work_0"(%scattered) pp @invoking_pp {device = #df.device<0:0:1>, instance = #df.instance<0 of 2>} : 1 -> 1
// CHECK-NEXT:    %right_result = df.node "work_1"(%scattered) pp @invoking_pp {device = #df.device<0:1:2:1>, instance = #df.instance<1 of 2>} : 1 -> 1
// CHECK-NEXT:    %gathered = df.node "gather"(%left_result, %right_result) pp @one_entry_point_pp {device = #df.device<host>, balance = #df.balance<gather>} : 2 -> 1
// CHECK-NEXT:    df.output %gathered
// CHECK-NEXT:  }
// GENERIC-LABEL: "df.graph"() <{sym_name = "deployment", options = {}}> ({
// GENERIC:         output_num = 1 : i64}> {device = #df.device<host>, balance = #df.balance<scatter>} : (!df.flow) -> !df.flow
// GENERIC:         output_num = 1 : i64}> {device = #df.device<0:0:1>, instance = #df.instance<0 of 2>} : (!df.flow) -> !df.flow
df.graph @deployment attributes {options = {}} {
  %requests = df.data "requests" index 0
  %scattered = df.node "scatter"(%requests) pp @invoking_pp {device = #df.device<host>, balance = #df.balance<scatter>} : 1 -> 1
  %left_result = df.node "work_0"(%scattered) pp @invoking_pp {device = #df.device<0:0:1>, instance = #df.instance<0 of 2>} : 1 -> 1
  %right_result = df.node "work_1"(%scattered) pp @invoking_pp {device = #df.device<0:1:2:1>, instance = #df.instance<1 of 2>} : 1 -> 1
  %gathered = df.node "gather"(%left_result, %right_result) pp @one_entry_point_pp {device = #df.device<host>, balance = #df.balance<gather>} : 2 -> 1
  df.output %gathered
}

// Input alignment with dropout; the bounds 1024 and 600000 are inclusive.
// CHECK-LABEL: df.graph @aligned_with_dropout attributes {align = #df.align<cache = 1024, timeout = 600000, dropout>} {
// GENERIC-LABEL: "df.graph"() <{sym_name = "aligned_with_dropout", align = #df.align<cache = 1024, timeout = 600000, dropout>}> ({
df.graph @aligned_with_dropout attributes {align = #df.align<cache = 1024, timeout = 600000, dropout>} {
  %aligned = df.data "aligned" index 0
  df.output %aligned
}

// Alignment off (cache 0) and waiting forever (timeout -1); properties keep their written order.
// CHECK-LABEL: df.graph @aligned_forever attributes {align = #df.align<cache = 0, timeout = -1>, options = {ge.graph_key = "k"}} {
df.graph @aligned_forever attributes {align = #df.align<cache = 0, timeout = -1>, options = {"ge.graph_key" = "k"}} {
  %waiting = df.data "waiting" index 0
  df.output %waiting
}

// A graph body is a graph region: ops keep their written order, uses may precede definitions.
// CHECK-LABEL: df.graph @unsorted_body attributes {options = {}} {
// CHECK-NEXT:    %late = df.node "late"(%early, %second) pp @one_entry_point_pp : 2 -> 1
// CHECK-NEXT:    %early = df.node "early"(%first, %second) pp @one_entry_point_pp : 2 -> 1
// CHECK-NEXT:    %second = df.data "second" index 1
// CHECK-NEXT:    %first = df.data "first" index 0
// CHECK-NEXT:    df.output %late
// CHECK-NEXT:  }
df.graph @unsorted_body attributes {options = {}} {
  %late = df.node "late"(%early, %second) pp @one_entry_point_pp : 2 -> 1
  %early = df.node "early"(%first, %second) pp @one_entry_point_pp : 2 -> 1
  %second = df.data "second" index 1
  %first = df.data "first" index 0
  df.output %late
}

// Without graph options or alignment the graph prints no attribute dictionary.
// CHECK-LABEL: df.graph @no_properties {
// CHECK-NEXT:    %plain = df.data "plain" index 0
// CHECK-NEXT:    df.output %plain
// CHECK-NEXT:  }
df.graph @no_properties {
  %plain = df.data "plain" index 0
  df.output %plain
}

// A graph holding nothing but its empty output.
// CHECK-LABEL: df.graph @only_output {
// CHECK-NEXT:    df.output
// CHECK-NEXT:  }
df.graph @only_output {
  df.output
}
