// plan-memory gives every tensor op result a slot: a range of the graph's arena (in-place
// results share their dying operand's), a view of its operand's memory, or fresh memory (graph
// outputs, unbounded values); the graph gets its arena size and the lower bound (peak live bytes).
// RUN: dfir-opt %s -p plan-memory | filecheck %s
// RUN: dfir-opt %s -p plan-memory | dfir-opt | filecheck %s
// RUN: dfir-opt %s -p 'plan-memory{alignment=16}' | filecheck %s --check-prefix=ALIGN16
// RUN: dfir-opt %s -p 'plan-memory{enabled=false}' | filecheck %s --check-prefix=OFF

// An MLP layer: the add and the relu run in place in the matmul's slot (1:8 x 16 f32 = 512 bytes
// at most); the last matmul is the graph's output and gets fresh memory.
// CHECK-LABEL: ge.graph @chain attributes {arena_bytes = 512 : i64, arena_lower_bound = 512 : i64}
// CHECK:         %h = ge.matmul %x, %w {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %a = ge.add %h, %b {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %r = ge.relu %a {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %o = ge.matmul %r, %v {slots = [#ge.slot<fresh>]}
// OFF-LABEL:   ge.graph @chain {
// OFF:           %h = ge.matmul %x, %w : (
ge.graph @chain {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  %w = ge.const dense<1.0> : tensor<4x16xf32>
  %b = ge.const dense<0.5> : tensor<16xf32>
  %v = ge.const dense<1.0> : tensor<16x4xf32>
  %h = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 16], f32>) -> !ge.tensor<[1:8, 16], f32>
  %a = ge.add %h, %b : (!ge.tensor<[1:8, 16], f32>, !ge.tensor<[16], f32>) -> !ge.tensor<[1:8, 16], f32>
  %r = ge.relu %a : !ge.tensor<[1:8, 16], f32>
  %o = ge.matmul %r, %v : (!ge.tensor<[1:8, 16], f32>, !ge.tensor<[16, 4], f32>) -> !ge.tensor<[1:8, 4], f32>
  ge.output %o : !ge.tensor<[1:8, 4], f32>
}

// A residual: the relu cannot run in place (its operand is used again by the add), the add can
// (both operands die there); two 256-byte buffers live at once.
// CHECK-LABEL: ge.graph @residual attributes {arena_bytes = 512 : i64, arena_lower_bound = 512 : i64}
// CHECK:         %a = ge.matmul %x, %w {slots = [#ge.slot<0, 256>]}
// CHECK-NEXT:    %r = ge.relu %a {slots = [#ge.slot<256, 256>]}
// CHECK-NEXT:    %s = ge.add %a, %r {slots = [#ge.slot<0, 256>]}
// CHECK-NEXT:    %t = ge.matmul %s, %w {slots = [#ge.slot<fresh>]}
ge.graph @residual {
  %x = ge.data 0 "x" : !ge.tensor<[8, 8], f32>
  %w = ge.const dense<1.0> : tensor<8x8xf32>
  %a = ge.matmul %x, %w : (!ge.tensor<[8, 8], f32>, !ge.tensor<[8, 8], f32>) -> !ge.tensor<[8, 8], f32>
  %r = ge.relu %a : !ge.tensor<[8, 8], f32>
  %s = ge.add %a, %r : (!ge.tensor<[8, 8], f32>, !ge.tensor<[8, 8], f32>) -> !ge.tensor<[8, 8], f32>
  %t = ge.matmul %s, %w : (!ge.tensor<[8, 8], f32>, !ge.tensor<[8, 8], f32>) -> !ge.tensor<[8, 8], f32>
  ge.output %t : !ge.tensor<[8, 8], f32>
}

// Reshapes are views: %f keeps %a's slot alive to the end (the runtime copies the output out of
// the arena); a view of an input is not arena memory, so the mul that reads it is not in place.
// CHECK-LABEL: ge.graph @views attributes {arena_bytes = 128 : i64, arena_lower_bound = 128 : i64}
// CHECK:         %a = ge.matmul %x, %w {slots = [#ge.slot<0, 64>]}
// CHECK-NEXT:    %f = ge.reshape %a to [-1] {slots = [#ge.slot<view>]}
// CHECK-NEXT:    %x2 = ge.reshape %x to [16] {slots = [#ge.slot<view>]}
// CHECK-NEXT:    %m = ge.mul %x2, %x2 {slots = [#ge.slot<64, 64>]}
// CHECK-NEXT:    %n = ge.sub %m, %x2 {slots = [#ge.slot<fresh>]}
ge.graph @views {
  %x = ge.data 0 "x" : !ge.tensor<[2, 8], f32>
  %w = ge.const dense<1.0> : tensor<8x8xf32>
  %a = ge.matmul %x, %w : (!ge.tensor<[2, 8], f32>, !ge.tensor<[8, 8], f32>) -> !ge.tensor<[2, 8], f32>
  %f = ge.reshape %a to [-1] : !ge.tensor<[2, 8], f32> -> !ge.tensor<[16], f32>
  %x2 = ge.reshape %x to [16] : !ge.tensor<[2, 8], f32> -> !ge.tensor<[16], f32>
  %m = ge.mul %x2, %x2 : (!ge.tensor<[16], f32>, !ge.tensor<[16], f32>) -> !ge.tensor<[16], f32>
  %n = ge.sub %m, %x2 : (!ge.tensor<[16], f32>, !ge.tensor<[16], f32>) -> !ge.tensor<[16], f32>
  ge.output %f, %n : !ge.tensor<[16], f32>, !ge.tensor<[16], f32>
}

// Unbounded values are left out of the arena (allocated as they come).
// CHECK-LABEL: ge.graph @unbounded attributes {arena_bytes = 0 : i64, arena_lower_bound = 0 : i64}
// CHECK:         %a = ge.matmul %x, %w {slots = [#ge.slot<fresh>]}
// CHECK-NEXT:    %r = ge.relu %a {slots = [#ge.slot<fresh>]}
ge.graph @unbounded {
  %x = ge.data 0 "x" : !ge.tensor<[-1, 4], f32>
  %w = ge.const dense<1.0> : tensor<4x4xf32>
  %a = ge.matmul %x, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 4], f32>) -> !ge.tensor<[-1, 4], f32>
  %r = ge.relu %a : !ge.tensor<[-1, 4], f32>
  %s = ge.shape %r : !ge.tensor<[-1, 4], f32> -> !ge.tensor<[2], i64>
  ge.output %r, %s : !ge.tensor<[-1, 4], f32>, !ge.tensor<[2], i64>
}

// A multi-result op has one slot per result: a split's are views into its operand's slot, which
// lives until the last of them is used (%q, an output, at the end).
// CHECK-LABEL: ge.graph @split attributes {arena_bytes = 128 : i64, arena_lower_bound = 128 : i64}
// CHECK:         %a = ge.relu %x {slots = [#ge.slot<0, 128>]}
// CHECK-NEXT:    %p, %q = ge.split %a axis 1 sizes [2, -1] {slots = [#ge.slot<view>, #ge.slot<view>]}
// CHECK-NEXT:    %z = ge.mul %p, %p {slots = [#ge.slot<fresh>]}
ge.graph @split {
  %x = ge.data 0 "x" : !ge.tensor<[4, 6], f32>
  %a = ge.relu %x : !ge.tensor<[4, 6], f32>
  %p, %q = ge.split %a axis 1 sizes [2, -1] : !ge.tensor<[4, 6], f32> -> !ge.tensor<[4, 2], f32>, !ge.tensor<[4, 4], f32>
  %z = ge.mul %p, %p : (!ge.tensor<[4, 2], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[4, 2], f32>
  ge.output %z, %q : !ge.tensor<[4, 2], f32>, !ge.tensor<[4, 4], f32>
}

// Sizes round up to the alignment: 3 x 3 f32 (36 bytes) takes 64 bytes, or 48 with alignment=16.
// Buffers whose lifetimes are disjoint share offsets: the lower bound is two buffers.
// CHECK-LABEL:   ge.graph @aligned attributes {arena_bytes = 128 : i64, arena_lower_bound = 128 : i64}
// CHECK:           %a = ge.matmul %x, %w {slots = [#ge.slot<0, 64>]}
// CHECK-NEXT:      %b = ge.matmul %a, %w {slots = [#ge.slot<64, 64>]}
// CHECK-NEXT:      %c = ge.matmul %b, %w {slots = [#ge.slot<0, 64>]}
// ALIGN16-LABEL: ge.graph @aligned attributes {arena_bytes = 96 : i64, arena_lower_bound = 96 : i64}
// ALIGN16:         %a = ge.matmul %x, %w {slots = [#ge.slot<0, 48>]}
// ALIGN16-NEXT:    %b = ge.matmul %a, %w {slots = [#ge.slot<48, 48>]}
// ALIGN16-NEXT:    %c = ge.matmul %b, %w {slots = [#ge.slot<0, 48>]}
ge.graph @aligned {
  %x = ge.data 0 "x" : !ge.tensor<[3, 3], f32>
  %w = ge.const dense<1.0> : tensor<3x3xf32>
  %a = ge.matmul %x, %w : (!ge.tensor<[3, 3], f32>, !ge.tensor<[3, 3], f32>) -> !ge.tensor<[3, 3], f32>
  %b = ge.matmul %a, %w : (!ge.tensor<[3, 3], f32>, !ge.tensor<[3, 3], f32>) -> !ge.tensor<[3, 3], f32>
  %c = ge.matmul %b, %w : (!ge.tensor<[3, 3], f32>, !ge.tensor<[3, 3], f32>) -> !ge.tensor<[3, 3], f32>
  %d = ge.matmul %c, %w : (!ge.tensor<[3, 3], f32>, !ge.tensor<[3, 3], f32>) -> !ge.tensor<[3, 3], f32>
  ge.output %d : !ge.tensor<[3, 3], f32>
}

// In place is a trait of the op, whatever its family: the activation, the negation and the select
// run in the matmul's slot; the greater cannot (its operand %f is read again by the select) and
// gets a slot of its own for 1:8 x 16 i1; bit casts are views.
// CHECK-LABEL: ge.graph @any_family_in_place attributes {arena_bytes = 640 : i64, arena_lower_bound = 640 : i64}
// CHECK:         %h = ge.matmul %x, %w {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %l = ge.leaky_relu %h alpha 1.000000e-01 {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %n = ge.neg %l {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %b = ge.bitcast %n to i32 {slots = [#ge.slot<view>]}
// CHECK-NEXT:    %f = ge.bitcast %b to f32 {slots = [#ge.slot<view>]}
// CHECK-NEXT:    %g = ge.greater %f, %z {slots = [#ge.slot<512, 128>]}
// CHECK-NEXT:    %s = ge.select %g, %f, %z {slots = [#ge.slot<0, 512>]}
// CHECK-NEXT:    %o = ge.matmul %s, %v {slots = [#ge.slot<fresh>]}
ge.graph @any_family_in_place {
  %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
  %w = ge.const dense<1.0> : tensor<4x16xf32>
  %z = ge.const dense<0.0> : tensor<16xf32>
  %v = ge.const dense<1.0> : tensor<16x4xf32>
  %h = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 16], f32>) -> !ge.tensor<[1:8, 16], f32>
  %l = ge.leaky_relu %h alpha 1.000000e-01 : !ge.tensor<[1:8, 16], f32>
  %n = ge.neg %l : !ge.tensor<[1:8, 16], f32>
  %b = ge.bitcast %n to i32 : !ge.tensor<[1:8, 16], f32> -> !ge.tensor<[1:8, 16], i32>
  %f = ge.bitcast %b to f32 : !ge.tensor<[1:8, 16], i32> -> !ge.tensor<[1:8, 16], f32>
  %g = ge.greater %f, %z : (!ge.tensor<[1:8, 16], f32>, !ge.tensor<[16], f32>) -> !ge.tensor<[1:8, 16], i1>
  %s = ge.select %g, %f, %z : (!ge.tensor<[1:8, 16], i1>, !ge.tensor<[1:8, 16], f32>, !ge.tensor<[16], f32>) -> !ge.tensor<[1:8, 16], f32>
  %o = ge.matmul %s, %v : (!ge.tensor<[1:8, 16], f32>, !ge.tensor<[16, 4], f32>) -> !ge.tensor<[1:8, 4], f32>
  ge.output %o : !ge.tensor<[1:8, 4], f32>
}
