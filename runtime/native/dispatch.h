// Routing of the runtime: which instance of a replicated node receives a message (plain C++:
// no Python headers).
#ifndef DFIR_RUNTIME_NATIVE_DISPATCH_H_
#define DFIR_RUNTIME_NATIVE_DISPATCH_H_

#include <cstdint>

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

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_DISPATCH_H_
