// Routing and transaction bookkeeping of the runtime (plain C++: no Python headers).
#ifndef DFIR_RUNTIME_NATIVE_DISPATCH_H_
#define DFIR_RUNTIME_NATIVE_DISPATCH_H_

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

namespace dfir::rt {

// How a replicated node's messages are spread over its instances (the plan's `dispatch`).
enum class DispatchRule : uint8_t {
  kRoundRobin,  // transaction_id % N
  kRouteLabel,  // (route_label - 1) % N for a message with a route label, else round-robin
};

// Picks the instance of an N-instance node that receives one message, by the node's rule.
// A message without a route label (0) always goes by transaction id, so every unlabelled
// message of one transaction reaches the same instance.
class InstanceDispatcher {
 public:
  InstanceDispatcher(uint32_t instances, DispatchRule rule);
  uint32_t instances() const { return instances_; }
  DispatchRule rule() const { return rule_; }
  uint32_t Route(uint64_t transaction_id, uint32_t route_label) const {
    if (rule_ == DispatchRule::kRouteLabel && route_label != 0) return (route_label - 1) % instances_;
    return static_cast<uint32_t>(transaction_id % instances_);
  }

 private:
  uint32_t instances_;
  DispatchRule rule_;
};

// The metadata of one transaction, as its messages carry it.
struct TransactionInfo {
  uint64_t transaction_id = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  uint32_t flow_flags = 0;
  uint32_t user_data_size = 0;
  std::array<uint8_t, 64> user_data{};
};

// The transactions a driver has fed whose results have not shown up at any graph output yet:
// when a worker dies these are the ones that fail. Opened in feed order; settled by id (the
// oldest open entry with that id) when an output message of the transaction is seen.
// At most `capacity` entries stay open; beyond that the oldest are forgotten (a transaction
// whose outputs a UDF suppressed never settles).
class TransactionLedger {
 public:
  explicit TransactionLedger(size_t capacity);

  void Open(const TransactionInfo& info);
  // Settles the oldest open entry of `transaction_id`; false when none is open.
  bool Settle(uint64_t transaction_id);
  // Removes and returns the oldest open entry.
  std::optional<TransactionInfo> TakeOldest();
  size_t open() const { return open_count_; }

 private:
  struct Entry {
    TransactionInfo info;
    bool settled;
  };
  void DropSettledFront();

  size_t capacity_;
  std::deque<Entry> entries_;
  std::unordered_map<uint64_t, size_t> open_by_id_;  // open entries per transaction id
  size_t open_count_ = 0;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_DISPATCH_H_
