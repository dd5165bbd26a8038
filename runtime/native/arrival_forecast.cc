#include "arrival_forecast.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace dfir::rt {
namespace {

using Clock = std::chrono::steady_clock;

bool AllHoldOne(const Region& region, const std::vector<uint32_t>& channels) {
  for (uint32_t channel : channels) {
    if (region.ring(channel).Ready(1) == 0) return false;
  }
  return true;
}

int64_t NsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// How long after `start` the result came: when the producer's ring of `bell` woke this wait, the
// time it rang, since waking an idle core takes 50-150 us that the next forecast must not add to
// the producer's time; otherwise (found by polling) now.
int64_t ArrivedAfter(const EventCount& bell, Clock::time_point start) {
  const int64_t start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count();
  const int64_t now_ns = SteadyNowNs();
  const int64_t rung_ns = bell.rung_ns.load(std::memory_order_acquire);
  return (rung_ns >= start_ns && rung_ns <= now_ns ? rung_ns : now_ns) - start_ns;
}

}  // namespace

WaitStatus ArrivalForecast::Await(Region& region, const std::vector<uint32_t>& channels, uint32_t bell,
                                  const Deadline& deadline) {
  if (AllHoldOne(region, channels)) return WaitStatus::kReady;
  const Clock::time_point start = Clock::now();
  auto [early, late] = Quartiles();
  if (learnt_ >= kMinSamples && late <= horizon_ns_) {
    if (early > kLeadNs) {  // sleep until shortly before the result is due
      const Deadline wake = Deadline::AtOrBefore(start + std::chrono::nanoseconds(early - kLeadNs), deadline);
      WaitStatus status = region.WaitForMessages(channels, bell, wake);
      if (status != WaitStatus::kTimeout) {
        if (status == WaitStatus::kReady) Learn(ArrivedAfter(region.bell(bell), start));
        return status;
      }
    }
    const auto stop_polling = start + std::chrono::nanoseconds(std::min(late + kLeadNs, early - kLeadNs + kMaxPollNs));
    while (Clock::now() < stop_polling && !deadline.passed()) {
      if (AllHoldOne(region, channels)) {
        Learn(NsSince(start));
        return WaitStatus::kReady;
      }
      if (region.closing()) return WaitStatus::kClosed;
      sched_yield();
    }
  }
  WaitStatus status = region.WaitForMessages(channels, bell, deadline);
  if (status == WaitStatus::kReady) Learn(ArrivedAfter(region.bell(bell), start));
  return status;
}

std::array<int64_t, 2> ArrivalForecast::Quartiles() const {
  if (learnt_ < kMinSamples) return {0, 0};
  const size_t count = std::min(learnt_, kSamples);
  std::array<int64_t, kSamples> sorted = waits_ns_;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(count));
  return {sorted[count / 4], sorted[(3 * count) / 4]};
}

void ArrivalForecast::Learn(int64_t wait_ns) { waits_ns_[learnt_++ % kSamples] = wait_ns; }

}  // namespace dfir::rt
