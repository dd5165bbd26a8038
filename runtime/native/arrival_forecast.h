// Waiting for messages that come at a rhythm the waiter can learn (the driver fetching the
// result of the message it just fed; a node's set loop fed one message at a time) without paying
// for a cold wake-up. Plain C++: no Python headers.
//
// A consumer asleep on a futex is woken by its producer's ring; on a virtual machine that costs
// 50-150 us more once the consumer's core has gone idle (a CNN of 0.4 ms fed one message at a
// time: +184 us through a model whose fetch slept, +67 us with a polling fetch; an MLP of 15 us
// on onnxruntime: +80 us with a fetch that slept through its 100 us waits, +33 us polling). An
// ArrivalForecast learns how long its waits take and sleeps only until shortly before the next
// result is due, then polls across the window it is likely to come in: the timer wakes the
// consumer before the result, not after. Waits shorter than kLeadNs are polled from their start.
//
// Algorithm (Await):
//   1. Every channel holds a message: return at once; nothing is learnt.
//   2. With fewer than kMinSamples waits learnt, or an upper quartile beyond the horizon, wait as
//      Region::WaitForMessages does.
//   3. Otherwise sleep until kLeadNs before the lower quartile (a producer's ring ends it
//      earlier), then poll, yielding the core (sched_yield) to whatever else is runnable, until
//      kLeadNs past the upper quartile, at most kMaxPollNs; then sleep until the deadline.
//   4. Learn the wait: from its start until every channel held a message. A wait a producer's
//      ring woke learns the ring's time (EventCount::rung_ns), not its own wake-up: learning the
//      wake-up too made the forecast later each time, so the window opened after the result.
#ifndef DFIR_RUNTIME_NATIVE_ARRIVAL_FORECAST_H_
#define DFIR_RUNTIME_NATIVE_ARRIVAL_FORECAST_H_

#include <array>
#include <cstdint>
#include <vector>

#include "eventcount.h"
#include "region.h"

namespace dfir::rt {

class ArrivalForecast {
 public:
  static constexpr size_t kSamples = 16;
  static constexpr size_t kMinSamples = 4;
  static constexpr int64_t kLeadNs = 100'000;
  static constexpr int64_t kMaxPollNs = 1'000'000;

  // Waits of which a quarter or more last longer than `horizon_ns` are not forecast: the waiter
  // sleeps until rung. A node's set loop has a horizon, so that a worker never wakes to poll for
  // a message that comes seldom or irregularly, taking a core from the nodes that are busy.
  explicit ArrivalForecast(int64_t horizon_ns = INT64_MAX) : horizon_ns_(horizon_ns) {}

  // Waits, as Region::WaitForMessages, until every channel of `channels` holds a message (their
  // consumer's doorbell is `bell`), the deadline passes or the region closes.
  WaitStatus Await(Region& region, const std::vector<uint32_t>& channels, uint32_t bell, const Deadline& deadline);

  // The lower and upper quartiles of the waits learnt, in ns (0, 0 before kMinSamples).
  std::array<int64_t, 2> Quartiles() const;

 private:
  void Learn(int64_t wait_ns);

  int64_t horizon_ns_;
  std::array<int64_t, kSamples> waits_ns_{};
  size_t learnt_ = 0;  // waits learnt in all; the last kSamples are kept
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_ARRIVAL_FORECAST_H_
