#include "udf_params.h"

#include <type_traits>

namespace dfir::udf {

namespace {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

}  // namespace

template <typename T>
int32_t HostAttrValue::Get(T& out) const {
  if (const T* value = std::get_if<T>(&value_)) {
    out = *value;
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  if constexpr (IsVector<T>::value) {
    if (std::holds_alternative<EmptyList>(value_)) {
      out.clear();
      return FlowFunc::FLOW_FUNC_SUCCESS;
    }
  }
  return FlowFunc::FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}

int32_t HostAttrValue::GetVal(int64_t& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(std::vector<int64_t>& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(std::vector<std::vector<int64_t>>& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(float& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(std::vector<float>& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(bool& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(std::vector<bool>& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(FlowFunc::AscendString& value) const {
  std::string text;
  const int32_t ret = Get(text);
  if (ret == FlowFunc::FLOW_FUNC_SUCCESS) value = FlowFunc::AscendString(text.data(), text.size());
  return ret;
}

int32_t HostAttrValue::GetVal(std::vector<FlowFunc::AscendString>& value) const {
  std::vector<std::string> texts;
  const int32_t ret = Get(texts);
  if (ret != FlowFunc::FLOW_FUNC_SUCCESS) return ret;
  value.clear();
  for (const std::string& text : texts) value.emplace_back(text.data(), text.size());
  return ret;
}

int32_t HostAttrValue::GetVal(TensorDataType& value) const { return Get(value); }
int32_t HostAttrValue::GetVal(std::vector<TensorDataType>& value) const { return Get(value); }

std::shared_ptr<const FlowFunc::AttrValue> HostMetaParams::GetAttr(const char* name) const {
  if (name == nullptr) return nullptr;
  const auto found = attrs_.find(name);
  return found == attrs_.end() ? nullptr : found->second;
}

}  // namespace dfir::udf
