// AttrValue: one init param (set_init_param) of a UDF node, read with the GetVal of its type.
// GetVal succeeds (FLOW_FUNC_SUCCESS) only for the param's own type and returns
// FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH otherwise; an empty list fits every list type.
// Python int -> int64_t, float -> float, bool -> bool, str -> AscendString (or std::string),
// DType -> TensorDataType.
#ifndef DFIR_FLOW_FUNC_DFLOW_ATTR_VALUE_H_
#define DFIR_FLOW_FUNC_DFLOW_ATTR_VALUE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func_ascend_string.h"
#include "flow_func_defines.h"
#include "tensor_data_type.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY AttrValue {
 public:
  AttrValue() = default;
  virtual ~AttrValue() = default;
  AttrValue(const AttrValue&) = delete;
  AttrValue(AttrValue&&) = delete;
  AttrValue& operator=(const AttrValue&) = delete;
  AttrValue& operator=(AttrValue&&) = delete;

  virtual int32_t GetVal(AscendString& value) const = 0;
  virtual int32_t GetVal(std::vector<AscendString>& value) const = 0;
  virtual int32_t GetVal(int64_t& value) const = 0;
  virtual int32_t GetVal(std::vector<int64_t>& value) const = 0;
  virtual int32_t GetVal(std::vector<std::vector<int64_t>>& value) const = 0;
  virtual int32_t GetVal(float& value) const = 0;
  virtual int32_t GetVal(std::vector<float>& value) const = 0;
  virtual int32_t GetVal(bool& value) const = 0;
  virtual int32_t GetVal(std::vector<bool>& value) const = 0;
  virtual int32_t GetVal(TensorDataType& value) const = 0;
  virtual int32_t GetVal(std::vector<TensorDataType>& value) const = 0;

  // std::string forms of the string GetVals, converted in the caller's library.
  int32_t GetVal(std::string& value) const {
    AscendString text;
    const int32_t ret = GetVal(text);
    if (ret == FLOW_FUNC_SUCCESS) value.assign(text.GetString(), text.GetLength());
    return ret;
  }
  int32_t GetVal(std::vector<std::string>& value) const {
    std::vector<AscendString> texts;
    const int32_t ret = GetVal(texts);
    if (ret != FLOW_FUNC_SUCCESS) return ret;
    value.clear();
    for (const AscendString& text : texts) value.emplace_back(text.GetString(), text.GetLength());
    return ret;
  }
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_DFLOW_ATTR_VALUE_H_
