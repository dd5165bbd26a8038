// A default-device with the wrong number of ids is reported as the device attribute's error.
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:1"}' --verify-diagnostics | filecheck %s --check-prefix=TWO
// RUN: dfir-opt %s -p 'place-nodes{default-device="0:0:1:0:2"}' --verify-diagnostics | filecheck %s --check-prefix=FIVE

// TWO: #df.device has 2 ids, expected 3 or 4 (cluster:server:device[:numa]) or host
// FIVE: #df.device has 5 ids, expected 3 or 4 (cluster:server:device[:numa]) or host

df.func_pp @unary_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"}

df.graph @wrong_id_count attributes {options = {}} {
  %in = df.data "in" index 0
  %out = df.node "a"(%in) pp @unary_pp : 1 -> 1
  df.output %out
}
