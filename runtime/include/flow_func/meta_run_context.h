// MetaRunContext: what a proc call uses to allocate messages, emit outputs and run invoked models.
// Outputs are emitted when the proc returns FLOW_FUNC_SUCCESS; another return code becomes the
// transaction's error on every output of the func. Output indexes count the func's own outputs.
#ifndef DFIR_FLOW_FUNC_META_RUN_CONTEXT_H_
#define DFIR_FLOW_FUNC_META_RUN_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_msg.h"

namespace FlowFunc {

// Where a balance-scatter node sends each message: a row x col matrix (at most 65536 cells) and
// one (row, col) per message. data label = row * col_num + col + 1; the route label is the row
// (ROW_AFFINITY), the column (COL_AFFINITY) or the position (NO_AFFINITY), plus 1.
class BalanceConfig {
 public:
  BalanceConfig(int32_t row_num, int32_t col_num, AffinityPolicy policy = AffinityPolicy::NO_AFFINITY)
      : row_num_(row_num), col_num_(col_num), policy_(policy) {}
  void SetDataPos(const std::vector<std::pair<int32_t, int32_t>>& data_pos) { data_pos_ = data_pos; }
  int32_t GetRowNum() const { return row_num_; }
  int32_t GetColNum() const { return col_num_; }
  AffinityPolicy GetAffinityPolicy() const { return policy_; }
  const std::vector<std::pair<int32_t, int32_t>>& GetDataPos() const { return data_pos_; }

 private:
  int32_t row_num_;
  int32_t col_num_;
  AffinityPolicy policy_;
  std::vector<std::pair<int32_t, int32_t>> data_pos_;
};

class MetaRunContext {
 public:
  virtual ~MetaRunContext() = default;
  // Zero-filled messages of the current transaction; nullptr (and a noted reason) for bad arguments.
  virtual std::shared_ptr<FlowMsg> AllocTensorMsg(const std::vector<int64_t>& shape, TensorDataType dtype) = 0;
  virtual std::shared_ptr<FlowMsg> AllocTensorMsgWithAlign(const std::vector<int64_t>& shape,
                                                           TensorDataType dtype, uint32_t align) = 0;
  virtual std::shared_ptr<FlowMsg> AllocRawDataMsg(int64_t size, uint32_t align = 64U) = 0;
  virtual std::shared_ptr<FlowMsg> AllocEmptyDataMsg(MsgType msg_type) = 0;

  // FLOW_FUNC_SUCCESS, or FLOW_FUNC_ERR_PARAM_INVALID for an index out of range, a message the
  // runtime did not allocate, or a balance config that cannot route the messages.
  virtual int32_t SetOutput(uint32_t index, std::shared_ptr<FlowMsg> msg) = 0;
  virtual int32_t SetOutput(uint32_t index, std::shared_ptr<FlowMsg> msg, const BalanceConfig& config) = 0;
  virtual int32_t SetMultiOutputs(uint32_t index, const std::vector<std::shared_ptr<FlowMsg>>& msgs,
                                  const BalanceConfig& config) = 0;

  // Runs the GE graph registered with add_invoked_closure(model_key, ...) on tensor messages.
  // FLOW_FUNC_ERR_PARAM_INVALID (bad inputs, unknown key), FLOW_FUNC_ERR_TIME_OUT_ERROR (slower than
  // `timeout` ms; -1: no limit) or FLOW_FUNC_FAILED (the model failed) leave `outputs` empty.
  virtual int32_t RunFlowModel(const char* model_key, const std::vector<std::shared_ptr<FlowMsg>>& inputs,
                               int32_t timeout, std::vector<std::shared_ptr<FlowMsg>>& outputs) = 0;

  // `size` bytes at `offset` of the transaction's user data (at most 64 bytes in all).
  virtual int32_t GetUserData(void* data, size_t size, size_t offset = 0U) const = 0;
  // Fails the current transaction with `code`; GetException of any UDF of the model then sees it.
  virtual void RaiseException(int32_t code, uint64_t user_context_id) = 0;
  virtual bool GetException(int32_t& code, uint64_t& user_context_id) = 0;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_META_RUN_CONTEXT_H_
