"""C++ UDF projects: a library built by CMake at compile time (once per test session), packed into
the `.om`, loaded natively and called with the GIL released; return codes, exceptions, init params,
invoked GE graphs, resource types, logging and the generated C++ project."""
import json
import logging
import runpy
import subprocess
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import dfir
from dfir.core.flow_info import FlowInfo
from dfir.core.messages import Kind, Message, TransactionMeta
import dfir.data_type as dt
import dfir.dataflow as df
import dfir.flow_func as ff
from dfir.ge.error import GeError
from dfir.om.schema import PartitionType
from dfir.runtime.driver.process_scheduler import WORKER_FAILED, plan_wiring
from dfir.runtime.om import read_om
from dfir.tools.cli import main as cli
from project_helpers import add_graph, assert_raise_stops_a_graph_that_does_not_catch, catching, int32, project_graph
from test_replication import deploy_files
from dfir.frontend.udf.config import load_compile_config

# The seed's Add project in C++: Add1/Add2 follow the seed's Python Add1, AddNN runs the invoked
# GE graph; the other funcs exercise the rest of the API.
ADD_CPP = r'''
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func.h"

using namespace FlowFunc;

namespace {

template <typename T>
std::string Text(const T& value) { return std::to_string(value); }
std::string Text(const std::string& value) { return value; }
std::string Text(bool value) { return value ? "true" : "false"; }
std::string Text(TensorDataType value) { return "dt" + std::to_string(static_cast<int>(value)); }
template <typename T>
std::string Text(const std::vector<T>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + Text(static_cast<T>(values[i]));
  return text + "]";
}

template <typename T>
void Describe(const MetaParams& params, const char* name, const char* type, std::string& out) {
  T value{};
  if (params.GetAttr(name, value) == FLOW_FUNC_SUCCESS) out += std::string(name) + ":" + type + "=" + Text(value) + ";";
}

}  // namespace

class Add : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>& params) override {
    bool fail = false;
    if (params->GetAttr("fail_init", fail) == FLOW_FUNC_SUCCESS && fail) {
      FLOW_FUNC_LOG_ERROR("asked to fail");
      return FLOW_FUNC_FAILED;
    }
    for (const char* name : {"i", "il", "ill", "b", "bl", "f", "fl", "s", "sl", "d", "dl"}) {
      Describe<int64_t>(*params, name, "int", attrs_);
      Describe<std::vector<int64_t>>(*params, name, "int_list", attrs_);
      Describe<std::vector<std::vector<int64_t>>>(*params, name, "int_list_list", attrs_);
      Describe<bool>(*params, name, "bool", attrs_);
      Describe<std::vector<bool>>(*params, name, "bool_list", attrs_);
      Describe<float>(*params, name, "float", attrs_);
      Describe<std::vector<float>>(*params, name, "float_list", attrs_);
      Describe<std::string>(*params, name, "str", attrs_);
      Describe<std::vector<std::string>>(*params, name, "str_list", attrs_);
      Describe<TensorDataType>(*params, name, "dtype", attrs_);
      Describe<std::vector<TensorDataType>>(*params, name, "dtype_list", attrs_);
    }
    int64_t missing = 0;
    if (params->GetAttr("absent", missing) == FLOW_FUNC_ERR_ATTR_NOT_EXITS) attrs_ += "absent:missing;";
    attrs_ += "facts=" + std::string(params->GetName()) + "," + std::to_string(params->GetInputNum()) + "," +
              std::to_string(params->GetOutputNum()) + "," + std::to_string(params->GetRunningDeviceId()) + "," +
              std::to_string(params->GetRunningInstanceId()) + "," + std::to_string(params->GetRunningInstanceNum()) +
              "," + (std::strlen(params->GetWorkPath()) > 0 ? "work" : "nowork");
    FLOW_FUNC_LOG_INFO("func name is %s", params->GetName());
    return FLOW_FUNC_SUCCESS;
  }

  int32_t AddProc1(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    return AddInto(context, inputs, 0);
  }

  // output indexes are the node's: Add2's outputs_index is [1]
  int32_t AddProc2(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    return AddInto(context, inputs, 1);
  }

  int32_t AddInto(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs,
                  uint32_t output) {
    for (const auto& msg : inputs) {
      if (msg->GetRetCode() != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    }
    if (inputs.size() != 2) {
      FLOW_FUNC_LOG_ERROR("invalid input");
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    const Tensor* a = inputs[0]->GetTensor();
    const Tensor* b = inputs[1]->GetTensor();
    if (a->GetDataType() != b->GetDataType()) {
      FLOW_FUNC_LOG_ERROR("input data type is not same");
      return FLOW_FUNC_FAILED;
    }
    if (a->GetShape() != b->GetShape()) {
      FLOW_FUNC_LOG_ERROR("input data shape is not same");
      return FLOW_FUNC_FAILED;
    }
    FLOW_FUNC_LOG_INFO("shape is same");
    std::shared_ptr<FlowMsg> out = context->AllocTensorMsg(a->GetShape(), TensorDataType::DT_INT32);
    const int32_t* x = static_cast<const int32_t*>(a->GetData());
    const int32_t* y = static_cast<const int32_t*>(b->GetData());
    int32_t* z = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < a->GetElementCnt(); ++i) z[i] = x[i] + y[i];
    if (context->SetOutput(output, out) != FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_ERROR("set output failed");
      return FLOW_FUNC_FAILED;
    }
    return FLOW_FUNC_SUCCESS;
  }

  int32_t AddNN(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    std::vector<std::shared_ptr<FlowMsg>> outputs;
    const int32_t ret = context->RunFlowModel("invoke_graph", inputs, outputs, 1000);
    if (ret != FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_ERROR("run nn failed");
      return ret;
    }
    for (uint32_t i = 0; i < outputs.size(); ++i) {  // its outputs_index: [2]
      if (context->SetOutput(2 + i, outputs[i]) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    }
    return FLOW_FUNC_SUCCESS;
  }

  int32_t OutOfRange(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    return context->SetOutput(3, inputs[0]) == FLOW_FUNC_SUCCESS ? FLOW_FUNC_SUCCESS : FLOW_FUNC_FAILED;
  }

  int32_t Throw(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) {
    throw std::runtime_error("bad value");
  }

  int32_t UserCode(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) {
    return 9900001;
  }

  int32_t PassThrough(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    return context->SetOutput(0, inputs[0]);
  }

  // Passes its input on; a worker running it ends (SIGABRT) on a first element of 2.
  int32_t AbortOnTwo(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    if (*static_cast<const int32_t*>(inputs[0]->GetTensor()->GetData()) == 2) std::abort();
    return context->SetOutput(0, inputs[0]);
  }

  // Passes its input on; a call on a first element of 2 never returns.
  int32_t HangOnTwo(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    while (*static_cast<const int32_t*>(inputs[0]->GetTensor()->GetData()) == 2) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return context->SetOutput(0, inputs[0]);
  }

  // Outputs, for a 4096-aligned tensor and a 256-aligned raw buffer it allocates: their addresses
  // modulo the alignment and whether every byte starts zero.
  int32_t Aligned(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>&) {
    std::shared_ptr<FlowMsg> tensor = context->AllocTensorMsgWithAlign({3, 5}, TensorDataType::DT_INT64, 4096);
    std::shared_ptr<FlowMsg> raw = context->AllocRawDataMsg(1000, 256);
    void* raw_data = nullptr;
    uint64_t raw_size = 0;
    raw->GetRawData(raw_data, raw_size);
    const auto* bytes = static_cast<const uint8_t*>(tensor->GetTensor()->GetData());
    bool zero = std::all_of(bytes, bytes + tensor->GetTensor()->GetDataSize(), [](uint8_t b) { return b == 0; }) &&
                std::all_of(static_cast<const uint8_t*>(raw_data), static_cast<const uint8_t*>(raw_data) + raw_size,
                            [](uint8_t b) { return b == 0; });
    std::shared_ptr<FlowMsg> out = context->AllocTensorMsg({3}, TensorDataType::DT_INT64);
    auto* data = static_cast<int64_t*>(out->GetTensor()->GetData());
    data[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(tensor->GetTensor()->GetData()) % 4096);
    data[1] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(raw_data) % 256);
    data[2] = zero ? 1 : 0;
    return context->SetOutput(0, out);
  }

  // Outputs (found, code, user context id) of the exception raised for the call's transaction.
  int32_t Caught(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>&) {
    int32_t code = 0;
    uint64_t user_context = 0;
    const bool found = context->GetException(code, user_context);
    std::shared_ptr<FlowMsg> out = context->AllocTensorMsg({3}, TensorDataType::DT_INT64);
    auto* data = static_cast<int64_t*>(out->GetTensor()->GetData());
    data[0] = found ? 1 : 0;
    data[1] = code;
    data[2] = static_cast<int64_t>(user_context);
    return context->SetOutput(0, out);
  }

  int32_t Raise(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>&) {
    context->RaiseException(9900002, 77);
    return FLOW_FUNC_SUCCESS;
  }

  int32_t BadBalance(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    OutOptions options;
    BalanceConfig* config = options.MutableBalanceConfig();
    BalanceWeight weight;
    weight.rowNum = 1;
    weight.colNum = 4;
    config->SetBalanceWeight(weight);
    config->SetAffinityPolicy(AffinityPolicy::ROW_AFFINITY);
    config->SetDataPos({{0, 4}});
    return context->SetOutput(0, inputs[0], options);
  }

  // A stream-input proc: two messages of input 0 and one of input 1 per call, summed.
  int32_t StreamSum(const std::shared_ptr<MetaRunContext>& context,
                    const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
    std::shared_ptr<FlowMsg> parts[3];
    for (int k = 0; k < 3; ++k) {
      if (queues[k == 2 ? 1 : 0]->Dequeue(parts[k], 5000) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    }
    std::shared_ptr<FlowMsg> out = context->AllocTensorMsg({1}, TensorDataType::DT_INT32);
    int32_t sum = queues[0]->Depth() > 0 && queues[0]->Size() >= 0 ? 0 : -1000;
    for (const auto& part : parts) sum += *static_cast<const int32_t*>(part->GetTensor()->GetData());
    *static_cast<int32_t*>(out->GetTensor()->GetData()) = sum;
    return context->SetOutput(0, out);
  }

  int32_t Report(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>&) {
    char user[4] = {};
    if (context->GetUserData(user, 3) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    const std::string text = attrs_ + ";user=" + user;
    std::shared_ptr<FlowMsg> raw = context->AllocRawDataMsg(static_cast<int64_t>(text.size()));
    void* data = nullptr;
    uint64_t size = 0;
    raw->GetRawData(data, size);
    std::memcpy(data, text.data(), size);
    return context->SetOutput(0, raw);
  }

 private:
  std::string attrs_;
};

FLOW_FUNC_REGISTRAR(Add)
    .RegProcFunc("Add1", &Add::AddProc1)
    .RegProcFunc("Add2", &Add::AddProc2)
    .RegProcFunc("AddNN", &Add::AddNN)
    .RegProcFunc("OutOfRange", &Add::OutOfRange)
    .RegProcFunc("Throw", &Add::Throw)
    .RegProcFunc("UserCode", &Add::UserCode)
    .RegProcFunc("PassThrough", &Add::PassThrough)
    .RegProcFunc("AbortOnTwo", &Add::AbortOnTwo)
    .RegProcFunc("HangOnTwo", &Add::HangOnTwo)
    .RegProcFunc("Aligned", &Add::Aligned)
    .RegProcFunc("Caught", &Add::Caught)
    .RegProcFunc("Raise", &Add::Raise)
    .RegProcFunc("BadBalance", &Add::BadBalance)
    .RegProcFunc("Report", &Add::Report)
    .RegProcFunc("StreamSum", &Add::StreamSum);
'''

CMAKELISTS = '''
cmake_minimum_required(VERSION 3.16)
set(TOOLCHAIN "g++" CACHE STRING "")
set(RELEASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}/release" CACHE PATH "")
set(RESOURCE_TYPE "X86" CACHE STRING "")
set(UDF_TARGET_LIB "add" CACHE STRING "")
set(CMAKE_CXX_COMPILER "${TOOLCHAIN}")
project(add_udf LANGUAGES CXX)
get_filename_component(RELEASE_DIR "${RELEASE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
add_library(${UDF_TARGET_LIB} SHARED add.cpp)
target_compile_features(${UDF_TARGET_LIB} PRIVATE cxx_std_17)
target_compile_options(${UDF_TARGET_LIB} PRIVATE -O1 -fvisibility=hidden)
target_include_directories(${UDF_TARGET_LIB} PRIVATE "${DFIR_INCLUDE_DIR}")
set_target_properties(${UDF_TARGET_LIB} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${RELEASE_DIR}")
'''


@pytest.fixture(scope="session")
def workspace(tmp_path_factory) -> Path:
    """The C++ Add workspace, built (by the first compile that needs it) once per session."""
    folder = tmp_path_factory.mktemp("cpp_add") / "add_ws"
    folder.mkdir()
    (folder / "add.cpp").write_text(ADD_CPP)
    (folder / "CMakeLists.txt").write_text(CMAKELISTS)
    return folder


def config_for(workspace: Path, funcs: list, input_num: int, output_num: int, name: str = "add_func",
               **extra) -> Path:
    config = {"func_list": funcs, "input_num": input_num, "output_num": output_num,
              "workspace": str(workspace), "target_bin": "libadd.so", **extra}
    path = workspace.parent / f"{name}.json"
    path.write_text(json.dumps(config))
    return path


def one_func(workspace: Path, func: str, input_num: int = 1, output_num: int = 1, **extra) -> Path:
    return config_for(workspace, [{"func_name": func}], input_num, output_num, name=func, **extra)


@pytest.fixture(scope="session")
def seed_om(workspace) -> bytes:
    funcs = [{"func_name": "Add1", "inputs_index": [0, 1], "outputs_index": [0]},
             {"func_name": "Add2", "inputs_index": [2], "outputs_index": [1]},
             {"func_name": "AddNN", "inputs_index": [3, 4], "outputs_index": [2]}]
    config = config_for(workspace, funcs, 5, 3)
    return dfir.compile(project_graph(config, 5, 3, closures={"invoke_graph": add_graph()})).om


def test_the_library_is_built_by_cmake_with_the_seed_options(workspace, seed_om):
    config = load_compile_config(workspace.parent / "add_func.json")
    cache = (workspace / "build" / "_add" / "CMakeCache.txt").read_text()
    for option in ("TOOLCHAIN:STRING=g++", f"RELEASE_DIR:PATH={workspace / 'release'}",
                   "RESOURCE_TYPE:STRING=X86", "UDF_TARGET_LIB:STRING=add",
                   f"DFIR_INCLUDE_DIR:UNINITIALIZED={ff.include_dir()}"):
        assert option in cache, option
    library = (workspace / "release" / "libadd.so").read_bytes()
    model = read_om(seed_om).models[0]
    assert [bytes(p.data) for p in model.partitions_of(PartitionType.SO_BINS)] == [library]
    plan = json.loads(bytes(model.partition(PartitionType.FLOW_MODEL).data))
    assert plan["so_bins"][0]["name"] == "libadd.so" and plan["so_bins"][0]["resource_type"] == "X86"
    assert plan["nodes"][0]["pp"]["kind"] == "cpp_project" and plan["nodes"][0]["pp"]["closures"] == {"invoke_graph": 0}
    assert config.kind == "cpp_project"


def test_the_seed_add_funcs_run_natively(seed_om):
    with dfir.load(seed_om) as model:
        model.feed_data([int32(1, 2), int32(10, 20), int32(5), int32(3, 4), int32(30, 40)])
        assert model.fetch_data(indexes=[0], timeout=5000)[0][0].numpy().tolist() == [11, 22]
        assert model.fetch_data(indexes=[2], timeout=5000)[0][0].numpy().tolist() == [33, 44]
        _, _, ret = model.fetch_data(indexes=[1], timeout=5000)
        assert ret == ff.FLOW_FUNC_ERR_PARAM_INVALID
        assert ret.message == ("UDF add.Add2 returned FLOW_FUNC_ERR_PARAM_INVALID (164000); "
                               "last error logged: AddInto: invalid input")
        model.feed_data([int32(1, 2), int32(1, 2, 3), int32(5), int32(3, 4), int32(30, 40)])
        _, info, ret = model.fetch_data(indexes=[0], timeout=5000)
        assert (info.transaction_id, ret, ret.message) == (2, ff.FLOW_FUNC_FAILED, (
            "UDF add.Add1 returned FLOW_FUNC_FAILED (564000); last error logged: AddInto: input data "
            "shape is not same"))


@pytest.mark.parametrize("func, ret, message", [
    ("OutOfRange", ff.FLOW_FUNC_FAILED,
     "UDF add.OutOfRange returned FLOW_FUNC_FAILED (564000); SetOutput: output index 3 is not an output of "
     "func 'OutOfRange'; its outputs are [0]"),
    ("Throw", ff.FLOW_FUNC_FAILED,
     "UDF add.Throw returned FLOW_FUNC_FAILED (564000); C++ UDF func 'Throw' threw: bad value"),
    ("UserCode", 9900001, "UDF add.UserCode returned 9900001 (user-defined)"),
    ("BadBalance", ff.FLOW_FUNC_ERR_PARAM_INVALID,
     "UDF add.BadBalance returned FLOW_FUNC_ERR_PARAM_INVALID (164000); SetOutput: data position "
     "(0, 4) lies outside the 1 x 4 matrix"),
    ("AddNN", ff.FLOW_FUNC_ERR_PARAM_INVALID,
     "UDF add.AddNN returned FLOW_FUNC_ERR_PARAM_INVALID (164000); RunFlowModel('invoke_graph'): no "
     "invoked closure is registered as 'invoke_graph'; the process point has []; last error logged: "
     "AddNN: run nn failed"),
])
def test_failures_reach_fetch_data_with_their_code_and_reason(workspace, func, ret, message):
    with dfir.load(dfir.compile(project_graph(one_func(workspace, func), 1, 1)).om) as model:
        model.feed_data([int32(7)])
        model.feed_data([int32(8)])
        outputs, info, got = model.fetch_data(timeout=5000)
        assert (outputs, info.transaction_id, got, got.message) == ([], 1, ret, message)
        assert model.fetch_data(timeout=5000)[1].transaction_id == 2  # the model keeps serving


def test_a_raised_exception_fails_its_transaction_when_the_graph_catches_exceptions(workspace):
    with dfir.load(dfir.compile(catching(project_graph(one_func(workspace, "Raise"), 1, 1))).om) as model:
        model.feed_data([int32(7)])
        model.feed_data([int32(8)])
        outputs, info, got = model.fetch_data(timeout=5000)
        assert (outputs, info.transaction_id, got, got.message) == (
            [], 1, 9900002, "UDF add.Raise raised exception 9900002 (user context id 77)")
        assert model.fetch_data(timeout=5000)[1].transaction_id == 2  # the model keeps serving


def test_a_raised_exception_stops_a_graph_that_does_not_catch_exceptions(workspace):
    with dfir.load(dfir.compile(project_graph(one_func(workspace, "Raise"), 1, 1)).om) as model:
        model.feed_data([int32(7)])
        assert_raise_stops_a_graph_that_does_not_catch(model, 9900002, "add.Raise", 77)
        with pytest.raises(GeError, match=r"^feed_data failed; model=g; the model failed: the model was aborted by "):
            model.feed_data([int32(8)])


def test_every_init_param_type_and_the_user_data_reach_the_library(workspace):
    params = {"i": 3, "il": [1, 2], "ill": [[1], [2, 3]], "b": True, "bl": [False, True], "f": 0.5,
              "fl": [1.5], "s": "x", "sl": ["y", "z"], "d": dt.DT_FLOAT16, "dl": [dt.DT_INT8]}
    info = FlowInfo(transaction_id=9)
    info.set_user_data(bytearray(b"abc"))
    with dfir.load(dfir.compile(project_graph(one_func(workspace, "Report"), 1, 1, params, name="attrs")).om) as model:
        model.feed_data([int32(0)], flow_info=info)
        outputs, got, ret = model.fetch_data(timeout=5000)
    assert ret == 0 and got.transaction_id == 9
    assert outputs[0].numpy().tobytes().decode().split(";") == [
        "i:int=3", "il:int_list=[1,2]", "ill:int_list_list=[[1],[2,3]]", "b:bool=true",
        "bl:bool_list=[false,true]", "f:float=0.500000", "fl:float_list=[1.500000]", "s:str=x",
        "sl:str_list=[y,z]", "d:dtype=dt1", "dl:dtype_list=[dt2]", "absent:missing",
        "facts=attrs,1,1,-1,0,1,work", "user=abc"]


def test_a_failing_init_fails_the_load(workspace):
    om = dfir.compile(project_graph(one_func(workspace, "Add1", 2), 2, 1, {"fail_init": True})).om
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == ("node 'add': Init of C++ UDF library libadd.so returned "
                                         "FLOW_FUNC_FAILED (564000); Add::Init returned 564000; last error "
                                         "logged: Init: asked to fail")


def test_a_func_the_library_lacks_is_named_at_load(workspace):
    om = dfir.compile(project_graph(one_func(workspace, "Add9"), 1, 1)).om
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == (
        "node 'add': C++ UDF library libadd.so registers funcs ['AbortOnTwo', 'Add1', 'Add2', 'AddNN', 'Aligned', "
        "'BadBalance', 'Caught', 'HangOnTwo', 'OutOfRange', 'PassThrough', 'Raise', 'Report', 'StreamSum', 'Throw', 'UserCode'], not 'Add9'")


def test_an_ascend_library_compiles_but_is_refused_at_load(workspace):
    config = one_func(workspace, "PassThrough", resource_type="Ascend")
    om = dfir.compile(project_graph(config, 1, 1, name="on_device")).om
    plan = json.loads(bytes(read_om(om).models[0].partition(PartitionType.FLOW_MODEL).data))
    assert plan["so_bins"][0]["resource_type"] == "Ascend" and plan["nodes"][0]["pp"]["resource_type"] == "Ascend"
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == ("node 'on_device': C++ UDF library libadd.so is built for resource "
                                         "type Ascend, which cannot run on this host (x86_64, resource type X86)")


@contextmanager
def udf_log_file(path: Path):
    """UDF log records (`level|node|instance|message`) go to `path`, from worker processes too."""
    log = logging.getLogger("dfir.flow_func")
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(levelname)s|%(udf_node)s|%(udf_instance)s|%(message)s"))
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        handler.close()
        log.setLevel(level)


def test_logs_of_the_library_reach_python_logging_with_the_node(workspace, tmp_path):
    graph = project_graph(one_func(workspace, "Add1", 2), 2, 1, name="logger")
    with udf_log_file(tmp_path / "udf.log"), dfir.load(dfir.compile(graph).om) as model:
        model.feed_data([int32(1), int32(2)])
        model.fetch_data(timeout=5000)
    lines = (tmp_path / "udf.log").read_text().splitlines()
    assert "INFO|logger|0|[logger#0 Init] Init: func name is logger" in lines
    assert "INFO|logger|0|[logger#0 Add1] AddInto: shape is same" in lines


@pytest.fixture(scope="module")
def udf_caller(workspace):
    """`udf_caller(func, exceptions={})`: the library's `func` (one output, the node's output 0) as
    the runtime calls it (`_native.UdfCaller`), the library taken from a compiled model (compiling builds
    it): its output sets, or `("settle", result, error)` for a call that did not succeed cleanly."""
    from dfir.runtime import _native
    om = read_om(dfir.compile(project_graph(one_func(workspace, "PassThrough"), 1, 1)).om)
    library = _native.load_udf_library(om.models[0].partitions_of(PartitionType.SO_BINS)[0].data, "libadd.so")

    def make(func: str, exceptions: dict | None = None):
        facts = {"name": "n", "input_num": 1, "output_num": 1, "work_path": "", "device_id": -1,
                 "instance_id": 0, "instance_num": 1}
        instance = _native.UdfInstance(library, facts, [], [func])
        assert instance.init() == (0, "")
        caller = _native.UdfCaller(instance, func, [0], {} if exceptions is None else exceptions, None,
                                   lambda result, error=None: ("settle", result, error))
        return lambda *messages: caller(list(messages))
    return make


@pytest.fixture
def pass_through(udf_caller):
    return udf_caller("PassThrough")


def test_a_call_that_does_not_succeed_cleanly_is_settled_with_what_it_did(udf_caller):
    meta = TransactionMeta(4, user_data=b"x")
    settled, result, error = udf_caller("UserCode")(Message.tensor(meta, int32(1)))
    assert (settled, error, result) == ("settle", None, (9900001, [], [], None, meta, ""))
    settled, (ret, outputs, problems, raised, transaction, last_error), _ = udf_caller("Add1")(
        Message.tensor(meta, int32(1)))
    assert (ret, outputs, raised, transaction, last_error) == (
        ff.FLOW_FUNC_ERR_PARAM_INVALID, [], None, meta, "AddInto: invalid input")
    settled, (ret, outputs, _, raised, _, _), _ = udf_caller("Raise")(Message.tensor(meta, int32(1)))
    assert (ret, outputs, raised) == (0, [], (9900002, 77))
    [[(_, out)]] = udf_caller("Report")(Message.tensor(meta, int32(1)))
    assert (out.kind, bytes(out.payload).endswith(b";user=x")) == (Kind.RAW, True)


def test_buffers_a_cpp_udf_allocates_start_aligned_and_zero_filled(udf_caller):
    for _ in range(20):  # allocations land at varied addresses
        [[(_, out)]] = udf_caller("Aligned")(Message.tensor(TransactionMeta(1), int32(1)))
        assert out.payload.tolist() == [0, 0, 1]


def test_an_exception_raised_for_the_transaction_reaches_the_call(udf_caller):
    caught = udf_caller("Caught", {4: (7, 8)})
    [[(_, out)]] = caught(Message.tensor(TransactionMeta(4), int32(1)))
    assert out.payload.tolist() == [1, 7, 8]
    [[(_, out)]] = caught(Message.tensor(TransactionMeta(5), int32(1)))
    assert out.payload.tolist() == [0, 0, 0]


def test_tensors_cross_to_the_library_and_back_as_messages_without_copies(pass_through):
    meta = TransactionMeta(5, 1, 2, 0, b"ab")
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    [[(port, out)]] = pass_through(Message.tensor(meta, array))
    assert (port, out.kind, out.ret_code, out.error, out.route_label, out.data_label) == (0, Kind.TENSOR, 0, "", 0, 0)
    assert out.meta is meta, "metadata the UDF left alone is passed on, not rebuilt"
    assert (out.payload.dtype, out.payload.shape, out.payload.tolist()) == (np.float32, (2, 3), array.tolist())
    assert np.shares_memory(out.payload, array)


def test_a_call_belongs_to_its_latest_transaction_and_labels_cross(pass_through):
    older, newer = TransactionMeta(3), TransactionMeta(9, user_data=b"u")
    raw = Message(older, Kind.RAW, np.arange(4, dtype=np.uint8), route_label=2, data_label=7)
    [[(_, out)]] = pass_through(raw, Message.tensor(newer, np.zeros(1, np.int32)))
    assert (out.kind, out.payload.tolist(), out.route_label, out.data_label) == (Kind.RAW, [0, 1, 2, 3], 2, 7)
    assert out.meta == TransactionMeta(3, user_data=b"u"), "its own fields, the call's user data"


@pytest.mark.parametrize("message, problem", [
    (Message(TransactionMeta(1), Kind.OBJECT, {"k": 1}),
     "input 0 is a object message; a C++ UDF takes tensors, raw data and empty messages"),
    (Message.tensor(TransactionMeta(1), np.zeros(2, np.complex64)),
     "input 0 is a complex64 tensor, which a C++ UDF cannot take"),
    (Message.tensor(TransactionMeta(1), np.zeros(2, ">i4")), "input 0 is a >i4 tensor, which a C++ UDF cannot take"),
])
def test_a_message_a_cpp_udf_cannot_take_is_refused_naming_the_input(pass_through, message, problem):
    settled, result, error = pass_through(message)
    assert (settled, result, type(error)) == ("settle", None, GeError)
    assert error.error_message == problem


def test_an_object_fed_to_a_cpp_udf_fails_its_transaction_naming_the_input(workspace):
    graph = project_graph(one_func(workspace, "PassThrough", 1), 1, 1, name="objects")
    with dfir.load(dfir.compile(graph).om) as model:
        model.feed([{"not": "a tensor"}])
        values, ret = model.fetch(timeout=5000)
    assert (values, int(ret)) == ([], ff.FLOW_FUNC_FAILED)
    assert ret.message == ("UDF objects.PassThrough returned FLOW_FUNC_FAILED (564000); PassThrough raised GeError: "
                           "input 0 is a object message; a C++ UDF takes tensors, raw data and empty messages")


def test_a_library_without_registered_funcs_is_refused(tmp_path):
    (tmp_path / "plain.cpp").write_text("extern \"C\" int plain() { return 1; }\n")
    (tmp_path / "release").mkdir()
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(tmp_path / "release" / "libplain.so"),
                    str(tmp_path / "plain.cpp")], check=True)
    config = tmp_path / "plain.json"
    config.write_text(json.dumps({"func_list": [{"func_name": "F"}], "input_num": 1, "output_num": 1,
                                  "workspace": ".", "target_bin": "libplain.so"}))
    om = dfir.compile(project_graph(config, 1, 1)).om
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == (
        "C++ UDF library libplain.so registers no funcs: include \"flow_func/meta_flow_func.h\" or "
        "\"flow_func/meta_multi_func.h\" and register them with REGISTER_FLOW_FUNC or FLOW_FUNC_REGISTRAR")


def test_a_build_failure_shows_the_compiler_output(tmp_path, capsys):
    workspace = tmp_path / "broken_ws"
    workspace.mkdir()
    (workspace / "add.cpp").write_text("this is not C++\n")
    (workspace / "CMakeLists.txt").write_text(CMAKELISTS)
    config = config_for(workspace, [{"func_name": "Add1"}], 1, 1)
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 1, 1))
    first, *rest = error.value.error_message.splitlines()
    log = workspace / "build" / "_add" / "output.log"
    assert first == (f"compile config {config}: cmake build of the C++ project in {workspace} failed "
                     f"with exit status 2 (whole output in {log}):")
    assert any("error:" in line and "add.cpp" in line for line in rest)
    assert "this is not C++" in log.read_text()
    name = f"dfir: C++ UDF libadd.so ({workspace / 'CMakeLists.txt'})"
    assert capsys.readouterr().err.splitlines() == [f"{name}: configuring with CMake", f"{name}: compiling add.cpp"]


@pytest.mark.parametrize("change, message", [
    ({"target_bin": None}, "target_bin is missing"),
    ({"cmakelist_path": "cmake/CMakeLists.txt"},
     "cmakelist_path names {ws}/cmake/CMakeLists.txt, which is not an existing CMakeLists.txt"),
])
def test_cpp_config_errors_name_the_key(tmp_path, change, message):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = config_for(workspace, [{"func_name": "Add1"}], 1, 1)
    document = {key: value for key, value in {**json.loads(config.read_text()), **change}.items()
                if value is not None}
    config.write_text(json.dumps(document))
    with pytest.raises(GeError) as error:
        dfir.compile(project_graph(config, 1, 1))
    assert error.value.error_message == f"compile config {config}: {message.format(ws=workspace)}"


def test_a_generated_cpp_project_compiles_and_runs_unchanged(tmp_path, capsys):
    assert cli(["udf", "new", "ScaleAdd", "--lang", "cpp", "--dir", str(tmp_path)]) == 0
    created = capsys.readouterr().out.splitlines()[1:]
    assert sorted(Path(line.strip()).relative_to(tmp_path).as_posix() for line in created) == [
        "ScaleAdd/CMakeLists.txt", "ScaleAdd/README.md", "ScaleAdd/ScaleAdd.json", "ScaleAdd/example.py",
        "ScaleAdd/src/scale_add.cpp"]
    runpy.run_path(str(tmp_path / "ScaleAdd" / "example.py"), run_name="__main__")
    assert capsys.readouterr().out == "ret=0 out=[12, 23, 34]\n"
    assert (tmp_path / "ScaleAdd" / "release" / "libscale_add.so").is_file()


def test_a_stream_input_proc_reads_its_inputs_as_queues(workspace):
    config = config_for(workspace, [{"func_name": "StreamSum", "stream_input": True}], 2, 1, name="stream")
    with dfir.load(dfir.compile(project_graph(config, 2, 1, name="stream")).om) as model:
        for a, b in ((1, 10), (2, 20)):
            model.feed_data([int32(a), int32(b)])
        for a in (3, 4):
            model.feed_data({"in0": int32(a)}, partial_inputs=True)
        results = [model.fetch_data(timeout=5000) for _ in range(2)]
    # each call takes two messages of input 0 and one of input 1; its outputs belong to the latest
    assert [(outputs[0].numpy().tolist(), info.transaction_id, ret) for outputs, info, ret in results] == [
        ([13], 2, 0), ([27], 4, 0)]


@pytest.mark.parametrize("func, stream, message", [
    ("Add1", True, "C++ UDF func 'Add1' takes messages, but its compile config sets stream_input"),
    ("StreamSum", False, "C++ UDF func 'StreamSum' takes queues (stream input), but its compile config does "
                         "not set stream_input"),
])
def test_a_proc_of_the_other_signature_fails_naming_it(workspace, func, stream, message):
    config = config_for(workspace, [{"func_name": func, "stream_input": stream}], 2, 1, name=f"{func}_other")
    with dfir.load(dfir.compile(project_graph(config, 2, 1, name="other")).om) as model:
        model.feed_data([int32(1), int32(2)])
        _, _, ret = model.fetch_data(timeout=5000)
        assert (ret, ret.message) == (ff.FLOW_FUNC_FAILED, f"UDF other.{func} returned FLOW_FUNC_FAILED (564000); "
                                                          f"{message}")


# -- native firing: records in, records out ------------------------------------------------------

def cpp_node(workspace: Path, func: str, name: str, input_num: int = 1) -> df.FlowNode:
    node = df.FlowNode(input_num=input_num, output_num=1, name=name)
    node.add_process_point(df.FuncProcessPoint(compile_config_path=str(one_func(workspace, func, input_num))))
    return node


@df.pyflow
def inc_flow(x):
    return x + 1


@df.pyflow
def fail_on_two(x):
    if int(np.asarray(x).reshape(-1)[0]) == 2:  # a df.Tensor input: its reshape is GE's
        raise ValueError("two is not allowed")
    return x


def test_two_cpp_funcs_on_one_device_hand_records_to_each_other(workspace):
    first, second = cpp_node(workspace, "PassThrough", "first"), cpp_node(workspace, "PassThrough", "second")
    graph = df.FlowGraph([second(first(df.FlowData(name="x")))])
    om = dfir.compile(graph).om
    wiring = plan_wiring(json.loads(bytes(read_om(om).models[0].partition(PartitionType.FLOW_MODEL).data)), "m", 8)
    [between] = wiring.device.unit_inputs[1]
    assert wiring.device.shared[between], "a C++ func's output is a record channel inside its device"
    small, large = np.arange(3, dtype=np.int32), np.arange(100_000, dtype=np.float32).reshape(100, 1000)
    with dfir.load(om) as model:
        for array in (small, large, small):
            assert model.feed_data([array]) == 0
        results = [model.fetch_data(timeout=5000) for _ in range(3)]
        assert [(int(ret), info.transaction_id) for _, info, ret in results] == [(0, 1), (0, 2), (0, 3)]
        for (tensors, _, _), array in zip(results, (small, large, small)):
            assert tensors[0].numpy().dtype == array.dtype and np.array_equal(tensors[0].numpy(), array)
        region = model._scheduler.region
        assert region.arena_stats()["live_blocks"] == 1, "the large tensor crossed both funcs in one block"
        del results, tensors
        assert region.arena_stats()["live_blocks"] == 0, "every block came back"


def test_an_upstream_failure_passes_through_a_cpp_func_unchanged(workspace):
    graph = df.FlowGraph([cpp_node(workspace, "PassThrough", "relay")(fail_on_two.fnode()(df.FlowData(name="x")))])
    with dfir.load(dfir.compile(graph).om) as model:
        for value in (1, 2, 3):
            model.feed_data([int32(value)])
        results = [model.fetch_data(timeout=5000) for _ in range(3)]
    assert [(int(ret), info.transaction_id) for _, info, ret in results] == [
        (0, 1), (ff.FLOW_FUNC_FAILED, 2), (0, 3)]
    assert "ValueError: two is not allowed" in results[1][2].message
    assert [tensors[0].numpy().tolist() for tensors, _, ret in results if ret == 0] == [[1], [3]]


def test_a_cpp_func_feeding_a_replicated_node_reaches_each_instance(workspace, tmp_path):
    first = cpp_node(workspace, "PassThrough", "first")
    second = cpp_node(workspace, "PassThrough", "second")
    graph = df.FlowGraph([second(first(df.FlowData(name="x")))])
    options = deploy_files(tmp_path, {"first": "-1", "second": "0:0:0~1"})
    with dfir.load(dfir.compile(graph, options).om) as model:
        for value in range(1, 7):
            model.feed_data([int32(value)])
        results = sorted((info.transaction_id, tensors[0].numpy().tolist(), int(ret))
                         for tensors, info, ret in (model.fetch_data(timeout=5000) for _ in range(6)))
    assert results == [(t, [t], 0) for t in range(1, 7)]


def test_a_worker_that_dies_in_a_cpp_func_delivers_what_it_finished_and_is_restarted(workspace):
    graph = df.FlowGraph([cpp_node(workspace, "AbortOnTwo", "crash")(df.FlowData(name="x"))])
    with dfir.load(dfir.compile(graph).om) as model:
        for value in (1, 2, 3):
            assert model.feed_data([int32(value)]) == 0
        done, info, ret = model.fetch_data(timeout=5000)
        assert (done[0].numpy().tolist(), info.transaction_id, int(ret)) == ([1], 1, 0)
        failures = [model.fetch_data(timeout=5000) for _ in range(2)]
        assert model.feed_data([int32(4)]) == 0
        after = model.fetch_data(timeout=5000)
        assert model.stats()["workers"][0]["restarts"] == 1
    outcomes = [(info.transaction_id, int(ret), [t.numpy().tolist() for t in tensors]) for tensors, info, ret in failures]
    # 3 fails with the dead worker if it had taken 3's message, else it waits and runs on the new one
    assert outcomes[0] == (2, WORKER_FAILED, [])
    assert outcomes[1] in ((3, WORKER_FAILED, []), (3, 0, [[3]])), outcomes[1]
    assert "node 'crash' on device" in failures[0][2].message and "SIGABRT" in failures[0][2].message
    assert (after[0][0].numpy().tolist(), after[1].transaction_id, int(after[2])) == ([4], 4, 0)


def test_a_hung_cpp_call_past_its_compile_config_timeout_fails_with_the_timeout_code(workspace):
    config = one_func(workspace, "HangOnTwo", udf_timeout_ms=300)
    with dfir.load(dfir.compile(project_graph(config, 1, 1)).om) as model:
        for value in (1, 2, 3):
            assert model.feed_data([int32(value)]) == 0
        results = [model.fetch_data(timeout=5000) for _ in range(3)]
        assert model.feed_data([int32(4)]) == 0
        after = model.fetch_data(timeout=5000)
    outcomes = [(info.transaction_id, int(ret), [t.numpy().tolist() for t in tensors]) for tensors, info, ret in results]
    # 3 fails with the stopped worker if it had taken 3's message, else it waits and runs on the new one
    assert outcomes[:2] == [(1, 0, [[1]]), (2, ff.FLOW_FUNC_ERR_TIME_OUT_ERROR, [])]
    assert outcomes[2] in ((3, 0, [[3]]), (3, WORKER_FAILED, [])), outcomes[2]
    assert results[1][2].message.startswith(
        "node 'add' instance 0 on device host: a call ran longer than its udf_timeout_ms (300 ms); worker process ")
    assert (after[0][0].numpy().tolist(), int(after[2])) == ([4], 0)



def test_a_cpp_func_fed_from_local_channels_takes_python_messages(workspace):
    """Two Python nodes feed a two-input C++ func on their device: its inputs come on local
    channels (Messages), which the `UdfStep` hands to the general path."""
    x = df.FlowData(name="x")
    add = cpp_node(workspace, "Add1", "add", input_num=2)
    graph = df.FlowGraph([add(inc_flow.fnode()(x), inc_flow.fnode()(x))])
    om = dfir.compile(graph).om
    wiring = plan_wiring(json.loads(bytes(read_om(om).models[0].partition(PartitionType.FLOW_MODEL).data)), "m", 8)
    add_unit = next(u for u, ref in enumerate(wiring.device.units) if wiring.device.node_names[ref.node] == "add")
    assert not any(wiring.device.shared[c] for c in wiring.device.unit_inputs[add_unit])
    with dfir.load(om) as model:
        for value in (1, 2, 3):
            model.feed_data([int32(value, value)])
        results = [model.fetch_data(timeout=5000) for _ in range(3)]
    assert [(int(ret), tensors[0].numpy().tolist()) for tensors, _, ret in results] == [
        (0, [4, 4]), (0, [6, 6]), (0, [8, 8])]

