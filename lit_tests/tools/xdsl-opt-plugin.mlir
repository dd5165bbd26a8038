// Plain `xdsl-opt` (not dfir-opt) finds dfir's dialects and passes through the `xdsl.universe`
// entry point (dfir.tools.universe): it parses a df + ge module, runs sort-nodes then
// place-nodes, and its output parses back in plain `xdsl-opt`. The GE graph passes through as is.
// RUN: xdsl-opt %s -p sort-nodes,place-nodes | filecheck %s --check-prefixes=CHECK,HOST
// RUN: xdsl-opt %s -p sort-nodes,place-nodes | xdsl-opt | filecheck %s --check-prefixes=CHECK,HOST
// RUN: xdsl-opt %s -p 'sort-nodes,place-nodes{default-device="0:0:2:1"}' | filecheck %s --check-prefixes=CHECK,NPU
// RUN: xdsl-opt %s -p sort-nodes,place-nodes --print-between-passes | filecheck %s --check-prefix=BETWEEN

// The GE graph is untouched by both passes.
// CHECK-LABEL: ge.graph @mlp {
// CHECK-NEXT:    %mlp_x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
// CHECK-NEXT:    %mlp_w = ge.data 1 "w" : !ge.tensor<[4, 2], f32>
// CHECK-NEXT:    %mlp_y = ge.matmul %mlp_x, %mlp_w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
// CHECK-NEXT:    %mlp_out = ge.relu %mlp_y : !ge.tensor<[-1, 2], f32>
// CHECK-NEXT:    ge.output %mlp_out : !ge.tensor<[-1, 2], f32>
// CHECK-NEXT:  }
ge.graph @mlp {
  %mlp_x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
  %mlp_w = ge.data 1 "w" : !ge.tensor<[4, 2], f32>
  %mlp_y = ge.matmul %mlp_x, %mlp_w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  %mlp_out = ge.relu %mlp_y : !ge.tensor<[-1, 2], f32>
  ge.output %mlp_out : !ge.tensor<[-1, 2], f32>
}

// CHECK-LABEL: df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
// CHECK-NEXT:  df.func_pp @weights_pp [#df.func<"weights"() -> (0)>] {kind = "py_func"}
// CHECK-NEXT:  df.func_pp @scale_pp [#df.func<"scale"(0) -> (0)>] {kind = "py_func"}
df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
df.func_pp @weights_pp [#df.func<"weights"() -> (0)>] {kind = "py_func"}
df.func_pp @scale_pp [#df.func<"scale"(0) -> (0)>] {kind = "py_func"}

// Written consumers first: sort-nodes puts the flow data first and producers before consumers;
// place-nodes then gives the unplaced nodes the default device and keeps the pinned one.
// CHECK-LABEL: df.graph @pipeline attributes {options = {ge.graph_key = "pipeline"}} {
// CHECK-NEXT:    %frames = df.data "frames" index 0
// CHECK-NEXT:    %scaled = df.node "scale"(%frames) pp @scale_pp {device = #df.device<0:0:1>} : 1 -> 1
// HOST-NEXT:     %weights = df.node "weights"() pp @weights_pp {device = #df.device<host>} : 0 -> 1
// HOST-NEXT:     %activated = df.node "mlp"(%scaled, %weights) pp @mlp_pp {device = #df.device<host>} : 2 -> 1
// NPU-NEXT:      %weights = df.node "weights"() pp @weights_pp {device = #df.device<0:0:2:1>} : 0 -> 1
// NPU-NEXT:      %activated = df.node "mlp"(%scaled, %weights) pp @mlp_pp {device = #df.device<0:0:2:1>} : 2 -> 1
// CHECK-NEXT:    df.output %activated
// CHECK-NEXT:  }

// The IR between the passes is sorted but not yet placed.
// BETWEEN:       IR after sort-nodes:
// BETWEEN-LABEL: df.graph @pipeline
// BETWEEN-NEXT:    %frames = df.data "frames" index 0
// BETWEEN-NEXT:    %scaled = df.node "scale"(%frames) pp @scale_pp {device = #df.device<0:0:1>} : 1 -> 1
// BETWEEN-NEXT:    %weights = df.node "weights"() pp @weights_pp : 0 -> 1
// BETWEEN-NEXT:    %activated = df.node "mlp"(%scaled, %weights) pp @mlp_pp : 2 -> 1
// BETWEEN-NEXT:    df.output %activated
// BETWEEN-LABEL: df.graph @pipeline
// BETWEEN-NEXT:    %frames = df.data "frames" index 0
// BETWEEN-NEXT:    %scaled = df.node "scale"(%frames) pp @scale_pp {device = #df.device<0:0:1>} : 1 -> 1
// BETWEEN-NEXT:    %weights = df.node "weights"() pp @weights_pp {device = #df.device<host>} : 0 -> 1
// BETWEEN-NEXT:    %activated = df.node "mlp"(%scaled, %weights) pp @mlp_pp {device = #df.device<host>} : 2 -> 1
// BETWEEN-NEXT:    df.output %activated
df.graph @pipeline attributes {options = {"ge.graph_key" = "pipeline"}} {
  %activated = df.node "mlp"(%scaled, %weights) pp @mlp_pp : 2 -> 1
  %scaled = df.node "scale"(%frames) pp @scale_pp {device = #df.device<0:0:1>} : 1 -> 1
  %weights = df.node "weights"() pp @weights_pp : 0 -> 1
  %frames = df.data "frames" index 0
  df.output %activated
}
