// A pipeline after the place phase, for dfir view: a balance scatter feeding a GE graph replicated
// on two devices (route-label dispatch, one df.gather), a balance gather and a sub-FlowGraph node.
builtin.module {
  df.func_pp @scatter_pp [#df.func<"scatter"(0) -> (0)>] {kind = "py_func"}
  ge.graph @mlp backend "reference" attributes {arena_bytes = 64 : i64, arena_lower_bound = 64 : i64} {
    %x = ge.data 0 "x" : !ge.tensor<[2, 4], f32>
    %const = ge.const dense<1.000000e+00> : tensor<4x4xf32> {name = "const_0", loc = "pipeline.py:10"}
    %matmul = ge.matmul %x, %const {name = "matmul_0", loc = "pipeline.py:10", slots = [#ge.slot<0, 64>]} : (!ge.tensor<[2, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[2, 4], f32>
    %add = ge.add %matmul, %x {name = "add_0", loc = "pipeline.py:10", slots = [#ge.slot<0, 64>]} : (!ge.tensor<[2, 4], f32>, !ge.tensor<[2, 4], f32>) -> !ge.tensor<[2, 4], f32>
    %relu = ge.relu %add {name = "relu_0", loc = "pipeline.py:10", slots = [#ge.slot<fresh>]} : !ge.tensor<[2, 4], f32>
    ge.output %relu {max_bytes = array<i64: 32>} : !ge.tensor<[2, 4], f32>
  }
  df.graph_pp @GraphProcessPoint_pp graph @mlp {framework = "ge"}
  df.func_pp @gather_pp [#df.func<"gather"(0) -> (0)>] {kind = "py_func"}
  df.func_pp @inc_pp [#df.func<"inc"(0) -> (0)>] {kind = "py_func"}
  df.graph @sub {
    %0 = df.data "sx" index 0 {loc = "pipeline.py:16"}
    %1 = df.node "inc_fnode"(%0) pp @inc_pp {loc = "pipeline.py:17", device = #df.device<host>} : 1 -> 1
    df.output %1
  }
  df.flow_graph_pp @sub_1_pp graph @sub {point_name = "sub_1"}
  df.graph @balanced attributes {options = {dfir.ge.backend = "reference", ge.experiment.data_flow_deploy_info_path = "deploy.json"}} {
    %2 = df.data "input" index 0 {loc = "pipeline.py:31"}
    %3 = df.node "scatter_fnode"(%2) pp @scatter_pp {loc = "pipeline.py:32", balance = #df.balance<scatter>, device = #df.device<host>} : 1 -> 1
    %4 = df.node "mlp_node"(%3) pp @GraphProcessPoint_pp {loc = "pipeline.py:35", device = #df.device<0:0:0>, instance = #df.instance<0 of 2>, dispatch = "route_label"} : 1 -> 1
    %5 = df.node "mlp_node"(%3) pp @GraphProcessPoint_pp {loc = "pipeline.py:35", device = #df.device<0:0:1>, instance = #df.instance<1 of 2>, dispatch = "route_label"} : 1 -> 1
    %6 = df.gather %4, %5
    %7 = df.node "gather_fnode"(%6) pp @gather_pp {loc = "pipeline.py:33", balance = #df.balance<gather>, device = #df.device<host>} : 1 -> 1
    %8 = df.node "post"(%7) pp @sub_1_pp {loc = "pipeline.py:37", device = #df.device<host>} : 1 -> 1
    df.output %8
  }
}

