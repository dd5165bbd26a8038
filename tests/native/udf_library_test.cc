// Loading C++ UDF libraries from bytes and calling their funcs (runtime/native/udf_library.h,
// udf_instance.h, udf_log.h), with libraries built from tests/native/udf_fixtures.
#include <doctest/doctest.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <mutex>
#include <vector>

#include "udf_error.h"
#include "udf_instance.h"
#include "udf_library.h"
#include "udf_log.h"

using dfir::udf::CallFacts;
using dfir::udf::HostAttrValue;
using dfir::udf::HostFlowMsg;
using dfir::udf::HostMetaParams;
using dfir::udf::ProcResult;
using dfir::udf::UdfError;
using dfir::udf::UdfInstance;
using dfir::udf::UdfLibrary;
using FlowFunc::FLOW_FUNC_FAILED;
using FlowFunc::FLOW_FUNC_SUCCESS;
using FlowFunc::TensorDataType;

namespace {

std::vector<uint8_t> FileBytes(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The scale fixture, loaded once (a library stays loaded for the life of the process).
std::shared_ptr<UdfLibrary> ScaleLibrary() {
  static std::shared_ptr<UdfLibrary> library = [] {
    std::vector<uint8_t> bytes = FileBytes(DFIR_TEST_SCALE_UDF);
    return UdfLibrary::Load(bytes.data(), bytes.size(), "libscale_udf.so");
  }();
  return library;
}

std::shared_ptr<HostMetaParams> Params(std::map<std::string, std::shared_ptr<const HostAttrValue>> attrs) {
  dfir::udf::NodeFacts facts;
  facts.name = "scaler";
  facts.input_num = 1;
  facts.output_num = 1;
  return std::make_shared<HostMetaParams>(facts, std::move(attrs));
}

std::shared_ptr<HostMetaParams> FactorParams(int64_t factor) {
  return Params({{"factor", std::make_shared<const HostAttrValue>(factor)}});
}

std::shared_ptr<HostFlowMsg> FloatTensor(const std::vector<float>& values, uint64_t transaction_id) {
  dfir::udf::Buffer buffer = dfir::udf::Buffer::Allocate(values.size() * sizeof(float), 64);
  std::memcpy(buffer.data, values.data(), buffer.size);
  dfir::udf::MsgMeta meta;
  meta.transaction_id = transaction_id;
  return HostFlowMsg::Tensor({static_cast<int64_t>(values.size())}, TensorDataType::DT_FLOAT, buffer, meta);
}

std::shared_ptr<HostFlowMsg> Int32Scalar(int32_t value, uint64_t transaction_id) {
  dfir::udf::Buffer buffer = dfir::udf::Buffer::Allocate(4, 64);
  std::memcpy(buffer.data, &value, 4);
  dfir::udf::MsgMeta meta;
  meta.transaction_id = transaction_id;
  return HostFlowMsg::Tensor({}, TensorDataType::DT_INT32, buffer, meta);
}

CallFacts Call(uint64_t transaction_id) {
  CallFacts call;
  call.meta.transaction_id = transaction_id;
  return call;
}

// Collects the log records of C++ UDFs while alive.
struct LogCapture {
  LogCapture() {
    dfir::udf::SetLogHandler([this](int32_t level, const dfir::udf::LogScope& scope, const std::string& text) {
      const std::lock_guard<std::mutex> lock(mutex);
      records.push_back(std::to_string(level) + " " + scope.node + "/" + scope.func + ": " + text);
    });
  }
  ~LogCapture() { dfir::udf::SetLogHandler(nullptr); }
  std::mutex mutex;
  std::vector<std::string> records;
};

}  // namespace

TEST_SUITE("udf_library") {

TEST_CASE("a library loads from bytes and lists its funcs") {
  auto library = ScaleLibrary();
  CHECK(library->name() == "libscale_udf.so");
  CHECK(library->FuncNames() == std::vector<std::string>{"Broken", "Fail", "Offset", "PassOn", "Scale", "Sum", "Throw"});
  // Loading the same bytes again gives a second, independent library.
  std::vector<uint8_t> bytes = FileBytes(DFIR_TEST_SCALE_UDF);
  auto again = UdfLibrary::Load(bytes.data(), bytes.size(), "libscale_again.so");
  CHECK(again->FuncNames().size() == 7);
  CHECK(&again->registry() != &library->registry());
}

TEST_CASE("bytes that are no library, a library without funcs, a func registered twice") {
  const std::string junk = "this is not an ELF file";
  CHECK_THROWS_AS(UdfLibrary::Load(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), "libjunk.so"), UdfError);
  try {
    UdfLibrary::Load(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), "libjunk.so");
  } catch (const UdfError& error) {
    CHECK(std::string(error.what()).rfind("cannot load C++ UDF library libjunk.so: ", 0) == 0);
  }
  std::vector<uint8_t> plain = FileBytes(DFIR_TEST_PLAIN_LIBRARY);
  CHECK_THROWS_WITH_AS(UdfLibrary::Load(plain.data(), plain.size(), "libplain.so"),
                       "C++ UDF library libplain.so registers no funcs: include \"flow_func/meta_flow_func.h\" or "
                       "\"flow_func/meta_multi_func.h\" and register them with REGISTER_FLOW_FUNC or FLOW_FUNC_REGISTRAR",
                       UdfError);
  std::vector<uint8_t> twice = FileBytes(DFIR_TEST_TWICE_UDF);
  CHECK_THROWS_WITH_AS(UdfLibrary::Load(twice.data(), twice.size(), "libtwice.so"),
                       "C++ UDF library libtwice.so registers func 'Same' twice", UdfError);
}

TEST_CASE("an instance binds funcs, initializes its objects once and runs a proc") {
  UdfInstance instance(ScaleLibrary(), FactorParams(3), {"Scale", "PassOn"});
  std::string problem;
  REQUIRE(instance.Init(problem) == FLOW_FUNC_SUCCESS);
  ProcResult result = instance.Proc("Scale", {0}, {FloatTensor({1, 2, 3}, 9)}, Call(9), nullptr);
  CHECK(result.ret == FLOW_FUNC_SUCCESS);
  CHECK(result.problems.empty());
  REQUIRE(result.outputs.size() == 1);
  CHECK(result.outputs[0].index == 0);
  const auto* out = static_cast<const float*>(result.outputs[0].msg->GetTensor()->GetData());
  CHECK(out[0] == 3.0f);
  CHECK(out[2] == 9.0f);
  CHECK(result.outputs[0].msg->GetTransactionId() == 9);  // allocated in the call's transaction
  CHECK(result.meta.transaction_id == 9);
  auto input = FloatTensor({5}, 9);
  ProcResult passed = instance.Proc("PassOn", {0}, {input}, Call(9), nullptr);
  REQUIRE(passed.outputs.size() == 1);
  CHECK(passed.outputs[0].msg.get() == input.get());  // the same message, not a copy
  CHECK_THROWS_WITH_AS(instance.Proc("Fail", {0}, {}, Call(1), nullptr), "node 'scaler' has no func 'Fail'", UdfError);
}

TEST_CASE("a single func (REGISTER_FLOW_FUNC) reads its params and emits through its MetaContext; reset") {
  UdfInstance instance(ScaleLibrary(), FactorParams(10), {"Offset", "Scale"});
  std::string problem;
  REQUIRE(instance.Init(problem) == FLOW_FUNC_SUCCESS);
  for (float expected : {11.0f, 12.0f}) {
    ProcResult result = instance.Proc("Offset", {0, 1}, {FloatTensor({1}, 4)}, Call(4), nullptr);
    CHECK(result.ret == FLOW_FUNC_SUCCESS);
    REQUIRE(result.outputs.size() == 1);
    CHECK(result.outputs[0].index == 1);  // node output 1: the second of the func's outputs
    CHECK(static_cast<const float*>(result.outputs[0].msg->GetTensor()->GetData())[0] == expected);
  }
  // Scale does not implement ResetFlowFuncState: GE's FLOW_FUNC_ERR_NOT_SUPPORT.
  CHECK(instance.ResetState(problem) == FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
  CHECK(problem == "Scale::ResetFlowFuncState returned 564002");
  UdfInstance offset_only(ScaleLibrary(), FactorParams(10), {"Offset"});
  REQUIRE(offset_only.Init(problem) == FLOW_FUNC_SUCCESS);
  (void)offset_only.Proc("Offset", {0, 1}, {FloatTensor({1}, 4)}, Call(4), nullptr);
  CHECK(offset_only.ResetState(problem) == FLOW_FUNC_SUCCESS);
  ProcResult after = offset_only.Proc("Offset", {0, 1}, {FloatTensor({1}, 5)}, Call(5), nullptr);
  CHECK(static_cast<const float*>(after.outputs.at(0).msg->GetTensor()->GetData())[0] == 11.0f);
}

TEST_CASE("unknown funcs, failing constructors and inits are named") {
  CHECK_THROWS_WITH_AS(UdfInstance(ScaleLibrary(), FactorParams(1), {"Nope"}),
                       "node 'scaler': C++ UDF library libscale_udf.so registers funcs ['Broken', 'Fail', 'Offset', "
                       "'PassOn', 'Scale', 'Sum', 'Throw'], not 'Nope'",
                       UdfError);
  CHECK_THROWS_WITH_AS(UdfInstance(ScaleLibrary(), FactorParams(1), {"Broken"}),
                       "node 'scaler': constructing the class of func 'Broken' of libscale_udf.so threw: cannot build", UdfError);
  UdfInstance no_factor(ScaleLibrary(), Params({}), {"Scale"});
  std::string problem;
  CHECK(no_factor.Init(problem) == FlowFunc::FLOW_FUNC_ERR_ATTR_NOT_EXITS);
  CHECK(problem == "Scale::Init returned 164001");
  UdfInstance wrong_type(ScaleLibrary(), Params({{"factor", std::make_shared<const HostAttrValue>(2.5f)}}), {"Scale"});
  CHECK(wrong_type.Init(problem) == FlowFunc::FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
}

TEST_CASE("a failing proc: its return code, the last error it logged, in its log scope") {
  LogCapture log;
  UdfInstance instance(ScaleLibrary(), FactorParams(4), {"Fail", "Scale"});
  std::string problem;
  REQUIRE(instance.Init(problem) == FLOW_FUNC_SUCCESS);
  ProcResult failed = instance.Proc("Fail", {0}, {}, Call(2), nullptr);
  CHECK(failed.ret == FLOW_FUNC_FAILED);
  CHECK(failed.last_error.find("failing on purpose, factor 4") != std::string::npos);
  ProcResult wrong = instance.Proc("Scale", {0}, {Int32Scalar(1, 3)}, Call(3), nullptr);
  CHECK(wrong.ret == FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(wrong.last_error.find("input is not a float tensor") != std::string::npos);
  REQUIRE(log.records.size() == 2);
  CHECK(log.records[0].rfind("3 scaler/Fail: ", 0) == 0);
  CHECK(log.records[1].rfind("3 scaler/Scale: ", 0) == 0);
}

TEST_CASE("an exception in a proc becomes FLOW_FUNC_FAILED with its text") {
  UdfInstance instance(ScaleLibrary(), FactorParams(1), {"Throw"});
  std::string problem;
  REQUIRE(instance.Init(problem) == FLOW_FUNC_SUCCESS);
  ProcResult result = instance.Proc("Throw", {0}, {}, Call(1), nullptr);
  CHECK(result.ret == FLOW_FUNC_FAILED);
  REQUIRE(result.problems.size() == 1);
  CHECK(result.problems[0] == "C++ UDF func 'Throw' threw: thrown on purpose");
}

TEST_CASE("a stream-input proc reads its queues; its outputs belong to the latest transaction read") {
  UdfInstance instance(ScaleLibrary(), FactorParams(1), {"Sum", "Scale"});
  std::string problem;
  REQUIRE(instance.Init(problem) == FLOW_FUNC_SUCCESS);
  std::vector<std::deque<std::shared_ptr<HostFlowMsg>>> queues(2);
  queues[0].push_back(Int32Scalar(40, 12));
  queues[1].push_back(Int32Scalar(2, 15));
  dfir::udf::StreamInputs inputs;
  inputs.count = 2;
  inputs.depth = 8;
  inputs.take = [&](size_t input, int32_t, std::shared_ptr<HostFlowMsg>& msg) {
    if (queues[input].empty()) return FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR;
    msg = queues[input].front();
    queues[input].pop_front();
    return FLOW_FUNC_SUCCESS;
  };
  inputs.size = [&](size_t input) { return static_cast<int32_t>(queues[input].size()); };
  ProcResult result = instance.ProcStream("Sum", {0}, inputs, Call(0), nullptr);
  CHECK(result.ret == FLOW_FUNC_SUCCESS);
  REQUIRE(result.outputs.size() == 1);
  void* data = nullptr;
  uint64_t size = 0;
  result.outputs[0].msg->GetRawData(data, size);
  REQUIRE(size == 4);
  CHECK(*static_cast<int32_t*>(data) == 42);
  CHECK(result.meta.transaction_id == 15);
  // An empty queue: the proc's time-out code.
  ProcResult starved = instance.ProcStream("Sum", {0}, inputs, Call(0), nullptr);
  CHECK(starved.ret == FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR);
  // A message proc called as a stream, and the other way round, fail with the reason.
  ProcResult mismatched = instance.ProcStream("Scale", {0}, inputs, Call(0), nullptr);
  CHECK(mismatched.ret == FLOW_FUNC_FAILED);
  REQUIRE(mismatched.problems.size() == 1);
  CHECK(mismatched.problems[0] == "C++ UDF func 'Scale' takes messages, but its compile config sets stream_input");
  ProcResult as_messages = instance.Proc("Sum", {0}, {}, Call(0), nullptr);
  CHECK(as_messages.ret == FLOW_FUNC_FAILED);
}

}  // TEST_SUITE
