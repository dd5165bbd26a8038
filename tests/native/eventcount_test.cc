// EventCount and Deadline (runtime/native/eventcount.h): futex-based, process-shared wake-ups.
#include "eventcount.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>

#include "helpers.h"
#include "shm.h"

using dfir::rt::BeginWait;
using dfir::rt::CancelWait;
using dfir::rt::Deadline;
using dfir::rt::EventCount;
using dfir::rt::NotifyAll;
using dfir::rt::Sleep;
using dfir::rt::SteadyNowNs;
using dfir::testing::MsSince;
using Clock = std::chrono::steady_clock;

TEST_SUITE("eventcount") {

TEST_CASE("deadlines: -1 is forever, 0 has passed, a later one has time left") {
  CHECK(Deadline::AfterMs(-1).forever());
  CHECK_FALSE(Deadline::AfterMs(-1).passed());
  CHECK(Deadline::Forever().forever());
  CHECK(Deadline::AfterMs(0).passed());
  CHECK(Deadline::AfterMs(0).remaining().count() == 0);
  Deadline later = Deadline::AfterMs(10000);
  CHECK_FALSE(later.forever());
  CHECK_FALSE(later.passed());
  CHECK(later.remaining() > std::chrono::seconds(9));
  CHECK(later.remaining() <= std::chrono::seconds(10));
}

// A timeout beyond steady_clock's range (more than about 9.2e12 ms, 292 years less the
// machine's uptime) saturates at the clock's last time point instead of wrapping into the past.
TEST_CASE("a very long timeout is far in the future, not in the past") {
  CHECK_FALSE(Deadline::AfterMs(int64_t{10000000000000}).passed());  // 317 years
  CHECK_FALSE(Deadline::AfterMs(INT64_MAX).passed());
  CHECK(Deadline::AfterMs(INT64_MAX).remaining() > std::chrono::hours(24 * 365));
}

TEST_CASE("AtOrBefore takes the earlier of a time and a limit") {
  auto soon = Clock::now() + std::chrono::milliseconds(5);
  Deadline forever_limit = Deadline::AtOrBefore(soon, Deadline::Forever());
  CHECK_FALSE(forever_limit.forever());
  CHECK(forever_limit.remaining() <= std::chrono::milliseconds(5));
  Deadline passed_limit = Deadline::AtOrBefore(Clock::now() + std::chrono::hours(1), Deadline::AfterMs(0));
  CHECK(passed_limit.passed());
  Deadline later_limit = Deadline::AtOrBefore(soon, Deadline::AfterMs(60000));
  CHECK(later_limit.remaining() <= std::chrono::milliseconds(5));
}

TEST_CASE("a notify without sleepers costs nothing: the epoch stays") {
  EventCount ec;
  NotifyAll(ec);
  CHECK(ec.epoch.load() == 0);
  CHECK(ec.sleepers.load() == 0);
}

TEST_CASE("BeginWait announces a sleeper and CancelWait withdraws it") {
  EventCount ec;
  uint32_t key = BeginWait(ec);
  CHECK(key == 0);
  CHECK(ec.sleepers.load() == 1);
  NotifyAll(ec);  // someone announced: the epoch moves
  CHECK(ec.epoch.load() == 1);
  CancelWait(ec);
  CHECK(ec.sleepers.load() == 0);
}

TEST_CASE("a notify that finds a sleeper stamps when it rang; one that finds none does not") {
  EventCount ec;
  NotifyAll(ec);
  CHECK(ec.rung_ns.load() == 0);
  BeginWait(ec);
  const int64_t before = SteadyNowNs();
  NotifyAll(ec);
  const int64_t after = SteadyNowNs();
  CHECK(ec.rung_ns.load() >= before);
  CHECK(ec.rung_ns.load() <= after);
  CancelWait(ec);
}

TEST_CASE("a notify between BeginWait and Sleep is not lost") {
  EventCount ec;
  uint32_t key = BeginWait(ec);
  NotifyAll(ec);
  auto start = Clock::now();
  CHECK(Sleep(ec, key, Deadline::AfterMs(5000)));  // returns at once: the epoch moved
  CHECK(MsSince(start) < 1000);
  CHECK(ec.sleepers.load() == 0);
}

TEST_CASE("Sleep returns false at its deadline and ends the wait") {
  EventCount ec;
  uint32_t key = BeginWait(ec);
  auto start = Clock::now();
  CHECK_FALSE(Sleep(ec, key, Deadline::AfterMs(30)));
  CHECK(MsSince(start) >= 29.0);
  CHECK(ec.sleepers.load() == 0);
  key = BeginWait(ec);
  start = Clock::now();
  CHECK_FALSE(Sleep(ec, key, Deadline::AfterMs(0)));  // already passed: no system call
  CHECK(MsSince(start) < 1000);
  CHECK(ec.sleepers.load() == 0);
}

TEST_CASE("a thread sleeping forever wakes when another makes its condition true and notifies") {
  EventCount ec;
  std::atomic<bool> flag{false};
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    while (!flag.load()) {
      uint32_t key = BeginWait(ec);
      if (flag.load()) {
        CancelWait(ec);
        break;
      }
      Sleep(ec, key, Deadline::Forever());
    }
    woke = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(woke.load());
  flag = true;
  NotifyAll(ec);
  waiter.join();
  CHECK(woke.load());
  CHECK(ec.sleepers.load() == 0);
}

TEST_CASE("ping-pong between two threads loses no wake-up") {
  EventCount to_b;
  EventCount to_a;
  std::atomic<int> ball{0};
  constexpr int kRounds = 2000;
  auto wait_for = [](EventCount& ec, std::atomic<int>& value, int wanted) {
    while (value.load() != wanted) {
      uint32_t key = BeginWait(ec);
      if (value.load() == wanted) {
        CancelWait(ec);
        return;
      }
      Sleep(ec, key, Deadline::AfterMs(10000));
    }
  };
  std::thread b([&] {
    for (int i = 0; i < kRounds; ++i) {
      wait_for(to_b, ball, 2 * i + 1);
      ball.store(2 * i + 2);
      NotifyAll(to_a);
    }
  });
  auto start = Clock::now();
  for (int i = 0; i < kRounds; ++i) {
    ball.store(2 * i + 1);
    NotifyAll(to_b);
    wait_for(to_a, ball, 2 * i + 2);
  }
  b.join();
  CHECK(ball.load() == 2 * kRounds);
  CHECK(MsSince(start) < 10000);  // a lost wake-up would cost a 10 s timeout
}

TEST_CASE("a process sleeping on a shared event count wakes when another process notifies") {
  auto memory = dfir::rt::SharedMemory::Create("dfir-eventcount-test", 4096);
  auto* ec = new (memory->base()) EventCount();
  auto* flag = new (memory->base() + 64) std::atomic<uint32_t>(0);
  auto* asleep = new (memory->base() + 128) std::atomic<uint32_t>(0);
  pid_t child = dfir::testing::StartChild([&] {
    Deadline deadline = Deadline::AfterMs(20000);
    while (flag->load() == 0) {
      uint32_t key = BeginWait(*ec);
      if (flag->load() != 0) {
        CancelWait(*ec);
        break;
      }
      asleep->store(1);
      if (!Sleep(*ec, key, deadline) && flag->load() == 0) return 1;  // never woken
    }
    return 0;
  });
  auto start = Clock::now();
  while (asleep->load() == 0 && MsSince(start) < 20000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  flag->store(1);
  NotifyAll(*ec);
  CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(MsSince(start) < 15000);
}

}  // TEST_SUITE
