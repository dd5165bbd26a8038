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

#include "flow_func/meta_run_context.h"
#include "udf_messages.h"

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
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsgWithAlign(const std::vector<int64_t>& shape, TensorDataType dtype,
                                                             uint32_t align) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocRawDataMsg(int64_t size, uint32_t align) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocEmptyDataMsg(MsgType msg_type) override;
  int32_t SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg) override;
  int32_t SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg,
                    const FlowFunc::BalanceConfig& config) override;
  int32_t SetMultiOutputs(uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
                          const FlowFunc::BalanceConfig& config) override;
  int32_t RunFlowModel(const char* model_key, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
                       int32_t timeout, std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& outputs) override;
  int32_t GetUserData(void* data, size_t size, size_t offset) const override;
  void RaiseException(int32_t code, uint64_t user_context_id) override;
  bool GetException(int32_t& code, uint64_t& user_context_id) override;

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

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_CONTEXT_H_
