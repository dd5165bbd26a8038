// Process-shared event counts: a consumer sleeps on a futex until a producer rings it, and a
// producer pays for a system call only while someone sleeps (plain C++: no Python headers).
#ifndef DFIR_RUNTIME_NATIVE_EVENTCOUNT_H_
#define DFIR_RUNTIME_NATIVE_EVENTCOUNT_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace dfir::rt {

// When a wait gives up: never (`Forever()`) or at a point of the monotonic clock.
class Deadline {
 public:
  // -1 means forever; otherwise `timeout_ms` (>= 0) from now, at most the clock's last time point.
  static Deadline AfterMs(int64_t timeout_ms);
  static Deadline Forever() { return Deadline(); }
  // At `at`, or `limit` when that comes first.
  static Deadline AtOrBefore(std::chrono::steady_clock::time_point at, const Deadline& limit) {
    Deadline deadline;
    deadline.forever_ = false;
    deadline.at_ = limit.forever_ ? at : std::min(at, limit.at_);
    return deadline;
  }

  bool forever() const { return forever_; }
  bool passed() const;
  // What is left, clamped at zero (meaningless when forever()).
  std::chrono::nanoseconds remaining() const;

 private:
  Deadline() = default;
  bool forever_ = true;
  std::chrono::steady_clock::time_point at_{};
};

// Lives in shared memory (any process mapping it may wait or notify). A waiter announces
// itself before it checks its condition, a notifier changes the condition before it looks for
// waiters, so one of them always sees the other and no wake-up is lost:
//   uint32_t key = BeginWait(ec);        // announce
//   if (condition()) CancelWait(ec);     // no need to sleep
//   else Sleep(ec, key, deadline);       // until notified (or the deadline, or spuriously)
// A notifier makes the condition true, then calls NotifyAll(ec), which costs one load while
// nobody waits.
struct EventCount {
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint32_t> sleepers{0};
  // When a notifier last found someone asleep (steady clock, ns), stored before it wakes them: a
  // waiter woken by it can tell when its condition came true apart from how long waking took.
  std::atomic<int64_t> rung_ns{0};
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex words must be lock-free");

uint32_t BeginWait(EventCount& ec);
void CancelWait(EventCount& ec);

// Sleeps until notified after BeginWait returned `key`, or the deadline passes (false), and
// ends the wait. May return early: callers re-check their condition.
bool Sleep(EventCount& ec, uint32_t key, const Deadline& deadline);

void NotifyAll(EventCount& ec);

// The steady clock's now, in ns since its epoch (the unit of `EventCount::rung_ns`).
int64_t SteadyNowNs();

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_EVENTCOUNT_H_
