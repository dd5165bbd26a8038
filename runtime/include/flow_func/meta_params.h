// MetaParams: what a multi-func class's Init learns about its node, and the init params set with
// set_init_param.
#ifndef DFIR_FLOW_FUNC_META_PARAMS_H_
#define DFIR_FLOW_FUNC_META_PARAMS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "dflow_attr_value.h"
#include "flow_func_defines.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaParams {
 public:
  MetaParams() = default;
  virtual ~MetaParams() = default;
  virtual const char* GetName() const = 0;  // the node's name
  virtual std::shared_ptr<const AttrValue> GetAttr(const char* attrName) const = 0;  // nullptr: none

  // FLOW_FUNC_SUCCESS and `value`, FLOW_FUNC_ERR_ATTR_NOT_EXITS or FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH.
  template <class T>
  int32_t GetAttr(const char* attrName, T& value) const {
    const std::shared_ptr<const AttrValue> attr = GetAttr(attrName);
    return attr == nullptr ? FLOW_FUNC_ERR_ATTR_NOT_EXITS : attr->GetVal(value);
  }

  virtual size_t GetInputNum() const = 0;
  virtual size_t GetOutputNum() const = 0;
  virtual const char* GetWorkPath() const = 0;  // a folder of this library's own
  virtual int32_t GetRunningDeviceId() const = 0;  // -1 on the host
  virtual int32_t GetRunningInstanceId() const { return 0; }
  virtual int32_t GetRunningInstanceNum() const { return 1; }
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_META_PARAMS_H_
