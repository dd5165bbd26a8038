// MetaRunContext: what a proc call uses to allocate messages, emit outputs and run invoked models.
// Outputs are emitted when the proc returns FLOW_FUNC_SUCCESS; another return code becomes the
// transaction's error on every output of the func. An output index is the node's output index
// and must be one of the func's `outputs_index` (all of the node's for a single func).
#ifndef DFIR_FLOW_FUNC_META_RUN_CONTEXT_H_
#define DFIR_FLOW_FUNC_META_RUN_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "dflow_attr_value.h"
#include "flow_func_defines.h"
#include "flow_msg.h"
#include "out_options.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaRunContext {
 public:
  MetaRunContext() = default;
  virtual ~MetaRunContext() = default;
  // Zero-filled messages of the current transaction; nullptr (and a noted reason) for bad arguments.
  virtual std::shared_ptr<FlowMsg> AllocTensorMsg(const std::vector<int64_t>& shape, TensorDataType dataType) = 0;
  virtual std::shared_ptr<FlowMsg> AllocEmptyDataMsg(MsgType msgType) = 0;

  // FLOW_FUNC_SUCCESS, or FLOW_FUNC_ERR_PARAM_INVALID for an index that is not one of the func's
  // outputs, a message the runtime did not allocate, or a balance config that cannot route the
  // messages.
  virtual int32_t SetOutput(uint32_t outIdx, std::shared_ptr<FlowMsg> outMsg) = 0;

  // Runs the graph registered with add_invoked_closure(modelKey, ...) on tensor messages.
  // FLOW_FUNC_ERR_PARAM_INVALID (bad inputs, unknown key), FLOW_FUNC_ERR_TIME_OUT_ERROR (slower than
  // `timeout` ms; -1: no limit) or FLOW_FUNC_FAILED (the model failed) leave `outputMsgs` empty.
  virtual int32_t RunFlowModel(const char* modelKey, const std::vector<std::shared_ptr<FlowMsg>>& inputMsgs,
                               std::vector<std::shared_ptr<FlowMsg>>& outputMsgs, int32_t timeout) = 0;

  // `size` bytes at `offset` of the transaction's user data (at most 64 bytes in all).
  virtual int32_t GetUserData(void* data, size_t size, size_t offset = 0U) const = 0;

  virtual int32_t SetOutput(uint32_t outIdx, std::shared_ptr<FlowMsg> outMsg, const OutOptions& options) = 0;
  virtual int32_t SetMultiOutputs(uint32_t outIdx, const std::vector<std::shared_ptr<FlowMsg>>& outMsgs,
                                  const OutOptions& options) = 0;

  // align: a power of two up to 4096.
  virtual std::shared_ptr<FlowMsg> AllocTensorMsgWithAlign(const std::vector<int64_t>& shape, TensorDataType dataType,
                                                           uint32_t align) {
    (void)shape;
    (void)dataType;
    (void)align;
    return nullptr;
  }
  // Tensor-list messages are not supported: nullptr, with the reason noted.
  virtual std::shared_ptr<FlowMsg> AllocTensorListMsg(const std::vector<std::vector<int64_t>>& shapes,
                                                      const std::vector<TensorDataType>& dataTypes,
                                                      uint32_t align = 512U) {
    (void)shapes;
    (void)dataTypes;
    (void)align;
    return nullptr;
  }
  // Fails the current transaction with `expCode`; GetException of any UDF of the model then sees it.
  virtual void RaiseException(int32_t expCode, uint64_t userContextId) {
    (void)expCode;
    (void)userContextId;
  }
  virtual bool GetException(int32_t& expCode, uint64_t& userContextId) {
    (void)expCode;
    (void)userContextId;
    return false;
  }
  virtual std::shared_ptr<FlowMsg> AllocRawDataMsg(int64_t size, uint32_t align = 512U) {
    (void)size;
    (void)align;
    return nullptr;
  }
  // A tensor message of the current transaction holding `tensor` (from FlowBufferFactory).
  virtual std::shared_ptr<FlowMsg> ToFlowMsg(std::shared_ptr<Tensor> tensor) {
    (void)tensor;
    return nullptr;
  }
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_META_RUN_CONTEXT_H_
