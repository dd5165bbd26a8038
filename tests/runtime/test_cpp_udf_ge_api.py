"""GE's C++ UDF API pieces beyond the seed's Add: single funcs (REGISTER_FLOW_FUNC, MetaContext),
OutOptions with a BalanceConfig and BalanceWeight, AscendString init params, SetMsgType,
FlowFuncLogger, FlowBufferFactory/ToFlowMsg, refused tensor lists and ResetFlowFuncState. One
library (C++11, GE's string ABI) built once for the module; each func reports what it saw as
an int32 tensor on its output."""
import json
import logging
from pathlib import Path

import numpy as np
import pytest

import dfir
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from project_helpers import int32, project_graph
from test_cpp_udf import udf_log_file

API_CPP = r'''
#include <cstring>
#include <string>
#include <vector>
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/flow_func_log.h"

using namespace FlowFunc;

namespace {
// An int32 tensor message holding `values`.
std::shared_ptr<FlowMsg> Report(MetaRunContext& context, const std::vector<int32_t>& values) {
  std::shared_ptr<FlowMsg> msg = context.AllocTensorMsg({static_cast<int64_t>(values.size())}, TensorDataType::DT_INT32);
  std::memcpy(msg->GetTensor()->GetData(), values.data(), values.size() * sizeof(int32_t));
  return msg;
}
}  // namespace

// Single func: reads string params as AscendString and std::string; reports their lengths and codes.
class Attrs : public MetaFlowFunc {
 public:
  int32_t Init() override {
    codes_.push_back(context_->GetAttr("name", name_));
    codes_.push_back(context_->GetAttr("names", names_));
    codes_.push_back(context_->GetAttr("name", plain_));
    codes_.push_back(context_->GetAttr("count", name_));     // an int read as a string
    codes_.push_back(context_->GetAttr("missing", name_));
    return FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& inputs) override {
    (void)inputs;
    std::vector<int32_t> report = codes_;
    report.push_back(static_cast<int32_t>(name_.GetLength()));
    report.push_back(static_cast<int32_t>(names_.size()));
    report.push_back(names_.size() == 2 && names_[1] == AscendString("yz") ? 1 : 0);
    report.push_back(plain_ == name_.GetString() ? 1 : 0);
    report.push_back(static_cast<int32_t>(context_->GetInputNum() * 10 + context_->GetOutputNum()));
    std::shared_ptr<FlowMsg> out = context_->AllocTensorMsg({static_cast<int64_t>(report.size())},
                                                            TensorDataType::DT_INT32);
    std::memcpy(out->GetTensor()->GetData(), report.data(), report.size() * sizeof(int32_t));
    return context_->SetOutput(0, out);
  }

 private:
  std::vector<int32_t> codes_;
  AscendString name_;
  std::vector<AscendString> names_;
  std::string plain_;
};
REGISTER_FLOW_FUNC("Attrs", Attrs);

class Api : public MetaMultiFunc {
 public:
  // OutOptions: no balance config until MutableBalanceConfig; a bad one refused; a plain one sends.
  int32_t Options(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    OutOptions bad;
    const int32_t none_before = bad.GetBalanceConfig() == nullptr ? 1 : 0;
    BalanceWeight weight;
    weight.rowNum = 2;
    weight.colNum = 3;
    bad.MutableBalanceConfig()->SetBalanceWeight(weight);
    bad.MutableBalanceConfig()->SetAffinityPolicy(AffinityPolicy::COL_AFFINITY);
    bad.MutableBalanceConfig()->SetDataPos({{0, 1}, {1, 2}});  // two positions, one message
    const int32_t refused = context->SetMultiOutputs(0, {in[0]}, bad);
    const BalanceConfig* config = bad.GetBalanceConfig();
    std::shared_ptr<FlowMsg> out = Report(*context, {none_before, refused, config->GetBalanceWeight().rowNum,
        static_cast<int32_t>(config->GetAffinityPolicy()), static_cast<int32_t>(config->GetDataPos().size())});
    return context->SetOutput(0, out, OutOptions());
  }

  // SetMsgType: a raw message takes a user type; a tensor message refuses RAW_MSG (an error record).
  int32_t MsgTypes(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    std::shared_ptr<FlowMsg> raw = context->AllocRawDataMsg(4);
    raw->SetMsgType(static_cast<MsgType>(1025));
    in[0]->SetMsgType(MsgType::MSG_TYPE_RAW_MSG);
    return context->SetOutput(0, Report(*context, {static_cast<int32_t>(raw->GetMsgType()),
                                                   static_cast<int32_t>(in[0]->GetMsgType()),
                                                   static_cast<int32_t>(FlowFlag::FLOW_FLAG_EOS),
                                                   static_cast<int32_t>(FlowFlag::FLOW_FLAG_SEG)}));
  }

  // FlowFuncLogger: both loggers reach the runtime's log; every level is enabled here.
  int32_t Logs(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    (void)in;
    FlowFuncLogger& run = FlowFuncLogger::GetLogger(FlowFuncLogType::RUN_LOG);
    run.Info("run log %d", 7);
    FLOW_FUNC_RUN_LOG_ERROR("run error %s", "x");
    FLOW_FUNC_LOG_DEBUG("debug %d", 1);
    const std::string header = FlowFuncLogger::GetLogExtHeader();
    return context->SetOutput(0, Report(*context, {run.IsLogEnable(FlowFuncLogLevel::DEBUG) ? 1 : 0,
                                                   header.compare(0, 5, "[tid:") == 0 ? 1 : 0}));
  }

  // FlowBufferFactory + ToFlowMsg send a tensor made outside a message; tensor lists are refused.
  int32_t Buffers(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    (void)in;
    if (context->AllocTensorListMsg({{1}}, {TensorDataType::DT_INT32}) != nullptr) return FLOW_FUNC_FAILED;
    if (FlowBufferFactory::AllocTensor({-1}, TensorDataType::DT_INT32) != nullptr) return FLOW_FUNC_FAILED;
    std::shared_ptr<Tensor> tensor = FlowBufferFactory::AllocTensor({2}, TensorDataType::DT_INT32);
    static_cast<int32_t*>(tensor->GetData())[0] = 5;
    static_cast<int32_t*>(tensor->GetData())[1] = static_cast<int32_t>(tensor->GetDataBufferSize());
    return context->SetOutput(0, context->ToFlowMsg(tensor));
  }
};
FLOW_FUNC_REGISTRAR(Api)
    .RegProcFunc("Options", &Api::Options)
    .RegProcFunc("MsgTypes", &Api::MsgTypes)
    .RegProcFunc("Logs", &Api::Logs)
    .RegProcFunc("Buffers", &Api::Buffers);

// A single func counting its calls; ResetFlowFuncState starts it over.
class Counter : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& inputs) override {
    (void)inputs;
    ++calls_;
    return FLOW_FUNC_SUCCESS;
  }
  int32_t ResetFlowFuncState() override {
    calls_ = 0;
    return FLOW_FUNC_SUCCESS;
  }

 private:
  int32_t calls_ = 0;
};
REGISTER_FLOW_FUNC("Counter", Counter);
'''

CMAKELISTS = r'''
cmake_minimum_required(VERSION 3.14)
project(ge_api)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${RELEASE_DIR})
add_definitions(-D_GLIBCXX_USE_CXX11_ABI=0)
set(CMAKE_CXX_COMPILER ${TOOLCHAIN})
add_library(${UDF_TARGET_LIB} SHARED api.cpp)
target_include_directories(${UDF_TARGET_LIB} PRIVATE $ENV{ASCEND_HOME_PATH}/include)
target_compile_options(${UDF_TARGET_LIB} PRIVATE -O1 -std=c++11 -fPIC)
'''

FACTS = {"name": "n", "input_num": 1, "output_num": 1, "work_path": "", "device_id": -1,
         "instance_id": 0, "instance_num": 1}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ge_api") / "ws"
    folder.mkdir()
    (folder / "api.cpp").write_text(API_CPP)
    (folder / "CMakeLists.txt").write_text(CMAKELISTS)
    return folder


def func_config(workspace: Path, func: str, input_num: int = 1, output_num: int = 1) -> Path:
    path = workspace.parent / f"{func}.json"
    path.write_text(json.dumps({"func_list": [{"func_name": func}], "input_num": input_num,
                                "output_num": output_num, "workspace": str(workspace),
                                "target_bin": "libge_api.so"}))
    return path


def run_func(workspace: Path, func: str, params: dict | None = None, input_num: int = 1) -> list[int]:
    graph = project_graph(func_config(workspace, func, input_num), input_num, 1, params=params, name=func)
    with dfir.load(dfir.compile(graph).om) as model:
        model.feed_data([int32(1)] * input_num)
        outputs, _, ret = model.fetch_data(timeout=10000)
    assert ret == 0
    return np.asarray(outputs[0]).tolist()


def test_a_single_func_reads_string_params_as_ascend_string(workspace):
    params = {"name": "abc", "names": ["x", "yz"], "count": 3}
    # codes: name, names, name as std::string, count as a string (mismatch), missing; then lengths
    assert run_func(workspace, "Attrs", params, input_num=2) == [0, 0, 0, 164002, 164001, 3, 2, 1, 1, 21]


def test_out_options_carry_the_balance_config(workspace):
    # no config before MutableBalanceConfig; 2 positions for 1 message refused; rows, COL_AFFINITY, positions
    assert run_func(workspace, "Options") == [1, 164000, 2, 2, 2]


def test_set_msg_type_and_flow_flags(workspace, tmp_path):
    with udf_log_file(tmp_path / "udf.log"):
        assert run_func(workspace, "MsgTypes") == [1025, 0, 1, 2]
    assert ("ERROR|MsgTypes|0|[MsgTypes#0 MsgTypes] SetMsgType: a message holding a tensor cannot take msg type 1; "
            "raw data messages take MSG_TYPE_RAW_MSG (1) or a user type >= MSG_TYPE_USER_DEFINE_START (1024)"
            in (tmp_path / "udf.log").read_text().splitlines())


def test_flow_func_logger_reaches_the_runtime_log(workspace, tmp_path):
    with udf_log_file(tmp_path / "udf.log"):
        assert run_func(workspace, "Logs") == [1, 1]
    lines = (tmp_path / "udf.log").read_text().splitlines()
    assert "INFO|Logs|0|[Logs#0 Logs] run log 7" in lines
    assert "ERROR|Logs|0|[Logs#0 Logs] Logs: run error x" in lines


def test_flow_buffer_factory_tensors_are_sent_with_to_flow_msg(workspace):
    assert run_func(workspace, "Buffers") == [5, 8]


def test_reset_flow_func_state_reaches_every_object(workspace):
    from dfir.runtime import _native
    om = read_om(dfir.compile(project_graph(func_config(workspace, "Counter"), 1, 1)).om)
    library = _native.load_udf_library(om.models[0].partitions_of(PartitionType.SO_BINS)[0].data, "libge_api.so")
    assert library.funcs() == ["Attrs", "Buffers", "Counter", "Logs", "MsgTypes", "Options"]
    counter = _native.UdfInstance(library, FACTS, [], ["Counter"])
    assert counter.init() == (0, "")
    assert counter.reset_flow_func_state() == (0, "")
    multi = _native.UdfInstance(library, FACTS, [], ["Options", "Logs"])
    assert multi.init() == (0, "")
    assert multi.reset_flow_func_state() == (564002, "Api::ResetFlowFuncState returned 564002")
