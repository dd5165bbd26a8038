// The runtime's one clock: CLOCK_MONOTONIC in nanoseconds, which every process of a machine
// reads alike (call timers, trace slices). Plain C++: no Python headers.
#ifndef DFIR_RUNTIME_NATIVE_CLOCK_H_
#define DFIR_RUNTIME_NATIVE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace dfir::rt {

inline int64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_CLOCK_H_
