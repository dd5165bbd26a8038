// An explicit IREE backend for a graph with an op that has no lowering is an error at the op;
// so is an unknown backend option.
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{backend=iree-cpu}' --verify-diagnostics --split-input-file | filecheck %s
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{backend=fast}' --verify-diagnostics --split-input-file | filecheck %s --check-prefix=OPTION
// RUN: dfir-opt %s -p 'convert-ge-to-linalg{auto_backend=auto}' --verify-diagnostics --split-input-file | filecheck %s --check-prefix=AUTO

// CHECK: ge.graph @ipow: backend iree-cpu cannot run ge.pow 'p': no integer form for element type i32; use backend reference or auto for this graph
// OPTION: convert-ge-to-linalg: backend must be one of ['auto', 'reference', 'iree-cpu', 'iree-cuda', 'onnxruntime'], got "fast"
// AUTO: convert-ge-to-linalg: auto_backend must be one of ['reference', 'iree-cpu', 'iree-cuda', 'onnxruntime'], got "auto"
ge.graph @ipow {
  %x = ge.data 0 "x" : !ge.tensor<[2], i32>
  %y = ge.pow %x, %x {name = "p"} : (!ge.tensor<[2], i32>, !ge.tensor<[2], i32>) -> !ge.tensor<[2], i32>
  ge.output %y : !ge.tensor<[2], i32>
}
