// `dfir-opt --compile-to=PHASE` runs the compiler's phases up to PHASE: import only verifies,
// fingerprint keys every process point and graph, schedule sorts each graph, shapes narrows GE tensor types to their inputs' ranges, plan bounds
// GE outputs and lays out their intermediates, codegen chooses each GE graph's backend and lowers
// the IREE ones (printing only the upstream MLIR, which iree-opt parses), place adds devices;
// lower has no IR passes, so it prints what place does. An unknown phase is refused with the list
// of phases.
// RUN: dfir-opt %s --compile-to=import | filecheck %s --check-prefixes=IMPORT,GE-IMPORT
// RUN: dfir-opt %s --compile-to=fingerprint | filecheck %s --check-prefixes=FINGERPRINT,IMPORT,GE-IMPORT
// RUN: dfir-opt %s --compile-to=schedule | filecheck %s --check-prefixes=SCHEDULE,GE-IMPORT
// RUN: dfir-opt %s --compile-to=shapes | filecheck %s --check-prefixes=SCHEDULE,GE-SHAPES
// RUN: dfir-opt %s --compile-to=plan | filecheck %s --check-prefixes=SCHEDULE,GE-PLAN
// RUN: dfir-opt %s --compile-to=codegen | filecheck %s --check-prefix=CODEGEN
// RUN: dfir-opt %s --compile-to=codegen | iree-opt | filecheck %s --check-prefix=PARSED
// RUN: dfir-opt %s --compile-to=place | filecheck %s --check-prefixes=PLACE,GE-PLACED
// RUN: dfir-opt %s --compile-to=lower | filecheck %s --check-prefixes=PLACE,GE-PLACED
// RUN: not dfir-opt %s --compile-to=optimize 2>&1 | filecheck %s --check-prefix=UNKNOWN

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}

// FINGERPRINT: df.func_pp @unary_pp {{.*}}fingerprint = "sha256:{{[0-9a-f]+}}"
// GE-IMPORT-LABEL: ge.graph @narrowed
// FINGERPRINT-SAME: attributes {fingerprint = "sha256:{{[0-9a-f]+}}"}
// GE-IMPORT-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
// GE-IMPORT:         -> !ge.tensor<[-1, 2], f32>
// GE-IMPORT-NEXT:    ge.output %y : !ge.tensor<[-1, 2], f32>

// GE-SHAPES-LABEL: ge.graph @narrowed
// GE-SHAPES:         -> !ge.tensor<[1:8, 2], f32>
// GE-SHAPES-NEXT:    ge.output %y : !ge.tensor<[1:8, 2], f32>

// GE-PLAN-LABEL: ge.graph @narrowed attributes {{{.*}}arena_bytes = 0 : i64, arena_lower_bound = 0 : i64} {
// GE-PLAN:         %y = ge.matmul %x, %w {slots = [#ge.slot<fresh>]}
// GE-PLAN-NEXT:    ge.output %y {max_bytes = array<i64: 64>} : !ge.tensor<[1:8, 2], f32>
// CODEGEN:      "builtin.module"() ({
// CODEGEN-NEXT:   "builtin.module"() <{sym_name = "narrowed"}> ({
// CODEGEN-NEXT:     "func.func"() <{sym_name = "main", function_type = (tensor<?x4xf32>) -> tensor<?x2xf32>}> ({
// CODEGEN:            "util.assume.int"({{.*}}) <{assumptions = {{\[\[}}#util.int.assumption<umin = 1, umax = 8>]]}>
// CODEGEN:            "linalg.matmul"
// CODEGEN-NOT:    ge.
// PARSED:       module @narrowed {
// PARSED-NEXT:    func.func @main(%{{.*}}: tensor<?x4xf32>) -> tensor<?x2xf32> {
// PARSED:           util.assume.int {{.*}}<umin = 1, umax = 8> : index
// PARSED:           linalg.matmul

// GE-PLACED-LABEL: ge.graph @narrowed backend "iree-cpu" attributes {{{.*}}arena_bytes = 0 : i64, arena_lower_bound = 0 : i64, auto} {
// GE-PLACED:         ge.output %y {max_bytes = array<i64: 64>} : !ge.tensor<[1:8, 2], f32>
// GE-PLACED:       } codegen {
// GE-PLACED-NEXT:    func.func @main
ge.graph @narrowed {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  %w = ge.const dense<1.0> : tensor<4x2xf32>
  %y = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  ge.output %y : !ge.tensor<[-1, 2], f32>
}

// IMPORT-LABEL: df.graph @pipeline
// FINGERPRINT-SAME: fingerprint = "sha256:{{[0-9a-f]+}}"
// IMPORT-NEXT:    %second = df.node "second"(%first) pp @unary_pp : 1 -> 1
// IMPORT-NEXT:    %first = df.node "first"(%in) pp @unary_pp {device = #df.device<0:0:1>} : 1 -> 1
// IMPORT-NEXT:    %in = df.data "in" index 0
// IMPORT-NEXT:    df.output %second

// SCHEDULE-LABEL: df.graph @pipeline
// SCHEDULE-NEXT:    %in = df.data "in" index 0
// SCHEDULE-NEXT:    %first = df.node "first"(%in) pp @unary_pp {device = #df.device<0:0:1>} : 1 -> 1
// SCHEDULE-NEXT:    %second = df.node "second"(%first) pp @unary_pp : 1 -> 1
// SCHEDULE-NEXT:    df.output %second

// PLACE-LABEL: df.graph @pipeline
// PLACE-NEXT:    %in = df.data "in" index 0
// PLACE-NEXT:    %first = df.node "first"(%in) pp @unary_pp {device = #df.device<0:0:1>} : 1 -> 1
// PLACE-NEXT:    %second = df.node "second"(%first) pp @unary_pp {device = #df.device<host>} : 1 -> 1
// PLACE-NEXT:    df.output %second

// UNKNOWN: argument --compile-to: invalid choice: 'optimize' (choose from 'import', {{.*}}'lower')
df.graph @pipeline attributes {options = {"ge.graph_key" = "pipeline"}} {
  %second = df.node "second"(%first) pp @unary_pp : 1 -> 1
  %first = df.node "first"(%in) pp @unary_pp {device = #df.device<0:0:1>} : 1 -> 1
  %in = df.data "in" index 0
  df.output %second
}
