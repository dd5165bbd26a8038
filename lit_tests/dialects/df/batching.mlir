// Batched node inputs (map_input's CountBatch / TimeBatch) and a graph with n-mapping nodes:
// the custom form parses back to itself and the generic form to the same custom form (their
// verifier errors are in invalid.mlir).
// RUN: dfir-opt %s | dfir-opt | filecheck %s
// RUN: dfir-opt %s --print-op-generic | dfir-opt | filecheck %s

// Input 0 batched by count (a sliding window, a timeout, padding), input 1 by time; the graph
// says it has n-mapping nodes.
// CHECK-LABEL: df.graph @batched_inputs attributes {n_mapping} {
// CHECK:         df.node "join"(%{{.*}}, %{{.*}}) pp @join_pp {batch = [#df.count_batch<input = 0, size = 32, stride = 8, timeout = 100, padding>, #df.time_batch<input = 1, window = 5, dim = -1, drop_remainder>]} : 2 -> 1
df.func_pp @join_pp [#df.func<"join"(0, 1) -> (0)>] {kind = "py_func"}
df.graph @batched_inputs attributes {n_mapping} {
  %a = df.data "a" index 0
  %b = df.data "b" index 1
  %j = df.node "join"(%a, %b) pp @join_pp {batch = [#df.count_batch<input = 0, size = 32, stride = 8, timeout = 100, padding>, #df.time_batch<input = 1, window = 5, dim = -1, drop_remainder>]} : 2 -> 1
  df.output %j
}

// The defaults print without flags: no padding, no drop_remainder; a TimeBatch until a flag.
// CHECK-LABEL: df.graph @plain_batches {
// CHECK:         {batch = [#df.count_batch<input = 0, size = 4, stride = 0, timeout = 0>]}
// CHECK:         {batch = [#df.time_batch<input = 0, window = -1, dim = 1>]}
df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
df.graph @plain_batches {
  %x = df.data "x" index 0
  %c = df.node "count"(%x) pp @id_pp {batch = [#df.count_batch<input = 0, size = 4, stride = 0, timeout = 0>]} : 1 -> 1
  %t = df.node "time"(%c) pp @id_pp {batch = [#df.time_batch<input = 0, window = -1, dim = 1>]} : 1 -> 1
  df.output %t
}
