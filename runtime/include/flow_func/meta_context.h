// MetaContext: a single func's (MetaFlowFunc's) view of its node and of the current call. Set
// before Init; the calls that make or send messages work inside Proc only (in Init they return
// nullptr, FLOW_FUNC_ERR_NOT_SUPPORT or false).
#ifndef DFIR_FLOW_FUNC_META_CONTEXT_H_
#define DFIR_FLOW_FUNC_META_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "dflow_attr_value.h"
#include "flow_func_defines.h"
#include "flow_msg.h"
#include "out_options.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaContext {
 public:
  MetaContext() = default;
  virtual ~MetaContext() = default;
  virtual std::shared_ptr<FlowMsg> AllocTensorMsg(const std::vector<int64_t>& shape, TensorDataType dataType) = 0;
  virtual int32_t SetOutput(uint32_t outIdx, std::shared_ptr<FlowMsg> outMsg) = 0;
  virtual std::shared_ptr<const AttrValue> GetAttr(const char* attrName) const = 0;

  // FLOW_FUNC_SUCCESS and `value`, FLOW_FUNC_ERR_ATTR_NOT_EXITS or FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH.
  template <class T>
  int32_t GetAttr(const char* attrName, T& value) const {
    const std::shared_ptr<const AttrValue> attr = GetAttr(attrName);
    return attr == nullptr ? FLOW_FUNC_ERR_ATTR_NOT_EXITS : attr->GetVal(value);
  }

  virtual size_t GetInputNum() const = 0;
  virtual size_t GetOutputNum() const = 0;
  virtual std::shared_ptr<FlowMsg> AllocEmptyDataMsg(MsgType msgType) = 0;
  virtual int32_t RunFlowModel(const char* modelKey, const std::vector<std::shared_ptr<FlowMsg>>& inputMsgs,
                               std::vector<std::shared_ptr<FlowMsg>>& outputMsgs, int32_t timeout) = 0;
  virtual const char* GetWorkPath() const = 0;
  virtual int32_t GetRunningDeviceId() const = 0;
  virtual int32_t GetUserData(void* data, size_t size, size_t offset = 0U) const = 0;
  virtual int32_t SetOutput(uint32_t outIdx, std::shared_ptr<FlowMsg> outMsg, const OutOptions& options) {
    (void)outIdx;
    (void)outMsg;
    (void)options;
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }
  virtual int32_t SetMultiOutputs(uint32_t outIdx, const std::vector<std::shared_ptr<FlowMsg>>& outMsgs,
                                  const OutOptions& options) {
    (void)outIdx;
    (void)outMsgs;
    (void)options;
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }
  virtual std::shared_ptr<FlowMsg> AllocTensorMsgWithAlign(const std::vector<int64_t>& shape, TensorDataType dataType,
                                                           uint32_t align) {
    (void)shape;
    (void)dataType;
    (void)align;
    return nullptr;
  }
  virtual void RaiseException(int32_t expCode, uint64_t userContextId) {
    (void)expCode;
    (void)userContextId;
  }
  virtual bool GetException(int32_t& expCode, uint64_t& userContextId) {
    (void)expCode;
    (void)userContextId;
    return false;
  }
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_META_CONTEXT_H_
