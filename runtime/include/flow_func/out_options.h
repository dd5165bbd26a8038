// OutOptions: how SetOutput / SetMultiOutputs send messages; today a balance config or none.
//
//   OutOptions options;
//   BalanceConfig* balance = options.MutableBalanceConfig();
//   BalanceWeight weight;
//   weight.rowNum = 1;
//   weight.colNum = 4;
//   balance->SetBalanceWeight(weight);
//   balance->SetDataPos({{0, 2}});
//   context->SetOutput(0, msg, options);
#ifndef DFIR_FLOW_FUNC_OUT_OPTIONS_H_
#define DFIR_FLOW_FUNC_OUT_OPTIONS_H_

#include <memory>
#include <utility>
#include <vector>

#include "balance_config.h"
#include "flow_func_defines.h"

namespace FlowFunc {

namespace detail {

class BalanceConfigData final : public BalanceConfig {
 public:
  void SetAffinityPolicy(AffinityPolicy affinityPolicy) override { policy_ = affinityPolicy; }
  AffinityPolicy GetAffinityPolicy() const override { return policy_; }
  void SetBalanceWeight(const BalanceWeight& balanceWeight) override { weight_ = balanceWeight; }
  const BalanceWeight& GetBalanceWeight() const override { return weight_; }
  void SetDataPos(const std::vector<std::pair<int32_t, int32_t>>& dataPos) override { positions_ = dataPos; }
  const std::vector<std::pair<int32_t, int32_t>>& GetDataPos() const override { return positions_; }

 private:
  AffinityPolicy policy_ = AffinityPolicy::NO_AFFINITY;
  BalanceWeight weight_;
  std::vector<std::pair<int32_t, int32_t>> positions_;
};

}  // namespace detail

class OutOptionsImpl;

class FLOW_FUNC_VISIBILITY OutOptions {
 public:
  OutOptions() = default;
  ~OutOptions() = default;
  // The balance config, made on first use.
  BalanceConfig* MutableBalanceConfig() {
    if (balance_ == nullptr) balance_ = std::make_shared<detail::BalanceConfigData>();
    return balance_.get();
  }
  // The balance config, or nullptr when none was made.
  const BalanceConfig* GetBalanceConfig() const { return balance_.get(); }

 private:
  std::shared_ptr<BalanceConfig> balance_;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_OUT_OPTIONS_H_
