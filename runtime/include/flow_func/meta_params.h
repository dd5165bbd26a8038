// MetaParams: what Init learns about its node, and the init params set with set_init_param.
#ifndef DFIR_FLOW_FUNC_META_PARAMS_H_
#define DFIR_FLOW_FUNC_META_PARAMS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"

namespace FlowFunc {

// One init param. GetVal succeeds (FLOW_FUNC_SUCCESS) only for the param's own type and returns
// FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH otherwise; an empty list fits every list type.
// Python int -> int64_t, float -> float, bool -> bool, str -> std::string, DType -> TensorDataType.
class AttrValue {
 public:
  virtual ~AttrValue() = default;
  virtual int32_t GetVal(int64_t& value) const = 0;
  virtual int32_t GetVal(std::vector<int64_t>& value) const = 0;
  virtual int32_t GetVal(std::vector<std::vector<int64_t>>& value) const = 0;
  virtual int32_t GetVal(float& value) const = 0;
  virtual int32_t GetVal(std::vector<float>& value) const = 0;
  virtual int32_t GetVal(bool& value) const = 0;
  virtual int32_t GetVal(std::vector<bool>& value) const = 0;
  virtual int32_t GetVal(std::string& value) const = 0;
  virtual int32_t GetVal(std::vector<std::string>& value) const = 0;
  virtual int32_t GetVal(TensorDataType& value) const = 0;
  virtual int32_t GetVal(std::vector<TensorDataType>& value) const = 0;
};

class MetaParams {
 public:
  virtual ~MetaParams() = default;
  virtual const char* GetName() const = 0;  // the node's name
  virtual std::shared_ptr<const AttrValue> GetAttr(const char* name) const = 0;  // nullptr: none
  virtual size_t GetInputNum() const = 0;
  virtual size_t GetOutputNum() const = 0;
  virtual const char* GetWorkPath() const = 0;  // a folder of this library's own
  virtual int32_t GetRunningDeviceId() const = 0;  // -1 on the host
  virtual int32_t GetRunningInstanceId() const = 0;
  virtual int32_t GetRunningInstanceNum() const = 0;

  // FLOW_FUNC_SUCCESS and `value`, FLOW_FUNC_ERR_ATTR_NOT_EXITS or FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH.
  template <typename T>
  int32_t GetAttr(const char* name, T& value) const {
    const std::shared_ptr<const AttrValue> attr = GetAttr(name);
    return attr == nullptr ? FLOW_FUNC_ERR_ATTR_NOT_EXITS : attr->GetVal(value);
  }
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_META_PARAMS_H_
