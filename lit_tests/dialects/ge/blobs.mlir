// Weight blobs: a ge.const or ge.variable names a dense_resource, whose bytes live in the file's
// dialect_resources section (MLIR's form: "0x", the alignment as a little-endian u32, the bytes),
// not in the op. The printed form parses back to itself, custom and generic, and lowering to
// codegen keeps the blob a blob: arith.constant names it, the section carries its bytes to IREE.
// RUN: dfir-opt %s | dfir-opt | filecheck %s
// RUN: dfir-opt %s --print-op-generic | dfir-opt | filecheck %s
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{backend=iree-cpu}' --compile-to=codegen | filecheck %s --check-prefix=CODEGEN

// CHECK-LABEL: ge.graph @weights {
// CHECK-NEXT:    %x = ge.data 0 "x" : !ge.tensor<[2, 2], f32>
// CHECK-NEXT:    %w = ge.const dense_resource<weight_a> : tensor<2x2xf32> {name = "w"}
// CHECK-NEXT:    %v = ge.variable "fc.bias" dense_resource<weight_b> : tensor<2xf32>
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-NEXT:        weight_a: "0x400000000000803F000000400000404000008040",weight_b: "0x400000000000003F000000BF"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}

// CODEGEN-LABEL: "builtin.module"() <{sym_name = "weights"}> ({
// CODEGEN:         "arith.constant"() <{value = dense_resource<weight_a> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
// CODEGEN-NEXT:    "arith.constant"() <{value = dense_resource<weight_b> : tensor<2xf32>}> : () -> tensor<2xf32>
// CODEGEN:       dialect_resources: {
// CODEGEN-NEXT:    builtin: {
// CODEGEN-NEXT:      weight_a: "0x400000000000803F000000400000404000008040",weight_b: "0x400000000000003F000000BF"
ge.graph @weights {
  %x = ge.data 0 "x" : !ge.tensor<[2, 2], f32>
  %w = ge.const dense_resource<weight_a> : tensor<2x2xf32> {name = "w"}
  %v = ge.variable "fc.bias" dense_resource<weight_b> : tensor<2xf32>
  %y = ge.matmul %x, %w : (!ge.tensor<[2, 2], f32>, !ge.tensor<[2, 2], f32>) -> !ge.tensor<[2, 2], f32>
  %z = ge.add %y, %v : (!ge.tensor<[2, 2], f32>, !ge.tensor<[2], f32>) -> !ge.tensor<[2, 2], f32>
  ge.output %z : !ge.tensor<[2, 2], f32>
}
{-#
  dialect_resources: {
    builtin: {
      weight_a: "0x400000000000803F000000400000404000008040",
      weight_b: "0x400000000000003F000000BF"
    }
  }
#-}
