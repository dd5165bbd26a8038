// Region (runtime/native/region.h): one shared mapping of doorbells, channels, worker slots and
// the arena, and the waits on them.
#include "region.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "helpers.h"

using dfir::rt::ChannelKind;
using dfir::rt::ChannelSpec;
using dfir::rt::Deadline;
using dfir::rt::Region;
using dfir::rt::RegionLayout;
using dfir::rt::Ring;
using dfir::rt::RuntimeError;
using dfir::rt::WaitStatus;
using dfir::testing::MakeRegion;
using dfir::testing::MsSince;
using Clock = std::chrono::steady_clock;

namespace {

bool PushValue(Region& region, uint32_t channel, uint64_t value) {
  return region.ring(channel).TryPush([&](uint8_t* slot) { std::memcpy(slot, &value, sizeof value); });
}

uint64_t PopValue(Region& region, uint32_t channel) {
  uint64_t value = 0;
  if (!region.ring(channel).TryPop([&](const uint8_t* slot) { std::memcpy(&value, slot, sizeof value); })) {
    throw std::runtime_error("empty channel");
  }
  return value;
}

// Pushes `value` to `channel` and rings its consumer, as producers do.
void Send(Region& region, uint32_t channel, uint64_t value) {
  REQUIRE(PushValue(region, channel, value));
  dfir::rt::NotifyAll(region.bell(region.ring(channel).header().consumer_bell));
}

// How many pages of [begin, begin + size) are resident (page-aligned begin).
size_t ResidentPages(const uint8_t* begin, size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((size + page - 1) / page);
  if (mincore(const_cast<uint8_t*>(begin), size, pages.data()) != 0) throw std::runtime_error("mincore failed");
  size_t resident = 0;
  for (unsigned char flags : pages) resident += flags & 1;
  return resident;
}

}  // namespace

TEST_SUITE("region") {

TEST_CASE("a region holds the layout's doorbells, channels, worker slots and arena") {
  RegionLayout layout;
  layout.bells = 3;
  layout.channels = {ChannelSpec{ChannelKind::kShared, 4, 0}, ChannelSpec{ChannelKind::kLocal, 16, 2}};
  layout.workers = 2;
  layout.arena_bytes = 1 << 20;
  auto region = Region::Create(layout, "dfir-region-test");
  CHECK(region->bell_count() == 3);
  CHECK(region->channel_count() == 2);
  CHECK(region->worker_count() == 2);
  CHECK(region->kind(0) == ChannelKind::kShared);
  CHECK(region->kind(1) == ChannelKind::kLocal);
  CHECK(region->ring(0).capacity() == 4);
  CHECK(region->ring(0).header().stride == Ring::Stride(sizeof(dfir::rt::MessageRecord)));
  CHECK(region->ring(1).capacity() == 16);
  CHECK(region->ring(1).header().stride == Ring::Stride(sizeof(uintptr_t)));
  CHECK(region->ring(1).header().consumer_bell == 2);
  CHECK(region->arena().space() == (1 << 20));
  CHECK(region->worker(1).pid.load() == 0);
  CHECK(region->worker(1).running_node.load() == -1);
  CHECK(region->LastWords(0).empty());
  CHECK_FALSE(region->closing());
  // The parts do not overlap: the channels and the arena lie inside the mapping, in order.
  CHECK(reinterpret_cast<uint8_t*>(&region->ring(0).header()) < reinterpret_cast<uint8_t*>(&region->ring(1).header()));
  uint64_t block = region->arena().TryAllocate(100);
  CHECK(region->arena().Data(block) > reinterpret_cast<uint8_t*>(&region->worker(1)));
  CHECK(region->arena().Data(block) < region->base() + region->memory().size());
}

TEST_CASE("out-of-range doorbells, channels and workers and bad layouts are RuntimeErrors") {
  auto region = MakeRegion(2, 4);
  CHECK_THROWS_WITH_AS(region->bell(2), "doorbell 2 is out of range; the region has 2", RuntimeError);
  CHECK_THROWS_WITH_AS(region->ring(5), "channel 5 is out of range; the region has 2", RuntimeError);
  CHECK_THROWS_WITH_AS(region->worker(1), "worker 1 is out of range; the region has 1", RuntimeError);
  RegionLayout zero;
  zero.bells = 1;
  zero.channels = {ChannelSpec{ChannelKind::kShared, 0, 0}};
  CHECK_THROWS_WITH_AS(Region::Create(zero, "bad"), "channel 0 has capacity 0; expected >= 1", RuntimeError);
  RegionLayout unrung;
  unrung.bells = 1;
  unrung.channels = {ChannelSpec{ChannelKind::kShared, 1, 0}, ChannelSpec{ChannelKind::kShared, 1, 1}};
  CHECK_THROWS_WITH_AS(Region::Create(unrung, "bad"), "channel 1 rings doorbell 1 but the region has 1", RuntimeError);
}

TEST_CASE("last words are kept up to 239 bytes") {
  auto region = MakeRegion(1, 1, 1 << 20, ChannelKind::kShared, 2);
  region->SetLastWords(1, "MemoryError in node 'a'");
  CHECK(region->LastWords(1) == "MemoryError in node 'a'");
  CHECK(region->LastWords(0).empty());
  region->SetLastWords(0, std::string(500, 'x'));
  CHECK(region->LastWords(0) == std::string(dfir::rt::kLastWordsBytes - 1, 'x'));
  region->SetLastWords(0, "short");  // a shorter text replaces a longer one entirely
  CHECK(region->LastWords(0) == "short");
}

TEST_CASE("WaitForMessages: ready at once, a timeout, a producer thread's ring") {
  auto region = MakeRegion(2, 4);
  REQUIRE(PushValue(*region, 0, 1));
  REQUIRE(PushValue(*region, 1, 2));
  CHECK(region->WaitForMessages({0, 1}, 0, Deadline::AfterMs(0)) == WaitStatus::kReady);
  PopValue(*region, 1);
  auto start = Clock::now();
  CHECK(region->WaitForMessages({0, 1}, 0, Deadline::AfterMs(30)) == WaitStatus::kTimeout);
  CHECK(MsSince(start) >= 29.0);
  // Channel 1's producer rings its consumer's doorbell; the consumer of {0, 1} sleeps on bell 1.
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Send(*region, 1, 3);
  });
  start = Clock::now();
  CHECK(region->WaitForMessages({0, 1}, 1, Deadline::AfterMs(20000)) == WaitStatus::kReady);
  CHECK(MsSince(start) < 15000);
  producer.join();
}

TEST_CASE("WaitForRoom: a full channel gets room when its consumer pops and notifies") {
  auto region = MakeRegion(1, 2);
  REQUIRE(PushValue(*region, 0, 1));
  CHECK(region->WaitForRoom({0}, Deadline::AfterMs(0)) == WaitStatus::kReady);
  REQUIRE(PushValue(*region, 0, 2));
  CHECK(region->WaitForRoom({0}, Deadline::AfterMs(20)) == WaitStatus::kTimeout);
  std::thread consumer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(PopValue(*region, 0) == 1);
    region->ring(0).NotifySpace();
  });
  CHECK(region->WaitForRoom({0}, Deadline::AfterMs(20000)) == WaitStatus::kReady);
  consumer.join();
  CHECK(region->ring(0).has_room());
}

TEST_CASE("WaitForChange: waits for a count of messages other than the stalled one") {
  auto region = MakeRegion(2, 8);
  CHECK(region->WaitForChange({0, 1}, 0, -1, Deadline::AfterMs(10)) == WaitStatus::kTimeout);
  REQUIRE(PushValue(*region, 0, 1));
  REQUIRE(PushValue(*region, 1, 1));
  CHECK(region->WaitForChange({0, 1}, 0, -1, Deadline::AfterMs(0)) == WaitStatus::kReady);
  CHECK(region->WaitForChange({0, 1}, 0, 3, Deadline::AfterMs(0)) == WaitStatus::kReady);
  CHECK(region->WaitForChange({0, 1}, 0, 2, Deadline::AfterMs(10)) == WaitStatus::kTimeout);
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Send(*region, 0, 2);
  });
  CHECK(region->WaitForChange({0, 1}, 0, 2, Deadline::AfterMs(20000)) == WaitStatus::kReady);
  producer.join();
}

TEST_CASE("Close wakes every waiter and later waits return kClosed") {
  auto region = MakeRegion(2, 1, 4096);
  REQUIRE(PushValue(*region, 1, 1));  // channel 1 full
  while (region->arena().TryAllocate(100) != 0) {  // arena full
  }
  std::atomic<int> closed{0};
  std::vector<std::thread> waiters;
  waiters.emplace_back([&] { closed += region->WaitForMessages({0}, 0, Deadline::Forever()) == WaitStatus::kClosed; });
  waiters.emplace_back([&] { closed += region->WaitForRoom({1}, Deadline::Forever()) == WaitStatus::kClosed; });
  waiters.emplace_back([&] { closed += region->WaitForClose(1, Deadline::Forever()) == WaitStatus::kClosed; });
  waiters.emplace_back([&] { closed += region->AllocateBlock(100, Deadline::Forever()) == 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  region->Close();
  for (std::thread& waiter : waiters) waiter.join();
  CHECK(closed.load() == 4);
  CHECK(region->closing());
  CHECK(region->WaitForMessages({0}, 0, Deadline::Forever()) == WaitStatus::kClosed);
  CHECK(region->WaitForClose(0, Deadline::AfterMs(0)) == WaitStatus::kClosed);
  // What is ready still counts as ready.
  CHECK(region->WaitForMessages({1}, 1, Deadline::Forever()) == WaitStatus::kReady);
}

TEST_CASE("WaitForClose times out while the region is open") {
  auto region = MakeRegion(1, 1);
  auto start = Clock::now();
  CHECK(region->WaitForClose(0, Deadline::AfterMs(20)) == WaitStatus::kTimeout);
  CHECK(MsSince(start) >= 19.0);
}

TEST_CASE("AllocateBlock waits for room, and refuses what never fits") {
  auto region = MakeRegion(1, 1, 8192);
  CHECK_THROWS_WITH_AS(region->AllocateBlock(8192, Deadline::Forever()),
                       "a message body of 8192 bytes does not fit in the tensor arena of 8192 bytes", RuntimeError);
  uint64_t first = region->AllocateBlock(4000, Deadline::AfterMs(0));
  REQUIRE(first != 0);
  CHECK(region->AllocateBlock(4000, Deadline::AfterMs(20)) == 0);  // full: times out
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    region->arena().Release(first);
  });
  uint64_t second = region->AllocateBlock(4000, Deadline::AfterMs(20000));
  releaser.join();
  CHECK(second == first);  // the freed block, reused
}

TEST_CASE("SetConsumerBell moves the doorbell producers ring") {
  auto region = MakeRegion(3, 4);
  region->SetConsumerBell({0, 1}, 2);
  CHECK(region->ring(0).header().consumer_bell == 2);
  CHECK(region->ring(1).header().consumer_bell == 2);
  CHECK(region->ring(2).header().consumer_bell == 2);
  CHECK_THROWS_AS(region->SetConsumerBell({0}, 3), RuntimeError);
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Send(*region, 1, 7);
  });
  CHECK(region->WaitForMessages({1}, 2, Deadline::AfterMs(20000)) == WaitStatus::kReady);
  producer.join();
}

TEST_CASE("a forked worker shares the region: its messages arrive and Close wakes it") {
  auto region = MakeRegion(2, 4, 1 << 20, ChannelKind::kShared, 1);
  constexpr uint64_t kMessages = 1000;
  pid_t child = dfir::testing::StartChild([&] {
    region->worker(0).pid.store(getpid());
    for (uint64_t i = 0; i < kMessages; ++i) {
      while (!PushValue(*region, 0, i)) {
        if (region->WaitForRoom({0}, Deadline::AfterMs(20000)) != WaitStatus::kReady) return 1;
      }
      dfir::rt::NotifyAll(region->bell(0));
    }
    region->SetLastWords(0, "done");
    return region->WaitForClose(1, Deadline::AfterMs(20000)) == WaitStatus::kClosed ? 0 : 2;
  });
  bool in_order = true;
  for (uint64_t i = 0; i < kMessages; ++i) {
    REQUIRE(region->WaitForMessages({0}, 0, Deadline::AfterMs(20000)) == WaitStatus::kReady);
    in_order = in_order && PopValue(*region, 0) == i;
    region->ring(0).NotifySpace();
  }
  CHECK(in_order);
  CHECK(region->worker(0).pid.load() == child);
  auto start = Clock::now();
  while (region->LastWords(0) != "done" && MsSince(start) < 20000) sched_yield();
  region->Close();
  CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(region->LastWords(0) == "done");
}

TEST_CASE("shared memory: an anonymous memfd named in /proc/self/maps, nothing under /dev/shm") {
  auto memory = dfir::rt::SharedMemory::Create("dfir-shm-test-name", 1 << 20);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool named = false;
  while (std::getline(maps, line)) named = named || line.find("/memfd:dfir-shm-test-name") != std::string::npos;
  CHECK(named);
  CHECK(access("/dev/shm/dfir-shm-test-name", F_OK) != 0);
  CHECK(memory->size() == (1 << 20));
  CHECK(memory->base()[12345] == 0);  // zero-filled
}

TEST_CASE("shared memory: Discard gives whole pages back in every process; they read as zeros") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto memory = dfir::rt::SharedMemory::Create("dfir-shm-test", 8 * page);
  std::memset(memory->base(), 0x7F, 8 * page);
  pid_t child = dfir::testing::StartChild([&] {
    memory->Discard(page + 1, 3 * page);  // rounded inwards: pages 2 and 3
    return 0;
  });
  REQUIRE(dfir::testing::WaitChild(child) == 0);
  CHECK(ResidentPages(memory->base(), 8 * page) == 6);  // before reading the holes faults them in
  CHECK(memory->base()[page + 1] == 0x7F);  // the partial first page stays
  CHECK(memory->base()[2 * page] == 0);
  CHECK(memory->base()[4 * page - 1] == 0);
  CHECK(memory->base()[4 * page] == 0x7F);
}

TEST_CASE("ForkEpoch changes in a forked child only") {
  const uint64_t epoch = dfir::rt::ForkEpoch();
  pid_t child = dfir::testing::StartChild([&] { return dfir::rt::ForkEpoch() != epoch ? 0 : 1; });
  CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(dfir::rt::ForkEpoch() == epoch);
}

TEST_CASE("making a region writes its headers only: a ring's slots are touched when first used") {
  auto region = MakeRegion(1, 65536);  // 32 MiB of 512-byte slots
  Ring ring = region->ring(0);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uint8_t* header = reinterpret_cast<const uint8_t*>(&ring.header());
  const uintptr_t first_slot = reinterpret_cast<uintptr_t>(header) + sizeof(dfir::rt::RingHeader);
  const uint8_t* slots = reinterpret_cast<const uint8_t*>((first_slot + page - 1) / page * page);
  const size_t slot_bytes = size_t{65536} * ring.header().stride - page;
  CHECK(ResidentPages(slots, slot_bytes) == 0);
  for (uint64_t i = 0; i < 16; ++i) REQUIRE(PushValue(*region, 0, i));  // 16 slots: 2 pages
  CHECK(ResidentPages(slots, slot_bytes) <= 3);
  CHECK(PopValue(*region, 0) == 0);
}

}  // TEST_SUITE
