// BalanceConfig: where a balance-scatter node sends each message, set through
// OutOptions::MutableBalanceConfig() and SetOutput/SetMultiOutputs(index, msg(s), options).
// The balance weight gives a rowNum x colNum matrix (at most 65536 cells) and SetDataPos one
// (row, col) cell per message. data label = row * colNum + col + 1; the route label is the row
// (ROW_AFFINITY), the column (COL_AFFINITY) or the cell (NO_AFFINITY), plus 1. The weights of
// `matrix` are not read: dfir routes each message by its cell.
#ifndef DFIR_FLOW_FUNC_BALANCE_CONFIG_H_
#define DFIR_FLOW_FUNC_BALANCE_CONFIG_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "flow_func_defines.h"

namespace FlowFunc {

enum class AffinityPolicy : int32_t {
  NO_AFFINITY = 0,
  ROW_AFFINITY = 1,
  COL_AFFINITY = 2,
};

#pragma pack(1)
struct BalanceWeight {
  int32_t rowNum = 0;
  int32_t colNum = 0;
  const int32_t* matrix = nullptr;  // rowNum * colNum weights, or nullptr for all 1
};
#pragma pack()

class FLOW_FUNC_VISIBILITY BalanceConfig {
 public:
  BalanceConfig() = default;
  virtual ~BalanceConfig() = default;
  virtual void SetAffinityPolicy(AffinityPolicy affinityPolicy) = 0;
  virtual AffinityPolicy GetAffinityPolicy() const = 0;
  virtual void SetBalanceWeight(const BalanceWeight& balanceWeight) = 0;
  virtual const BalanceWeight& GetBalanceWeight() const = 0;
  // One (row, col) cell of the weight matrix per message, in order.
  virtual void SetDataPos(const std::vector<std::pair<int32_t, int32_t>>& dataPos) = 0;
  virtual const std::vector<std::pair<int32_t, int32_t>>& GetDataPos() const = 0;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_BALANCE_CONFIG_H_
