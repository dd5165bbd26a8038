// ArrivalForecast (runtime/native/arrival_forecast.h): a fetch that learns how long its waits
// take and sleeps until shortly before the next result is due, then polls across the window it
// is likely to come in (docs/runtime.md, "What a GE node costs"). Times here are generous: a
// forecast's effect is visible as a message pushed without a ring being seen at the forecast's
// wake-up, or only at the deadline.
#include "arrival_forecast.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "helpers.h"

using dfir::rt::ArrivalForecast;
using dfir::rt::Deadline;
using dfir::rt::Region;
using dfir::rt::WaitStatus;
using dfir::testing::MsSince;
using Clock = std::chrono::steady_clock;

namespace {

struct Awaited {
  WaitStatus status;
  double ms;
};

// Awaits channel 0 of `region` (doorbell 0) while a thread pushes a message after `delay`,
// ringing the doorbell or not (`ring`); then takes the message out again.
Awaited AwaitPush(ArrivalForecast& forecast, Region& region, std::chrono::microseconds delay, bool ring,
                  int64_t deadline_ms) {
  std::thread producer([&] {
    std::this_thread::sleep_for(delay);
    uint64_t value = 1;
    region.ring(0).TryPush([&](uint8_t* slot) { std::memcpy(slot, &value, sizeof value); });
    if (ring) dfir::rt::NotifyAll(region.bell(0));
  });
  auto start = Clock::now();
  WaitStatus status = forecast.Await(region, {0}, 0, Deadline::AfterMs(deadline_ms));
  double ms = MsSince(start);
  producer.join();
  region.ring(0).TryPop([](const uint8_t*) {});
  return Awaited{status, ms};
}

Awaited AwaitPush(ArrivalForecast& forecast, Region& region, int delay_ms, bool ring, int64_t deadline_ms) {
  return AwaitPush(forecast, region, std::chrono::milliseconds(delay_ms), ring, deadline_ms);
}

// Teaches `forecast` `count` waits of about `delay_ms` (rung as producers do).
void Train(ArrivalForecast& forecast, Region& region, int delay_ms, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    REQUIRE(AwaitPush(forecast, region, delay_ms, true, 20000).status == WaitStatus::kReady);
  }
}

constexpr double kNs = 1e-6;  // ms per ns

}  // namespace

TEST_SUITE("arrival_forecast") {

TEST_CASE("waits that find the result ready learn nothing") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  uint64_t value = 1;
  for (int i = 0; i < 20; ++i) {
    region->ring(0).TryPush([&](uint8_t* slot) { std::memcpy(slot, &value, sizeof value); });
    CHECK(forecast.Await(*region, {0}, 0, Deadline::AfterMs(0)) == WaitStatus::kReady);
    region->ring(0).TryPop([](const uint8_t*) {});
  }
  CHECK(forecast.Quartiles() == std::array<int64_t, 2>{0, 0});
}

TEST_CASE("quartiles come after 4 waits: the lower and upper quartile of those learnt") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 5, 3);
  CHECK(forecast.Quartiles() == std::array<int64_t, 2>{0, 0});
  Train(forecast, *region, 5, 1);
  Train(forecast, *region, 40, 4);
  auto [lower, upper] = forecast.Quartiles();
  CHECK(lower * kNs >= 4.0);
  CHECK(lower * kNs < 39.0);  // one of the short waits
  CHECK(upper * kNs >= 39.0);  // one of the long ones
}

TEST_CASE("only the last 16 waits count") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 25, ArrivalForecast::kSamples);
  CHECK(forecast.Quartiles()[0] * kNs >= 24.0);
  Train(forecast, *region, 2, ArrivalForecast::kSamples);  // rung before the forecast wakes
  CHECK(forecast.Quartiles()[1] * kNs < 24.0);
}

TEST_CASE("a wait a ring woke learns when the ring came, not when the waiter woke") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  double latest_ring_ms = 0;  // the latest, over the waits, of when the producer's ring had returned
  for (int i = 0; i < 4; ++i) {
    auto start = Clock::now();
    std::thread producer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      uint64_t value = 1;
      region->ring(0).TryPush([&](uint8_t* slot) { std::memcpy(slot, &value, sizeof value); });
      dfir::rt::NotifyAll(region->bell(0));
      latest_ring_ms = std::max(latest_ring_ms, MsSince(start));
    });
    REQUIRE(forecast.Await(*region, {0}, 0, Deadline::AfterMs(20000)) == WaitStatus::kReady);
    producer.join();
    region->ring(0).TryPop([](const uint8_t*) {});
  }
  auto [lower, upper] = forecast.Quartiles();
  CHECK(lower * kNs >= 9.0);
  CHECK(upper * kNs <= latest_ring_ms);
}

TEST_CASE("untrained, a wait sleeps until rung: a silent push is seen at the deadline") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Awaited awaited = AwaitPush(forecast, *region, 5, /*ring=*/false, 150);
  CHECK(awaited.status == WaitStatus::kReady);
  CHECK(awaited.ms >= 149.0);
}

TEST_CASE("trained, it wakes shortly before the lower quartile without a ring") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 40, 4);
  const double lower = forecast.Quartiles()[0] * kNs;
  REQUIRE(lower >= 39.0);
  Awaited awaited = AwaitPush(forecast, *region, 5, /*ring=*/false, 1000);
  CHECK(awaited.status == WaitStatus::kReady);
  CHECK(awaited.ms >= lower - ArrivalForecast::kLeadNs * kNs - 1.0);  // slept until the forecast
  CHECK(awaited.ms < 900.0);                                           // not until the deadline
}

TEST_CASE("trained on waits shorter than its lead, it polls from the start: a silent push is seen") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 0, ArrivalForecast::kSamples);  // each wait: a thread's start
  REQUIRE(forecast.Quartiles()[0] < ArrivalForecast::kLeadNs);
  // A fetch that slept would see each push only at its deadline; one of five must come sooner
  // even on a loaded machine (a push later than the window waits for the deadline too).
  int seen_early = 0;
  for (int i = 0; i < 5; ++i) {  // pushed after the waiter's first checks, inside its window
    Awaited awaited = AwaitPush(forecast, *region, std::chrono::microseconds(40), /*ring=*/false, 200);
    CHECK(awaited.status == WaitStatus::kReady);
    seen_early += awaited.ms < 150.0 ? 1 : 0;
  }
  CHECK(seen_early >= 1);
}

TEST_CASE("waits beyond its horizon are not forecast: a silent push is seen at the deadline") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast(/*horizon_ns=*/1'000'000);
  Train(forecast, *region, 20, 4);
  Awaited awaited = AwaitPush(forecast, *region, 5, /*ring=*/false, 150);
  CHECK(awaited.status == WaitStatus::kReady);
  CHECK(awaited.ms >= 149.0);  // a forecast would have woken it at about 20 ms
}

TEST_CASE("after its polling window it sleeps again: a later silent push waits for the deadline") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 20, 4);
  const double upper = forecast.Quartiles()[1] * kNs;
  REQUIRE(upper < 100.0);
  // The window ends by the upper quartile + 0.1 ms (at most 1 ms of polling): 150 ms is far past it.
  Awaited awaited = AwaitPush(forecast, *region, 150, /*ring=*/false, 300);
  CHECK(awaited.status == WaitStatus::kReady);
  CHECK(awaited.ms >= 299.0);
}

TEST_CASE("a ring before the forecast ends its sleep at once") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 100, 4);
  Awaited awaited = AwaitPush(forecast, *region, 5, /*ring=*/true, 5000);
  CHECK(awaited.status == WaitStatus::kReady);
  CHECK(awaited.ms < 80.0);
}

TEST_CASE("it never waits past its deadline, and a timeout learns nothing") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 40, 4);
  auto quartiles = forecast.Quartiles();
  auto start = Clock::now();
  CHECK(forecast.Await(*region, {0}, 0, Deadline::AfterMs(5)) == WaitStatus::kTimeout);
  double ms = MsSince(start);
  CHECK(ms >= 4.5);
  CHECK(ms < 35.0);
  CHECK(forecast.Quartiles() == quartiles);
}

TEST_CASE("closing the region ends a forecast wait") {
  auto region = dfir::testing::MakeRegion(1, 4);
  ArrivalForecast forecast;
  Train(forecast, *region, 40, 4);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    region->Close();
  });
  auto start = Clock::now();
  CHECK(forecast.Await(*region, {0}, 0, Deadline::AfterMs(5000)) == WaitStatus::kClosed);
  closer.join();
  CHECK(MsSince(start) < 4000);
}

}  // TEST_SUITE
