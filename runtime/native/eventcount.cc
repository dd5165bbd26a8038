#include "eventcount.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace dfir::rt {
namespace {

// Without FUTEX_PRIVATE_FLAG: the word may be shared by several processes.
long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

Deadline Deadline::AfterMs(int64_t timeout_ms) {
  Deadline deadline;
  if (timeout_ms >= 0) {
    using Clock = std::chrono::steady_clock;
    deadline.forever_ = false;
    const Clock::time_point now = Clock::now();
    // A timeout beyond the clock's range saturates at its last time point (not wrapping into
    // the past, which would give up at once).
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
    deadline.at_ = timeout_ms >= room.count() ? Clock::time_point::max() : now + std::chrono::milliseconds(timeout_ms);
  }
  return deadline;
}

bool Deadline::passed() const { return !forever_ && std::chrono::steady_clock::now() >= at_; }

std::chrono::nanoseconds Deadline::remaining() const {
  auto left = at_ - std::chrono::steady_clock::now();
  return left.count() > 0 ? std::chrono::duration_cast<std::chrono::nanoseconds>(left)
                          : std::chrono::nanoseconds(0);
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t BeginWait(EventCount& ec) {
  ec.sleepers.fetch_add(1, std::memory_order_seq_cst);
  return ec.epoch.load(std::memory_order_seq_cst);
}

void CancelWait(EventCount& ec) { ec.sleepers.fetch_sub(1, std::memory_order_seq_cst); }

bool Sleep(EventCount& ec, uint32_t key, const Deadline& deadline) {
  timespec timeout{};
  const timespec* timeout_ptr = nullptr;
  if (!deadline.forever()) {
    auto left = deadline.remaining();
    if (left.count() == 0) {
      CancelWait(ec);
      return false;
    }
    timeout.tv_sec = static_cast<time_t>(left.count() / 1000000000);
    timeout.tv_nsec = static_cast<long>(left.count() % 1000000000);
    timeout_ptr = &timeout;
  }
  long rc = Futex(&ec.epoch, FUTEX_WAIT, key, timeout_ptr);
  bool timed_out = rc == -1 && errno == ETIMEDOUT;
  CancelWait(ec);
  return !timed_out;
}

void NotifyAll(EventCount& ec) {
  // Orders the caller's earlier stores (the condition it made true) before the load below; a
  // release store followed by a load may otherwise pass each other, and both sides miss.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ec.sleepers.load(std::memory_order_seq_cst) == 0) return;
  ec.rung_ns.store(SteadyNowNs(), std::memory_order_relaxed);  // published by the fetch_add below
  ec.epoch.fetch_add(1, std::memory_order_seq_cst);
  Futex(&ec.epoch, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace dfir::rt
