// plan-memory refuses an alignment below 1 and a negative number of search rounds.
// RUN: not dfir-opt %s -p 'plan-memory{alignment=0}' 2>&1 | filecheck %s --check-prefix=ALIGN
// RUN: not dfir-opt %s -p 'plan-memory{search-rounds=-1}' 2>&1 | filecheck %s --check-prefix=ROUNDS

// ALIGN: ValueError: plan-memory: alignment must be >= 1 and search-rounds >= 0, got 0 and 16
// ROUNDS: ValueError: plan-memory: alignment must be >= 1 and search-rounds >= 0, got 64 and -1
ge.graph @g {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  ge.output %x : !ge.tensor<[2], f32>
}
