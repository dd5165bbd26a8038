#include "call_watch.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "shm.h"

namespace dfir::rt {

namespace {
// How often the thread looks, as a share of the shortest limit: a call is caught at most an
// eighth of its limit late; never more often than every millisecond or less than every 50.
constexpr int64_t kChecksPerLimit = 8;
constexpr int64_t kFastestCheckMs = 1;
constexpr int64_t kSlowestCheckMs = 50;
}  // namespace

CallWatch::CallWatch(std::shared_ptr<Region> region, uint32_t worker, int exit_code)
    : region_(std::move(region)), worker_(worker), exit_code_(exit_code) {
  region_->worker(worker_);  // RuntimeError for a worker the region does not have
}

std::shared_ptr<CallTimer> CallWatch::Add(std::string what, int64_t limit_ms) {
  if (started_) throw RuntimeError("a call watch takes its timers before it starts");
  if (limit_ms <= 0) throw RuntimeError("a call's time limit must be positive, got " + std::to_string(limit_ms));
  timers_.push_back(std::make_shared<CallTimer>(std::move(what), limit_ms));
  return timers_.back();
}

void CallWatch::Start() {
  if (started_ || timers_.empty()) return;
  started_ = true;
  int64_t shortest = timers_[0]->limit_ms();
  for (const auto& timer : timers_) shortest = std::min(shortest, timer->limit_ms());
  const int64_t period_ms = std::clamp(shortest / kChecksPerLimit, kFastestCheckMs, kSlowestCheckMs);
  std::thread([this, period_ms] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
      const int64_t now = MonotonicNs();
      for (const auto& timer : timers_) {
        const int64_t started = timer->started_ns();
        if (started != 0 && now - started > timer->limit_ms() * 1'000'000) Expire(*timer);
      }
    }
  }).detach();
}

void CallWatch::Expire(const CallTimer& timer) {
  WorkerSlot& slot = region_->worker(worker_);
  slot.timed_out_transaction.store(timer.transaction() + 1, std::memory_order_release);
  region_->SetLastWords(worker_, timer.what() + ": a call ran longer than its udf_timeout_ms (" +
                                     std::to_string(timer.limit_ms()) + " ms)");
  std::fflush(nullptr);
  _exit(exit_code_);
}

}  // namespace dfir::rt
