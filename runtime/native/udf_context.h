// The runtime's MetaRunContext: one per proc call. It collects the call's outputs (emitted by the
// caller only if the proc succeeds), notes why calls with bad arguments were refused, and runs
// invoked models through a callback the host provides.
#ifndef DFIR_RUNTIME_NATIVE_UDF_CONTEXT_H_
#define DFIR_RUNTIME_NATIVE_UDF_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow_func/meta_context.h"
#include "flow_func/meta_run_context.h"
#include "udf_messages.h"
#include "udf_params.h"

namespace dfir::udf {

// What the host knows about the transaction a call processes.
struct CallFacts {
  MsgMeta meta;
  std::string user_data;  // the bytes the feeder set, at most 64
  bool has_exception = false;
  int32_t exception_code = 0;
  uint64_t exception_context = 0;
};

// Runs invoked model `key` on tensor messages: returns a status code and fills `outputs`, or
// explains a failure in `problem`. New messages carry `meta`.
using ModelInvoker = std::function<int32_t(const std::string& key, const std::vector<std::shared_ptr<HostFlowMsg>>& inputs,
                                           int32_t timeout_ms, const MsgMeta& meta,
                                           std::vector<std::shared_ptr<HostFlowMsg>>& outputs, std::string& problem)>;

// (data label, route label) of `count` messages sent with `config`; false and `problem` when
// the config cannot route them (docs/udf.md, "Balance").
bool BalanceLabels(const FlowFunc::BalanceConfig& config, size_t count,
                   std::vector<std::pair<uint32_t, uint32_t>>& labels, std::string& problem);

constexpr size_t kMaxUserDataSize = 64;
constexpr uint32_t kMaxAlign = 4096;

// A zeroed tensor for `api` (the UDF call that asks); nullptr and why in `problem` for a data type
// without a fixed size, an align that is no power of two up to kMaxAlign, a negative dim, a byte
// size that does not fit an int64, or memory that cannot be had.
std::shared_ptr<HostTensor> AllocHostTensor(const char* api, const std::vector<int64_t>& shape, TensorDataType dtype,
                                            uint32_t align, std::string& problem);

class HostRunContext final : public FlowFunc::MetaRunContext {
 public:
  struct Output {
    uint32_t index;
    std::shared_ptr<HostFlowMsg> msg;
  };

  // `ports`: the node's output index of each of the func's outputs (its `outputs_index`): a
  // SetOutput index is the node's, as in GE, and must be one of them; Output::index is its position.
  HostRunContext(std::string func, std::vector<uint32_t> ports, CallFacts call, ModelInvoker invoker)
      : func_(std::move(func)), ports_(std::move(ports)), call_(std::move(call)), invoker_(std::move(invoker)) {}

  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsg(const std::vector<int64_t>& shape, TensorDataType dtype) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocEmptyDataMsg(MsgType msg_type) override;
  int32_t SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg) override;
  int32_t RunFlowModel(const char* model_key, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
                       std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& outputs, int32_t timeout) override;
  int32_t GetUserData(void* data, size_t size, size_t offset) const override;
  int32_t SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg,
                    const FlowFunc::OutOptions& options) override;
  int32_t SetMultiOutputs(uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
                          const FlowFunc::OutOptions& options) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsgWithAlign(const std::vector<int64_t>& shape, TensorDataType dtype,
                                                             uint32_t align) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorListMsg(const std::vector<std::vector<int64_t>>& shapes,
                                                        const std::vector<TensorDataType>& dtypes,
                                                        uint32_t align) override;
  void RaiseException(int32_t code, uint64_t user_context_id) override;
  bool GetException(int32_t& code, uint64_t& user_context_id) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocRawDataMsg(int64_t size, uint32_t align) override;
  std::shared_ptr<FlowFunc::FlowMsg> ToFlowMsg(std::shared_ptr<FlowFunc::Tensor> tensor) override;

  // A stream-input proc's outputs belong to the latest transaction it has read (the highest id).
  void ReadMessageOf(const MsgMeta& meta) {
    if (meta.transaction_id >= call_.meta.transaction_id) call_.meta = meta;
  }
  const MsgMeta& meta() const { return call_.meta; }
  const std::vector<Output>& outputs() const { return outputs_; }
  const std::vector<std::string>& problems() const { return problems_; }
  // The outputs and problems, taken once the call is over.
  std::vector<Output> TakeOutputs() { return std::move(outputs_); }
  std::vector<std::string> TakeProblems() { return std::move(problems_); }
  void Note(std::string problem) { problems_.push_back(std::move(problem)); }
  bool raised() const { return raised_; }
  int32_t raised_code() const { return raised_code_; }
  uint64_t raised_context() const { return raised_context_; }

 private:
  int32_t Refuse(std::string problem);
  // Fills `buffer` with `size` zeroed bytes aligned to `align`; notes a failed allocation as
  // `api`'s problem and returns false.
  bool AllocateBuffer(const char* api, uint64_t size, uint32_t align, Buffer& buffer);
  int32_t Emit(const char* api, uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
               const FlowFunc::BalanceConfig* config);

  std::string func_;
  std::vector<uint32_t> ports_;
  CallFacts call_;
  ModelInvoker invoker_;
  std::vector<Output> outputs_;
  std::vector<std::string> problems_;
  bool raised_ = false;
  int32_t raised_code_ = 0;
  uint64_t raised_context_ = 0;
};

// The MetaContext of a node's single funcs (MetaFlowFunc): the node's facts always, and the
// current call's run context while a Proc runs (Enter/Leave, under the instance's lock). Outside
// a call the message calls return nullptr, FLOW_FUNC_ERR_NOT_SUPPORT or false.
class HostMetaContext final : public FlowFunc::MetaContext {
 public:
  explicit HostMetaContext(std::shared_ptr<HostMetaParams> params) : params_(std::move(params)) {}

  using FlowFunc::MetaContext::GetAttr;  // GetAttr(name, value)

  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsg(const std::vector<int64_t>& shape, TensorDataType dtype) override;
  int32_t SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg) override;
  std::shared_ptr<const FlowFunc::AttrValue> GetAttr(const char* name) const override { return params_->GetAttr(name); }
  size_t GetInputNum() const override { return params_->GetInputNum(); }
  size_t GetOutputNum() const override { return params_->GetOutputNum(); }
  std::shared_ptr<FlowFunc::FlowMsg> AllocEmptyDataMsg(MsgType msg_type) override;
  int32_t RunFlowModel(const char* model_key, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
                       std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& outputs, int32_t timeout) override;
  const char* GetWorkPath() const override { return params_->GetWorkPath(); }
  int32_t GetRunningDeviceId() const override { return params_->GetRunningDeviceId(); }
  int32_t GetUserData(void* data, size_t size, size_t offset) const override;
  int32_t SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg,
                    const FlowFunc::OutOptions& options) override;
  int32_t SetMultiOutputs(uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
                          const FlowFunc::OutOptions& options) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsgWithAlign(const std::vector<int64_t>& shape, TensorDataType dtype,
                                                             uint32_t align) override;
  void RaiseException(int32_t code, uint64_t user_context_id) override;
  bool GetException(int32_t& code, uint64_t& user_context_id) override;

  void Enter(HostRunContext* call) { call_ = call; }
  void Leave() { call_ = nullptr; }

 private:
  std::shared_ptr<HostMetaParams> params_;
  HostRunContext* call_ = nullptr;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_CONTEXT_H_
