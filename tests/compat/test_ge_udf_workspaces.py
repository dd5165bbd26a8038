"""GE's C++ UDF workspaces (`examples/dflow/udf_workspace/01`..`04`) as a GE user brings them: a
workspace of CMake projects built by GE's command line (ASCEND_HOME_PATH's headers and
libflow_func.so, -std=c++11, the old string ABI), compile configs beside the script naming the
workspace relative to where the script runs, and the same API calls as GE's samples make. The
sources here are written for these tests; they reproduce each sample's calls and the values GE's
samples document."""
import json
from pathlib import Path

import numpy as np
import pytest

import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.graph import Graph

# The CMake project of each workspace folder, as GE's samples lay it out: every *.cpp of the
# folder into lib${UDF_TARGET_LIB}.so under ${PROJECT_BINARY_DIR}/${RELEASE_DIR}, GE's headers
# from ${ASCEND_HOME_PATH}/include, GE's libflow_func.so linked whole.
GE_STYLE_CMAKELISTS = r'''
cmake_minimum_required(VERSION 3.14)
project(UDF)
if (NOT DEFINED ENV{ASCEND_HOME_PATH})
  message(FATAL_ERROR "export ASCEND_HOME_PATH first")
endif ()
set(ASCEND_HOME_PATH $ENV{ASCEND_HOME_PATH})
if ("x${RESOURCE_TYPE}" STREQUAL "xAarch")
  set(FLOW_FUNC_LIB ${ASCEND_HOME_PATH}/devlib/linux/aarch64/libflow_func.so)
else ()
  set(FLOW_FUNC_LIB ${ASCEND_HOME_PATH}/devlib/linux/x86_64/libflow_func.so)
endif ()
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${RELEASE_DIR})
file(GLOB SOURCES "*.cpp")
add_definitions(-D_GLIBCXX_USE_CXX11_ABI=0)
set(CMAKE_CXX_COMPILER ${TOOLCHAIN})
add_library(${UDF_TARGET_LIB} SHARED ${SOURCES})
target_include_directories(${UDF_TARGET_LIB} PRIVATE ${ASCEND_HOME_PATH}/include)
target_compile_options(${UDF_TARGET_LIB} PRIVATE -O2 -std=c++11 -ftrapv -fstack-protector-all -fPIC)
target_link_libraries(${UDF_TARGET_LIB} PRIVATE -Wl,--whole-archive ${FLOW_FUNC_LIB} -Wl,--no-whole-archive)
'''

# 01: a single func (MetaFlowFunc) adding two tensors into the data type of init param out_type.
ADD_SINGLE_CPP = r'''
#include <vector>
#include "flow_func/meta_flow_func.h"
#include "flow_func/flow_func_log.h"

namespace FlowFunc {
class SumFunc : public MetaFlowFunc {
 public:
  int32_t Init() override {
    if (context_->GetAttr("out_type", out_type_) != FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_WARN("no out_type, using DT_INT32");
      out_type_ = TensorDataType::DT_INT32;
    }
    (void)context_->GetAttr("enableExceptionCatch", catch_exceptions_);
    return FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>> &inputs) override {
    int32_t code = 0;
    uint64_t user_context = 0;
    if (context_->GetException(code, user_context)) return FLOW_FUNC_SUCCESS;
    if (inputs.size() != 2 || inputs[0]->GetRetCode() != 0 || inputs[1]->GetRetCode() != 0 ||
        inputs[0]->GetMsgType() != MsgType::MSG_TYPE_TENSOR_DATA) {
      return FLOW_FUNC_FAILED;
    }
    Tensor *a = inputs[0]->GetTensor();
    Tensor *b = inputs[1]->GetTensor();
    if (a->GetShape() != b->GetShape() || a->GetDataType() != TensorDataType::DT_INT32) return FLOW_FUNC_FAILED;
    std::shared_ptr<FlowMsg> out = context_->AllocTensorMsg(a->GetShape(), out_type_);
    if (out == nullptr) return FLOW_FUNC_FAILED;
    const int32_t *x = static_cast<const int32_t *>(a->GetData());
    const int32_t *y = static_cast<const int32_t *>(b->GetData());
    int32_t *z = static_cast<int32_t *>(out->GetTensor()->GetData());
    for (size_t i = 0; i < a->GetDataSize() / sizeof(int32_t); ++i) z[i] = x[i] + y[i];
    FLOW_FUNC_LOG_INFO("transaction %lu summed", static_cast<unsigned long>(inputs[0]->GetTransactionId()));
    return context_->SetOutput(0, out);
  }

 private:
  TensorDataType out_type_ = TensorDataType::DT_INT32;
  bool catch_exceptions_ = false;
};
REGISTER_FLOW_FUNC("Add", SumFunc);
}  // namespace FlowFunc
'''

# 02: a single func that runs the invoked graph "invoke_graph" on its inputs (GE's order:
# RunFlowModel(key, inputs, outputs, timeout)) and sends each result to the same output index.
CALL_NN_CPP = r'''
#include <string>
#include <vector>
#include "flow_func/meta_flow_func.h"
#include "flow_func/flow_func_log.h"

namespace FlowFunc {
class InvokeFunc : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>> &inputs) override {
    std::vector<std::shared_ptr<FlowMsg>> outputs;
    int32_t ret = context_->RunFlowModel(key_.c_str(), inputs, outputs, 100000);
    if (ret != FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_ERROR("running %s failed", key_.c_str());
      return ret;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      ret = context_->SetOutput(i, outputs[i]);
      if (ret != FLOW_FUNC_SUCCESS) return ret;
    }
    return FLOW_FUNC_SUCCESS;
  }

 private:
  std::string key_{"invoke_graph"};
};
REGISTER_FLOW_FUNC("call_nn", InvokeFunc);
}  // namespace FlowFunc
'''

# 03: one multi-func class, two procs: Proc1 (node inputs 0, 1 -> node output 0) a + b,
# Proc2 (inputs 2, 3 -> output 1) a + a + b.
ADD_MULTI_CPP = r'''
#include <mutex>
#include <vector>
#include "flow_func/meta_multi_func.h"
#include "flow_func/flow_func_log.h"

namespace FlowFunc {
class PairSums : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams> &params) override {
    if (params->GetAttr("out_type", out_type_) != FLOW_FUNC_SUCCESS) out_type_ = TensorDataType::DT_INT32;
    return FLOW_FUNC_SUCCESS;
  }
  int32_t Proc1(const std::shared_ptr<MetaRunContext> &context, const std::vector<std::shared_ptr<FlowMsg>> &in) {
    return Sum(context, in, 1, 0);
  }
  int32_t Proc2(const std::shared_ptr<MetaRunContext> &context, const std::vector<std::shared_ptr<FlowMsg>> &in) {
    return Sum(context, in, 2, 1);
  }

 private:
  int32_t Sum(const std::shared_ptr<MetaRunContext> &context, const std::vector<std::shared_ptr<FlowMsg>> &in,
              int32_t times_first, uint32_t output) {
    if (in.size() != 2) return FLOW_FUNC_FAILED;
    Tensor *a = in[0]->GetTensor();
    Tensor *b = in[1]->GetTensor();
    std::shared_ptr<FlowMsg> out = context->AllocTensorMsg(a->GetShape(), out_type_);
    const int32_t *x = static_cast<const int32_t *>(a->GetData());
    const int32_t *y = static_cast<const int32_t *>(b->GetData());
    int32_t *z = static_cast<int32_t *>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < a->GetElementCnt(); ++i) z[i] = times_first * x[i] + y[i];
    std::unique_lock<std::mutex> lock(mutex_);
    return context->SetOutput(output, out);
  }

  TensorDataType out_type_ = TensorDataType::DT_INT32;
  std::mutex mutex_;
};
FLOW_FUNC_REGISTRAR(PairSums).RegProcFunc("Proc1", &PairSums::Proc1).RegProcFunc("Proc2", &PairSums::Proc2);
}  // namespace FlowFunc
'''

# 04: a control func: one int32 input; [1, 2, 3] goes to outputs 0 and 1 when it is 0, to
# outputs 2 and 3 otherwise (the other outputs get nothing).
CONTROL_CPP = r'''
#include <vector>
#include "flow_func/meta_multi_func.h"
#include "flow_func/flow_func_log.h"

namespace FlowFunc {
class Router : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams> &params) override {
    (void)params;
    return FLOW_FUNC_SUCCESS;
  }
  int32_t Route(const std::shared_ptr<MetaRunContext> &context, const std::vector<std::shared_ptr<FlowMsg>> &in) {
    Tensor *selector = in[0]->GetTensor();
    if (selector->GetShape().size() != 1 || selector->GetDataType() != TensorDataType::DT_INT32) {
      return FLOW_FUNC_FAILED;
    }
    std::shared_ptr<FlowMsg> out = context->AllocTensorMsg({3}, TensorDataType::DT_INT32);
    int32_t *values = static_cast<int32_t *>(out->GetTensor()->GetData());
    for (int32_t i = 0; i < 3; ++i) values[i] = i + 1;
    const uint32_t first = *static_cast<const int32_t *>(selector->GetData()) == 0 ? 0U : 2U;
    for (uint32_t index = first; index < first + 2U; ++index) {
      if (context->SetOutput(index, out) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    }
    return FLOW_FUNC_SUCCESS;
  }
};
FLOW_FUNC_REGISTRAR(Router).RegProcFunc("control_func", &Router::Route);
}  // namespace FlowFunc
'''

PROJECTS = {"01_udf_add": ADD_SINGLE_CPP, "02_udf_call_add_nn": CALL_NN_CPP,
            "03_udf_add_multi_func": ADD_MULTI_CPP, "04_control_func": CONTROL_CPP}

CONFIGS = {
    "add_func.json": {"func_list": [{"func_name": "Add"}], "input_num": 2, "output_num": 1,
                      "target_bin": "libadd.so", "workspace": "../udf_workspace",
                      "cmakelist_path": "01_udf_add/CMakeLists.txt"},
    "invoke_func.json": {"func_list": [{"func_name": "call_nn"}], "input_num": 2, "output_num": 1,
                         "target_bin": "libudf.so", "workspace": "../udf_workspace",
                         "cmakelist_path": "02_udf_call_add_nn/CMakeLists.txt"},
    "add_func_multi.json": {"func_list": [{"func_name": "Proc1", "inputs_index": [0, 1], "outputs_index": [0]},
                                          {"func_name": "Proc2", "inputs_index": [2, 3], "outputs_index": [1]}],
                            "input_num": 4, "output_num": 2, "target_bin": "libadd_multi.so",
                            "workspace": "../udf_workspace", "cmakelist_path": "03_udf_add_multi_func/CMakeLists.txt"},
    "add_func_multi_control.json": {"func_list": [{"func_name": "control_func"}], "input_num": 1, "output_num": 4,
                                    "target_bin": "libcontrol.so", "workspace": "../udf_workspace",
                                    "cmakelist_path": "04_control_func/CMakeLists.txt"},
}

TIMEOUT_MS = 20000


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    """GE's sample layout: udf_workspace/0X_*/ projects and python/config/*.json beside the scripts."""
    root = tmp_path_factory.mktemp("dflow")
    for folder, source in PROJECTS.items():
        project = root / "udf_workspace" / folder
        project.mkdir(parents=True)
        (project / "CMakeLists.txt").write_text(GE_STYLE_CMAKELISTS)
        (project / "udf.cpp").write_text(source)
    (root / "python" / "config").mkdir(parents=True)
    for name, config in CONFIGS.items():
        (root / "python" / "config" / name).write_text(json.dumps(config))
    return root


@pytest.fixture
def in_python_folder(samples, monkeypatch) -> Path:
    """Run where GE's Python samples run: `workspace` "../udf_workspace" counts from here."""
    monkeypatch.chdir(samples / "python")
    return samples


def add_graph_of_three() -> Graph:
    graph = Graph("add_graph")
    x = graph.data(0, shape=[3], dtype=dt.DT_INT32, name="x")
    y = graph.data(1, shape=[3], dtype=dt.DT_INT32, name="y")
    graph.set_outputs([graph.add(x, y)])
    return graph


def func_node(config: str, input_num: int, output_num: int, **params) -> tuple[df.FlowNode, df.FuncProcessPoint]:
    pp = df.FuncProcessPoint(compile_config_path=f"config/{config}")
    for key, value in params.items():
        pp.set_init_param(key, value)
    node = df.FlowNode(input_num=input_num, output_num=output_num)
    node.add_process_point(pp)
    return node, pp


def fetched(graph: df.FlowGraph, indexes: list[int] | None = None) -> list[np.ndarray]:
    outputs, _, ret = graph.fetch_data(indexes, TIMEOUT_MS)
    assert ret == 0
    return [np.asarray(output).tolist() for output in outputs]


ONES = np.ones([3], dtype=np.int32)
ONE_TWO_THREE = np.array([1, 2, 3], dtype=np.int32)


def test_01_udf_add_single_func_adds_into_out_type(in_python_folder, capsys):
    data0, data1 = df.FlowData(), df.FlowData()
    node, _ = func_node("add_func.json", 2, 1, out_type=df.DT_INT32)
    graph = df.FlowGraph([node(data0, data1)])
    assert graph.feed_data({data0: ONES, data1: ONE_TWO_THREE}) == 0
    assert fetched(graph) == [[2, 3, 4]]
    assert (in_python_folder / "udf_workspace" / "release" / "libadd.so").is_file()
    progress = capsys.readouterr().err
    assert "dfir: C++ UDF libadd.so (" in progress and "compiling udf.cpp" in progress and "built " in progress


def test_02_udf_call_add_nn_runs_the_invoked_graph(in_python_folder):
    data0, data1 = df.FlowData(), df.FlowData()
    node, pp = func_node("invoke_func.json", 2, 1)
    pp.add_invoked_closure("invoke_graph", df.GraphProcessPoint(df.Framework.ONNX, add_graph_of_three()))
    graph = df.FlowGraph([node(data0, data1)])
    assert graph.feed_data({data0: ONES, data1: ONE_TWO_THREE}) == 0
    assert fetched(graph) == [[2, 3, 4]]


def test_01_and_02_as_in_sample_base(in_python_folder):
    """sample_base.py: Add and call_nn both feed a graph that adds their results: 2 * (1 + [1, 2, 3])."""
    data0, data1 = df.FlowData(), df.FlowData()
    add_node, _ = func_node("add_func.json", 2, 1, out_type=df.DT_INT32)
    call_node, call_pp = func_node("invoke_func.json", 2, 1)
    call_pp.add_invoked_closure("invoke_graph", df.GraphProcessPoint(df.Framework.ONNX, add_graph_of_three()))
    sum_node = df.FlowNode(input_num=2, output_num=1)
    sum_node.add_process_point(df.GraphProcessPoint(df.Framework.ONNX, add_graph_of_three()))
    graph = df.FlowGraph([sum_node(add_node(data0, data1), call_node(data0, data1))])
    flow_info = df.FlowInfo()
    flow_info.start_time, flow_info.end_time = 0, 5
    assert graph.feed_data({data0: ONES, data1: ONE_TWO_THREE}, flow_info) == 0
    assert fetched(graph) == [[4, 6, 8]]


def test_03_udf_add_multi_func_sends_each_proc_to_its_node_output(in_python_folder):
    inputs = [df.FlowData() for _ in range(4)]
    node, _ = func_node("add_func_multi.json", 4, 2)
    graph = df.FlowGraph(list(node(*inputs)))
    values = [ONE_TWO_THREE, ONES, ONE_TWO_THREE * 10, ONES]
    assert graph.feed_data(dict(zip(inputs, values))) == 0
    assert fetched(graph, [0]) == [[2, 3, 4]]  # Proc1: a + b
    assert fetched(graph, [1]) == [[21, 41, 61]]  # Proc2: a + a + b


def test_04_control_func_routes_to_one_pair_of_outputs(in_python_folder):
    selector = df.FlowData()
    node, _ = func_node("add_func_multi_control.json", 1, 4)
    graph = df.FlowGraph(list(node(selector)))
    assert graph.feed_data({selector: np.array([0], dtype=np.int32)}) == 0
    assert fetched(graph, [0, 1]) == [[1, 2, 3], [1, 2, 3]]
    assert graph.feed_data({selector: np.array([1], dtype=np.int32)}) == 0
    assert fetched(graph, [2, 3]) == [[1, 2, 3], [1, 2, 3]]


def test_04_then_03_as_in_sample_multifunc(in_python_folder):
    """sample_multifunc.cpp: the control func picks which proc of the multi func runs."""
    selector = df.FlowData()
    control, _ = func_node("add_func_multi_control.json", 1, 4)
    adder, _ = func_node("add_func_multi.json", 4, 2)
    graph = df.FlowGraph(list(adder(*control(selector))))
    assert graph.feed_data({selector: np.array([0], dtype=np.int32)}) == 0
    assert fetched(graph, [0]) == [[2, 4, 6]]
    assert graph.feed_data({selector: np.array([1], dtype=np.int32)}) == 0
    assert fetched(graph, [1]) == [[3, 6, 9]]


# A C++ wrapper of a Python class, as GE's Python UDF workspaces have one (src_cpp/ beside
# src_python/): it embeds an interpreter through pybind11 and forwards each proc to a method.
EMBEDDING_WRAPPER_CPP = r'''
#include "pybind11/embed.h"
#include "meta_multi_func.h"
namespace py = pybind11;
namespace FlowFunc {
class Wrapper : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams> &params) override {
    constexpr const char *py_module_name = "scaler";
    constexpr const char *py_clz_name = "Scale";
    py_object_ = py::module_::import(py_module_name).attr(py_clz_name)();
    return FLOW_FUNC_SUCCESS;
  }
  int32_t FirstProc(const std::shared_ptr<MetaRunContext> &context, const std::vector<std::shared_ptr<FlowMsg>> &in) {
    PyGILState_STATE state = PyGILState_Ensure();
    int32_t ret = py_object_.attr("first")(context, in).cast<int32_t>();
    PyGILState_Release(state);
    return ret;
  }
  int32_t SecondProc(const std::shared_ptr<MetaRunContext> &context, const std::vector<std::shared_ptr<FlowMsg>> &in) {
    return py_object_(context, in).cast<int32_t>();
  }
 private:
  py::object py_object_;
};
FLOW_FUNC_REGISTRAR(Wrapper).RegProcFunc("First", &Wrapper::FirstProc).RegProcFunc("Second", &Wrapper::SecondProc);
}
'''


def embedding_project(root: Path) -> Path:
    """A Python UDF workspace with its C++ wrapper; the compile config's path."""
    (root / "src_cpp").mkdir(parents=True)
    (root / "src_cpp" / "wrapper.cpp").write_text(EMBEDDING_WRAPPER_CPP)
    (root / "src_python").mkdir()
    (root / "src_python" / "scaler.py").write_text("class Scale:\n    pass\n")
    (root / "CMakeLists.txt").write_text("project(wrapper)\n")
    config = root / "func.json"
    config.write_text(json.dumps({"func_list": [{"func_name": "First", "inputs_index": [0], "outputs_index": [0]},
                                                {"func_name": "Second", "inputs_index": [1], "outputs_index": [1]}],
                                  "input_num": 2, "output_num": 2, "target_bin": "libwrapper.so", "workspace": "."}))
    return config


def test_a_cpp_wrapper_embedding_python_is_served_by_dfirs_python_host(tmp_path, capsys):
    from dfir.frontend.udf.config import load_compile_config
    from dfir.frontend.udf.embedded import embedded_python_config, find_embedded_python
    config = load_compile_config(embedding_project(tmp_path))
    embedded = find_embedded_python(config)
    assert (embedded.module, embedded.class_name) == ("scaler", "Scale")
    assert embedded.methods == {"First": "first", "Second": "Second"}  # Second's body names no method
    served = embedded_python_config(config)
    assert (served.kind, served.py_module, served.py_class, served.workspace) == ("py_project", "scaler", "Scale",
                                                                                tmp_path)
    assert capsys.readouterr().err == (
        f"dfir: C++ UDF libwrapper.so ({tmp_path / 'CMakeLists.txt'}): wrapper.cpp embeds Python through pybind11; "
        f"dfir serves class Scale of src_python/scaler.py with its own Python host instead of building the wrapper\n")


def test_only_a_wrapper_of_an_existing_python_module_is_recognised(tmp_path):
    from dfir.frontend.udf.config import load_compile_config
    from dfir.frontend.udf.embedded import find_embedded_python
    config = embedding_project(tmp_path)
    (tmp_path / "src_cpp" / "wrapper.cpp").write_text(ADD_SINGLE_CPP)
    assert find_embedded_python(load_compile_config(config)) is None
    inline = EMBEDDING_WRAPPER_CPP.replace('py::module_::import(py_module_name).attr(py_clz_name)()',
                                           'py::module_::import("scaler").attr("Scale")()')
    (tmp_path / "src_cpp" / "wrapper.cpp").write_text(inline.replace("py_clz_name =", "unused ="))
    assert find_embedded_python(load_compile_config(config)).class_name == "Scale"  # named in the import
    (tmp_path / "src_python" / "scaler.py").unlink()  # the module it imports is not there: a C++ project
    assert find_embedded_python(load_compile_config(config)) is None


SCALER_PY = '''
import dataflow.flow_func as ff


class Scale:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def first(self, run_context, input_flow_msgs):
        return self._emit(run_context, 0, input_flow_msgs[0], 2)

    @ff.proc_wrapper()
    def Second(self, run_context, input_flow_msgs):
        return self._emit(run_context, 1, input_flow_msgs[0], 3)

    def _emit(self, run_context, index, msg, factor):
        values = msg.get_tensor().numpy()
        out = run_context.alloc_tensor_msg(list(values.shape), msg.get_tensor().get_data_type())
        out.get_tensor().numpy()[...] = values * factor
        return run_context.set_output(index, out)
'''


def test_a_wrapped_class_runs_each_func_through_the_method_its_wrapper_calls(tmp_path, capsys):
    config = embedding_project(tmp_path)
    (tmp_path / "src_python" / "scaler.py").write_text(SCALER_PY.replace("dataflow.flow_func", "dfir.flow_func"))
    first, second = df.FlowData(), df.FlowData()
    node = df.FlowNode(input_num=2, output_num=2)
    node.add_process_point(df.FuncProcessPoint(compile_config_path=str(config)))
    graph = df.FlowGraph(list(node(first, second)))
    assert graph.feed_data({first: np.array([1, 2], dtype=np.int32), second: np.array([5], dtype=np.int32)}) == 0
    tensors, _, ret = graph.fetch_data()
    assert ret == 0
    assert [t.numpy().tolist() for t in tensors] == [[2, 4], [15]]
    assert "embeds Python through pybind11" in capsys.readouterr().err
