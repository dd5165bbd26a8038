// A clock on CLOCK_MONOTONIC's scale that costs a third of a clock_gettime to read: the CPU's
// time-stamp counter, scaled by a calibration that processes sharing the clock's memory read
// alike. It lives in shared memory (a trace log's header), is calibrated by one owner and read
// by any thread of any process that maps it. Plain C++: no Python headers.
//
//   clock->Start();        // the owner, once: a first calibration over ~2 ms
//   int64_t t = clock->Now();   // anyone: ns on CLOCK_MONOTONIC's scale
//   clock->Recalibrate();  // the owner, now and then: the rate over all the time since Start
//
// The counter is used only where the kernel keeps time with it itself (x86-64, clocksource
// "tsc": constant, nonstop and the same on every CPU), which is also when clock_gettime reads it;
// elsewhere Now() is clock_gettime(CLOCK_MONOTONIC). Now() agrees with CLOCK_MONOTONIC to within
// the calibration's error: a few hundred ns after Start, tens of ns once recalibrated over
// seconds. Each recalibration may move it by that error, so two readings of one thread around
// a recalibration can go back by as much.
#ifndef DFIR_RUNTIME_NATIVE_TICK_CLOCK_H_
#define DFIR_RUNTIME_NATIVE_TICK_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace dfir::rt {

class TickClock {
 public:
  // Whether this machine's counter can be used (read once per process).
  static bool CounterUsable();

  // Calibrates the clock for the first time (the owner, before anyone reads it).
  void Start();
  // Moves the calibration to now, with the rate measured since Start (the owner).
  void Recalibrate();

  int64_t Now() const {
#if defined(__x86_64__)
    if (counting_.load(std::memory_order_relaxed) != 0) {
      int64_t base_ticks, base_ns;
      uint64_t ns_per_tick;
      uint32_t version;
      do {
        version = version_.load(std::memory_order_acquire);
        base_ticks = base_ticks_.load(std::memory_order_relaxed);
        base_ns = base_ns_.load(std::memory_order_relaxed);
        ns_per_tick = ns_per_tick_q32_.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
      } while ((version & 1) != 0 || version != version_.load(std::memory_order_relaxed));
      const __int128 ticks = static_cast<__int128>(static_cast<int64_t>(__rdtsc()) - base_ticks);
      return base_ns + static_cast<int64_t>((ticks * ns_per_tick) >> 32);
    }
#endif
    return MonotonicNs();
  }

 private:
  struct Reading {
    int64_t ticks;
    int64_t ns;
  };
  static Reading Read();
  // Publishes a calibration: `ns_per_tick_q32` ns per tick (32 fraction bits) from `at`.
  void Publish(Reading at, uint64_t ns_per_tick_q32);

  std::atomic<uint32_t> counting_{0};  // 1: the counter is used
  std::atomic<uint32_t> version_{0};   // odd while a calibration is being published
  std::atomic<int64_t> base_ticks_{0};
  std::atomic<int64_t> base_ns_{0};
  std::atomic<uint64_t> ns_per_tick_q32_{0};
  Reading origin_{0, 0};  // the owner's: Start's reading
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_TICK_CLOCK_H_
