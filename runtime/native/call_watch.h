// A worker's watchdog over calls with a time limit (`udf_timeout_ms`; plain C++: no Python
// headers). Each func thread whose node has a limit owns a CallTimer, started when a call begins
// and stopped when it ends. A native thread looks at the timers; when a call has run past its
// limit it writes why into the worker's slot (last words, and the call's transaction in
// `timed_out_transaction`) and ends the process at once with the watch's exit code, whatever the
// call is doing: it needs no Python lock, so a hung Python or C++ UDF cannot hold it up. The
// driver sees the exit and restarts the worker (runtime/driver/process_scheduler.py).
//
//   CallWatch watch(region, worker, 71);
//   std::shared_ptr<CallTimer> timer = watch.Add("node 'slow'", 500);
//   watch.Start();
//   timer->Start(transaction_id); ... timer->Stop();
#ifndef DFIR_RUNTIME_NATIVE_CALL_WATCH_H_
#define DFIR_RUNTIME_NATIVE_CALL_WATCH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clock.h"
#include "region.h"

namespace dfir::rt {

class CallTimer {
 public:
  CallTimer(std::string what, int64_t limit_ms) : what_(std::move(what)), limit_ms_(limit_ms) {}

  void Start(uint64_t transaction_id) {
    transaction_.store(transaction_id, std::memory_order_relaxed);
    started_ns_.store(MonotonicNs(), std::memory_order_release);
  }
  void Stop() { started_ns_.store(0, std::memory_order_release); }

  const std::string& what() const { return what_; }
  int64_t limit_ms() const { return limit_ms_; }
  // When the running call started (0: none runs), and its transaction.
  int64_t started_ns() const { return started_ns_.load(std::memory_order_acquire); }
  uint64_t transaction() const { return transaction_.load(std::memory_order_relaxed); }

 private:
  std::string what_;  // names the call's node and instance, for the last words
  int64_t limit_ms_;
  std::atomic<int64_t> started_ns_{0};
  std::atomic<uint64_t> transaction_{0};
};

class CallWatch {
 public:
  CallWatch(std::shared_ptr<Region> region, uint32_t worker, int exit_code);

  // A timer for calls limited to `limit_ms` (> 0), named `what`; only before Start.
  std::shared_ptr<CallTimer> Add(std::string what, int64_t limit_ms);
  // Starts the watching thread (once; it lives as long as the process).
  void Start();

 private:
  [[noreturn]] void Expire(const CallTimer& timer);

  std::shared_ptr<Region> region_;
  uint32_t worker_;
  int exit_code_;
  std::vector<std::shared_ptr<CallTimer>> timers_;
  bool started_ = false;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_CALL_WATCH_H_
