#include "tick_clock.h"

#include <fstream>
#include <string>

namespace dfir::rt {
namespace {

// Start's calibration spans this much; later ones span all the time since.
constexpr int64_t kFirstSpanNs = 2'000'000;
// Readings taken to find one whose counter reads bracket the clock read tightly.
constexpr int kTries = 5;

bool KernelKeepsTimeWithCounter() {
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(source >> name) && name == "tsc";
}

uint64_t NsPerTickQ32(int64_t ns, int64_t ticks) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(ns) << 32) / static_cast<uint64_t>(ticks));
}

}  // namespace

bool TickClock::CounterUsable() {
#if defined(__x86_64__)
  static const bool usable = KernelKeepsTimeWithCounter();
  return usable;
#else
  return false;
#endif
}

TickClock::Reading TickClock::Read() {
#if defined(__x86_64__)
  Reading best{0, 0};
  int64_t best_gap = INT64_MAX;
  for (int i = 0; i < kTries; ++i) {
    const int64_t before = static_cast<int64_t>(__rdtsc());
    const int64_t ns = MonotonicNs();
    const int64_t after = static_cast<int64_t>(__rdtsc());
    if (after - before < best_gap) {
      best_gap = after - before;
      best = Reading{before + (after - before) / 2, ns};
    }
  }
  return best;
#else
  return Reading{0, MonotonicNs()};
#endif
}

void TickClock::Start() {
  if (!CounterUsable()) return;
  origin_ = Read();
  Reading now = Read();
  while (now.ns - origin_.ns < kFirstSpanNs) now = Read();
  Publish(now, NsPerTickQ32(now.ns - origin_.ns, now.ticks - origin_.ticks));
  counting_.store(1, std::memory_order_release);
}

void TickClock::Recalibrate() {
  if (counting_.load(std::memory_order_relaxed) == 0) return;
  const Reading now = Read();
  if (now.ticks <= origin_.ticks) return;
  Publish(now, NsPerTickQ32(now.ns - origin_.ns, now.ticks - origin_.ticks));
}

void TickClock::Publish(Reading at, uint64_t ns_per_tick_q32) {
  const uint32_t version = version_.load(std::memory_order_relaxed);
  version_.store(version + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  base_ticks_.store(at.ticks, std::memory_order_relaxed);
  base_ns_.store(at.ns, std::memory_order_relaxed);
  ns_per_tick_q32_.store(ns_per_tick_q32, std::memory_order_relaxed);
  version_.store(version + 2, std::memory_order_release);
}

}  // namespace dfir::rt
