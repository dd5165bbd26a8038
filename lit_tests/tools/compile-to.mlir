// `dfir-opt --compile-to=PHASE` runs the compiler's phases up to PHASE: import only verifies,
// schedule sorts each graph, place adds devices; lower has no IR passes, so it prints what
// place does. An unknown phase is refused with the list of phases.
// RUN: dfir-opt %s --compile-to=import | filecheck %s --check-prefix=IMPORT
// RUN: dfir-opt %s --compile-to=schedule | filecheck %s --check-prefix=SCHEDULE
// RUN: dfir-opt %s --compile-to=place | filecheck %s --check-prefix=PLACE
// RUN: dfir-opt %s --compile-to=lower | filecheck %s --check-prefix=PLACE
// RUN: not dfir-opt %s --compile-to=optimize 2>&1 | filecheck %s --check-prefix=UNKNOWN

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}

// IMPORT-LABEL: df.graph @pipeline
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
