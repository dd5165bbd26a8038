// The runtime's MetaParams and AttrValue: a node's facts and its typed init params.
#ifndef DFIR_RUNTIME_NATIVE_UDF_PARAMS_H_
#define DFIR_RUNTIME_NATIVE_UDF_PARAMS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "flow_func/meta_params.h"

namespace dfir::udf {

using FlowFunc::TensorDataType;

// An init param `[]`: it fits every list type.
struct EmptyList {};

class HostAttrValue final : public FlowFunc::AttrValue {
 public:
  using Value = std::variant<int64_t, float, bool, std::string, TensorDataType, std::vector<int64_t>,
                             std::vector<float>, std::vector<bool>, std::vector<std::string>,
                             std::vector<TensorDataType>, std::vector<std::vector<int64_t>>, EmptyList>;

  explicit HostAttrValue(Value value) : value_(std::move(value)) {}

  using FlowFunc::AttrValue::GetVal;  // the std::string forms
  int32_t GetVal(FlowFunc::AscendString& value) const override;
  int32_t GetVal(std::vector<FlowFunc::AscendString>& value) const override;
  int32_t GetVal(int64_t& value) const override;
  int32_t GetVal(std::vector<int64_t>& value) const override;
  int32_t GetVal(std::vector<std::vector<int64_t>>& value) const override;
  int32_t GetVal(float& value) const override;
  int32_t GetVal(std::vector<float>& value) const override;
  int32_t GetVal(bool& value) const override;
  int32_t GetVal(std::vector<bool>& value) const override;
  int32_t GetVal(TensorDataType& value) const override;
  int32_t GetVal(std::vector<TensorDataType>& value) const override;

 private:
  template <typename T>
  int32_t Get(T& out) const;

  Value value_;
};

// Where a UDF instance runs (what MetaParams reports besides the init params).
struct NodeFacts {
  std::string name;
  size_t input_num = 0;
  size_t output_num = 0;
  std::string work_path;
  int32_t device_id = -1;
  int32_t instance_id = 0;
  int32_t instance_num = 1;
};

class HostMetaParams final : public FlowFunc::MetaParams {
 public:
  HostMetaParams(NodeFacts facts, std::map<std::string, std::shared_ptr<const HostAttrValue>> attrs)
      : facts_(std::move(facts)), attrs_(std::move(attrs)) {}

  const char* GetName() const override { return facts_.name.c_str(); }
  std::shared_ptr<const FlowFunc::AttrValue> GetAttr(const char* name) const override;
  size_t GetInputNum() const override { return facts_.input_num; }
  size_t GetOutputNum() const override { return facts_.output_num; }
  const char* GetWorkPath() const override { return facts_.work_path.c_str(); }
  int32_t GetRunningDeviceId() const override { return facts_.device_id; }
  int32_t GetRunningInstanceId() const override { return facts_.instance_id; }
  int32_t GetRunningInstanceNum() const override { return facts_.instance_num; }

  const NodeFacts& facts() const { return facts_; }

 private:
  NodeFacts facts_;
  std::map<std::string, std::shared_ptr<const HostAttrValue>> attrs_;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_PARAMS_H_
