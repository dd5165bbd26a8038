// UDF project process points: the IR of `FuncProcessPoint(compile_config_path=...)` nodes, Python
// (py_project) and C++ (cpp_project), with typed init params and invoked closures; then every
// verifier error of project process points, once. Each case is named after its behaviour.
// RUN: dfir-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: dfir-opt %s --split-input-file --verify-diagnostics --print-op-generic | filecheck %s --check-prefix=GENERIC

// The seed's Python Add project: its funcs from func_list, the packed sources as payload, the
// module and class as the project facts, the compile config it came from.
// CHECK-LABEL: df.func_pp @python_project_pp [#df.func<"Add1"(0, 1) -> (0)>, #df.func<"Add2"(2) -> (1)>] {kind = "py_project", compile_config = "udf/add_func.json", project = {py_class = "Add", py_module = "func_add"}} payload "H4sIAAAAAAAAAw=="
// GENERIC-LABEL: "df.func_pp"() <{sym_name = "python_project_pp", kind = "py_project", funcs = [#df.func<"Add1"(0, 1) -> (0)>, #df.func<"Add2"(2) -> (1)>], compile_config = "udf/add_func.json", project = {py_class = "Add", py_module = "func_add"}, payload = "H4sIAAAAAAAAAw=="}> ({
df.func_pp @python_project_pp [#df.func<"Add1"(0, 1) -> (0)>, #df.func<"Add2"(2) -> (1)>] {kind = "py_project", compile_config = "udf/add_func.json", project = {py_class = "Add", py_module = "func_add"}} payload "H4sIAAAAAAAAAw=="
df.graph @two_funcs_of_one_class {
  %a = df.data "a" index 0
  %b = df.data "b" index 1
  %c = df.data "c" index 2
  %sum, %single = df.node "add"(%a, %b, %c) pp @python_project_pp : 3 -> 2
  df.output %sum, %single
}

// -----

// Init params keep their type: int, float, bool, str, DType, lists of each, a list of lists of
// int and the empty list.
// CHECK-LABEL: df.func_pp @typed_init_params_pp
// CHECK-SAME:    init_params = {count = 3 : i64, scale = 5.000000e-01 : f64, on = true, tag = "add", out_type = #df.dtype<DT_INT32>, dims = [1 : i64, 2 : i64], weights = [2.500000e-01 : f64], flags = [true, false], names = ["a", "b"], types = [#df.dtype<DT_FLOAT>, #df.dtype<DT_INT64>], grid = [[1 : i64, 2 : i64], []], none = []}
df.func_pp @typed_init_params_pp [#df.func<"Add1"(0) -> (0)>] {kind = "py_project", init_params = {count = 3 : i64, scale = 0.5 : f64, on = true, tag = "add", out_type = #df.dtype<DT_INT32>, dims = [1 : i64, 2 : i64], weights = [0.25 : f64], flags = [true, false], names = ["a", "b"], types = [#df.dtype<DT_FLOAT>, #df.dtype<DT_INT64>], grid = [[1 : i64, 2 : i64], []], none = []}, compile_config = "add.json", project = {py_class = "Add", py_module = "func_add"}} payload "AA=="

// -----

// A C++ project ships its library and says which resource type it was built for; the UDF that
// calls NN lists its invoked closure, a GE graph process point of the same module.
// CHECK-LABEL: df.func_pp @cpp_project_pp [#df.func<"ReluNN"(0) -> (0)>] {kind = "cpp_project", compile_config = "add_cpp.json", project = {resource_type = "X86", target_bin = "libadd.so"}} payload "f0VMRg==" {
// CHECK-NEXT:    df.invoked_closure "invoke_relu" @relu_graph_pp
// CHECK-NEXT:  }
// GENERIC-LABEL: "df.func_pp"() <{sym_name = "cpp_project_pp", kind = "cpp_project", funcs = [#df.func<"ReluNN"(0) -> (0)>], compile_config = "add_cpp.json", project = {resource_type = "X86", target_bin = "libadd.so"}, payload = "f0VMRg=="}> ({
// GENERIC-NEXT:    "df.invoked_closure"() <{key = "invoke_relu", pp = @relu_graph_pp}> : () -> ()
ge.graph @relu_graph {
  %x = ge.data 0 "x" : !ge.tensor<[2], f32>
  %y = ge.relu %x : !ge.tensor<[2], f32>
  ge.output %y : !ge.tensor<[2], f32>
}
df.graph_pp @relu_graph_pp graph @relu_graph {framework = "ge"}
df.func_pp @cpp_project_pp [#df.func<"ReluNN"(0) -> (0)>] {kind = "cpp_project", compile_config = "add_cpp.json", project = {resource_type = "X86", target_bin = "libadd.so"}} payload "f0VMRg==" {
  df.invoked_closure "invoke_relu" @relu_graph_pp
}

// -----

// A library built for the device still compiles: the IR (and the .om) record Ascend, and loading
// refuses it on a host that cannot run it.
// CHECK-LABEL: df.func_pp @ascend_library_pp [#df.func<"Add1"(0) -> (0)>] {kind = "cpp_project", compile_config = "add_cpp.json", project = {resource_type = "Ascend", target_bin = "libadd.so"}} payload "f0VMRg=="
df.func_pp @ascend_library_pp [#df.func<"Add1"(0) -> (0)>] {kind = "cpp_project", compile_config = "add_cpp.json", project = {resource_type = "Ascend", target_bin = "libadd.so"}} payload "f0VMRg=="

// -----

// Only three kinds of UDF exist.
// CHECK: df.func_pp @unknown_kind_pp: kind "java_project" is not one of ['py_func', 'py_project', 'cpp_project']
df.func_pp @unknown_kind_pp [#df.func<"f"(0) -> (0)>] {kind = "java_project"} payload "AA=="

// -----

// A project ships its code.
// CHECK: df.func_pp @project_without_payload_pp: a py_project needs a payload
df.func_pp @project_without_payload_pp [#df.func<"Add1"(0) -> (0)>] {kind = "py_project", compile_config = "add.json", project = {py_class = "Add", py_module = "func_add"}}

// -----

// A project names the compile config it came from.
// CHECK: df.func_pp @project_without_config_pp: a cpp_project needs a compile_config
df.func_pp @project_without_config_pp [#df.func<"Add1"(0) -> (0)>] {kind = "cpp_project", project = {resource_type = "X86", target_bin = "libadd.so"}} payload "AA=="

// -----

// A Python project names its class.
// CHECK: df.func_pp @python_project_without_class_pp: project.py_class must be a string, got nothing
df.func_pp @python_project_without_class_pp [#df.func<"Add1"(0) -> (0)>] {kind = "py_project", compile_config = "add.json", project = {py_module = "func_add"}} payload "AA=="

// -----

// A C++ library runs on X86, Aarch or Ascend.
// CHECK: df.func_pp @unknown_resource_type_pp: project.resource_type must be one of ['X86', 'Aarch', 'Ascend'], got "Riscv"
df.func_pp @unknown_resource_type_pp [#df.func<"Add1"(0) -> (0)>] {kind = "cpp_project", compile_config = "add.json", project = {resource_type = "Riscv", target_bin = "libadd.so"}} payload "AA=="

// -----

// An init param list holds values of one type.
// CHECK: df.func_pp @mixed_init_param_list_pp: init param 'mixed' list [1 : i64, "a"] must hold values of one type (or lists of integers)
df.func_pp @mixed_init_param_list_pp [#df.func<"Add1"(0) -> (0)>] {kind = "py_project", init_params = {mixed = [1 : i64, "a"]}, compile_config = "add.json", project = {py_class = "Add", py_module = "func_add"}} payload "AA=="

// -----

// An init param is a value a getter can return.
// CHECK: df.func_pp @untyped_init_param_pp: init param 'shape' is tensor<2xi32>, which is no init param value (an integer, float, bool, string, #df.dtype<DT_*> or a list)
df.func_pp @untyped_init_param_pp [#df.func<"Add1"(0) -> (0)>] {kind = "py_project", init_params = {shape = tensor<2xi32>}, compile_config = "add.json", project = {py_class = "Add", py_module = "func_add"}} payload "AA=="
