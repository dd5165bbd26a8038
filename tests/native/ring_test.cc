// Ring (runtime/native/ring.h): a bounded Vyukov MPMC FIFO in caller-given memory.
#include "ring.h"

#include <doctest/doctest.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "helpers.h"
#include "shm.h"

using dfir::rt::Ring;
using dfir::rt::RingHeader;
using dfir::rt::SharedMemory;

namespace {

// Zero-filled, 64-byte aligned private memory for a ring.
struct RingMemory {
  RingMemory(uint32_t capacity, size_t payload) : size(Ring::Footprint(capacity, payload)) {
    memory = static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
    std::memset(memory, 0, size);
  }
  ~RingMemory() { std::free(memory); }
  uint8_t* memory;
  size_t size;
};

bool Push(Ring& ring, uint64_t value) {
  return ring.TryPush([&](uint8_t* slot) { std::memcpy(slot, &value, sizeof value); });
}

bool Pop(Ring& ring, uint64_t& value) {
  return ring.TryPop([&](const uint8_t* slot) { std::memcpy(&value, slot, sizeof value); });
}

// A producer's message: its number in the high bits, its sequence in the low ones.
uint64_t Tag(uint64_t producer, uint64_t sequence) { return (producer << 40) | sequence; }

// Pushes producer `p`'s messages 0 .. each - 1, retrying while the ring is full.
void ProduceTagged(Ring& ring, uint64_t p, uint64_t each) {
  for (uint64_t i = 0; i < each; ++i) {
    while (!Push(ring, Tag(p, i))) sched_yield();
  }
}

// What one consumer of `producers` x `each` tagged messages saw.
struct Consumed {
  std::vector<uint64_t> per_producer;  // messages received from each producer
  bool in_order = true;                // each producer's in the order it pushed them
};

// Pops until every message arrived or a minute passed.
Consumed ConsumeTagged(Ring& ring, uint64_t producers, uint64_t each) {
  Consumed consumed;
  consumed.per_producer.assign(producers, 0);
  uint64_t received = 0;
  auto start = std::chrono::steady_clock::now();
  while (received < producers * each && dfir::testing::MsSince(start) < 60000) {
    uint64_t value = 0;
    if (!Pop(ring, value)) {
      sched_yield();
      continue;
    }
    uint64_t producer = value >> 40;
    if (producer >= producers || (value & ((uint64_t{1} << 40) - 1)) != consumed.per_producer[producer]) {
      consumed.in_order = false;
    }
    if (producer < producers) ++consumed.per_producer[producer];
    ++received;
  }
  return consumed;
}

}  // namespace

TEST_SUITE("ring") {

TEST_CASE("footprint: a header and capacity + 1 slots of 16-byte aligned strides") {
  CHECK(Ring::Stride(504) == 512);  // a MessageRecord and its sequence number
  CHECK(Ring::Stride(8) == 16);
  CHECK(Ring::Stride(1) == 16);
  CHECK(Ring::Footprint(4, 8) == sizeof(RingHeader) + 5 * 16);
  CHECK(sizeof(RingHeader) % 64 == 0);
}

TEST_CASE("create formats zero-filled memory as an empty ring, writing its header only") {
  RingMemory memory(4, 8);
  Ring ring = Ring::Create(memory.memory, 4, 8, /*consumer_bell=*/3, /*kind=*/2);
  CHECK(ring.capacity() == 4);
  CHECK(ring.header().slots == 5);
  CHECK(ring.header().stride == 16);
  CHECK(ring.header().consumer_bell == 3);
  CHECK(ring.header().kind == 2);
  CHECK(ring.size() == 0);
  CHECK(ring.Ready(10) == 0);
  CHECK(ring.has_room());
  CHECK(ring.Peek(0) == nullptr);
  uint64_t value = 0;
  CHECK_FALSE(Pop(ring, value));
  for (size_t i = sizeof(RingHeader); i < memory.size; ++i) REQUIRE(memory.memory[i] == 0);
  // Another view of the same memory sees the same ring.
  Ring view(memory.memory);
  CHECK(view.capacity() == 4);
}

TEST_CASE("FIFO order, full at capacity, empty after the last pop") {
  RingMemory memory(4, 8);
  Ring ring = Ring::Create(memory.memory, 4, 8, 0, 0);
  for (uint64_t i = 1; i <= 4; ++i) REQUIRE(Push(ring, i * 11));
  CHECK(ring.size() == 4);
  CHECK(ring.Ready(100) == 4);
  CHECK(ring.Ready(2) == 2);
  CHECK_FALSE(ring.has_room());
  CHECK_FALSE(Push(ring, 99));  // full: the push fails and changes nothing
  CHECK(ring.size() == 4);
  uint64_t peeked = 0;
  std::memcpy(&peeked, ring.Peek(2), sizeof peeked);
  CHECK(peeked == 33);
  CHECK(ring.Peek(4) == nullptr);
  for (uint64_t i = 1; i <= 4; ++i) {
    uint64_t value = 0;
    REQUIRE(Pop(ring, value));
    CHECK(value == i * 11);
  }
  uint64_t value = 0;
  CHECK_FALSE(Pop(ring, value));
  CHECK(ring.size() == 0);
  CHECK(ring.pops() == 4);
  CHECK(ring.has_room());
}

// A process that dies in the middle of a push or a pop: the fill or read never returns.
struct Died {};

TEST_CASE("a push that died halfway stops the ring until its slot is published in its place") {
  RingMemory memory(4, 8);
  Ring ring = Ring::Create(memory.memory, 4, 8, 0, 0);
  REQUIRE(Push(ring, 1));
  CHECK_THROWS_AS(ring.TryPush([](uint8_t*) { throw Died{}; }), Died);
  REQUIRE(Push(ring, 3));
  uint64_t value = 0;
  REQUIRE(Pop(ring, value));
  CHECK(value == 1);
  CHECK_FALSE(Pop(ring, value));  // the claimed slot was never published: the ring is stuck
  CHECK(ring.Unpublished() == std::vector<uint64_t>{1});
  const uint64_t stand_in = 2;
  CHECK(ring.PublishAt({1}, &stand_in, sizeof stand_in) == 1);
  CHECK(ring.PublishAt({1}, &stand_in, sizeof stand_in) == 0);  // published once
  CHECK(ring.Unpublished().empty());
  for (uint64_t expected : {2, 3}) {
    REQUIRE(Pop(ring, value));
    CHECK(value == expected);
  }
}

TEST_CASE("a pop that died halfway stops the producers at its slot until it is freed") {
  RingMemory memory(2, 8);
  Ring ring = Ring::Create(memory.memory, 2, 8, 0, 0);
  REQUIRE(Push(ring, 1));
  REQUIRE(Push(ring, 2));
  CHECK_THROWS_AS(ring.TryPop([](const uint8_t*) { throw Died{}; }), Died);
  uint64_t value = 0;
  REQUIRE(Pop(ring, value));
  CHECK(value == 2);
  REQUIRE(Push(ring, 3));        // the slot no pop claimed is free
  CHECK_FALSE(Push(ring, 4));    // the next one is the slot the dead pop never freed
  CHECK(ring.FreeUnreleased() == 1);
  CHECK(ring.FreeUnreleased() == 0);
  REQUIRE(Push(ring, 4));
  for (uint64_t expected : {3, 4}) {
    REQUIRE(Pop(ring, value));
    CHECK(value == expected);
  }
}

TEST_CASE("clear empties a ring nobody uses") {
  RingMemory memory(4, 8);
  Ring ring = Ring::Create(memory.memory, 4, 8, 0, 0);
  for (uint64_t i = 0; i < 6; ++i) {
    REQUIRE(Push(ring, i));
    uint64_t value = 0;
    if (i % 2 == 0) REQUIRE(Pop(ring, value));
  }
  ring.Clear();
  CHECK(ring.size() == 0);
  uint64_t value = 0;
  CHECK_FALSE(Pop(ring, value));
  for (uint64_t i = 0; i < 4; ++i) REQUIRE(Push(ring, 10 + i));
  REQUIRE(Pop(ring, value));
  CHECK(value == 10);
}

TEST_CASE("a ring of capacity 1 alternates between full and empty") {
  RingMemory memory(1, 8);
  Ring ring = Ring::Create(memory.memory, 1, 8, 0, 0);
  for (uint64_t i = 0; i < 100; ++i) {
    REQUIRE(Push(ring, i));
    REQUIRE_FALSE(Push(ring, i));
    uint64_t value = 0;
    REQUIRE(Pop(ring, value));
    REQUIRE(value == i);
    REQUIRE_FALSE(Pop(ring, value));
  }
}

TEST_CASE("positions wrap around the slots many times in FIFO order") {
  RingMemory memory(3, 8);
  Ring ring = Ring::Create(memory.memory, 3, 8, 0, 0);
  uint64_t next_push = 0;
  uint64_t next_pop = 0;
  for (int round = 0; round < 1000; ++round) {
    int pushes = 1 + round % 3;
    for (int i = 0; i < pushes && Push(ring, next_push); ++i) ++next_push;
    int pops = 1 + (round * 7) % 3;
    for (int i = 0; i < pops; ++i) {
      uint64_t value = 0;
      if (!Pop(ring, value)) break;
      REQUIRE(value == next_pop);
      ++next_pop;
    }
    REQUIRE(ring.size() == next_push - next_pop);
    REQUIRE(ring.size() <= 3);
  }
  CHECK(next_pop > 1000);
}

TEST_CASE("payloads keep every byte of a wide slot") {
  RingMemory memory(2, 504);
  Ring ring = Ring::Create(memory.memory, 2, 504, 0, 0);
  std::vector<uint8_t> sent = dfir::testing::Pattern(504, 5);
  for (int round = 0; round < 5; ++round) {
    REQUIRE(ring.TryPush([&](uint8_t* slot) { std::memcpy(slot, sent.data(), sent.size()); }));
    std::vector<uint8_t> got(504);
    REQUIRE(ring.TryPop([&](const uint8_t* slot) { std::memcpy(got.data(), slot, got.size()); }));
    CHECK(got == sent);
  }
}

TEST_CASE("multiple producer threads: every message arrives once, each producer's in order") {
  constexpr int kProducers = 4;
  constexpr uint64_t kEach = 5000;
  RingMemory memory(8, 8);  // small: producers often find it full
  Ring ring = Ring::Create(memory.memory, 8, 8, 0, 0);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) producers.emplace_back([&ring, p] { ProduceTagged(ring, p, kEach); });
  Consumed consumed = ConsumeTagged(ring, kProducers, kEach);
  for (std::thread& producer : producers) producer.join();
  CHECK(consumed.in_order);
  CHECK(consumed.per_producer == std::vector<uint64_t>(kProducers, kEach));
  uint64_t value = 0;
  CHECK_FALSE(Pop(ring, value));
}

TEST_CASE("multiple producers and consumers: each message is taken exactly once") {
  constexpr int kThreads = 3;
  constexpr uint64_t kEach = 5000;
  RingMemory memory(16, 8);
  Ring ring = Ring::Create(memory.memory, 16, 8, 0, 0);
  std::atomic<uint64_t> taken{0};
  std::vector<std::vector<uint64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int p = 0; p < kThreads; ++p) threads.emplace_back([&ring, p] { ProduceTagged(ring, p, kEach); });
  for (int c = 0; c < kThreads; ++c) {
    threads.emplace_back([&, c] {
      while (taken.load() < kThreads * kEach) {
        uint64_t value = 0;
        if (Pop(ring, value)) {
          seen[c].push_back(value);
          taken.fetch_add(1);
        } else {
          sched_yield();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<uint64_t> all;
  size_t total = 0;
  bool consumer_order = true;
  for (const std::vector<uint64_t>& values : seen) {
    total += values.size();
    all.insert(values.begin(), values.end());
    // One consumer sees each producer's messages in the order they were pushed.
    std::vector<int64_t> last(kThreads, -1);
    for (uint64_t value : values) {
      int64_t sequence = static_cast<int64_t>(value & ((uint64_t{1} << 40) - 1));
      if (sequence <= last[value >> 40]) consumer_order = false;
      last[value >> 40] = sequence;
    }
  }
  CHECK(total == kThreads * kEach);
  CHECK(all.size() == kThreads * kEach);
  CHECK(consumer_order);
}

TEST_CASE("producer processes over a shared mapping: every message arrives once, in order") {
  constexpr int kProducers = 3;
  constexpr uint64_t kEach = 5000;
  auto memory = SharedMemory::Create("dfir-ring-test", Ring::Footprint(8, 8));
  Ring ring = Ring::Create(memory->base(), 8, 8, 0, 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProducers; ++p) {
    children.push_back(dfir::testing::StartChild([&ring, p] {
      ProduceTagged(ring, p, kEach);
      return 0;
    }));
  }
  Consumed consumed = ConsumeTagged(ring, kProducers, kEach);
  for (pid_t child : children) CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(consumed.in_order);
  CHECK(consumed.per_producer == std::vector<uint64_t>(kProducers, kEach));
  CHECK(ring.size() == 0);
}

TEST_CASE("an OVERWRITE ring always has room; dropping the oldest is counted and frees its slot") {
  RingMemory memory(3, 8);
  Ring ring = Ring::Create(memory.memory, 3, 8, 0, 0);
  CHECK_FALSE(ring.overwrites());
  ring.SetOverwrite(true);
  CHECK(ring.overwrites());
  for (uint64_t i = 1; i <= 3; ++i) REQUIRE(Push(ring, i));
  CHECK(ring.has_room());         // full, but a push makes room by dropping
  CHECK(ring.has_room_for(100));  // whatever the count
  CHECK_FALSE(Push(ring, 4));     // the ring itself still refuses: the dropper makes room first
  uint64_t dropped = 0;
  REQUIRE(ring.TryDropOldest([&](const uint8_t* slot) { std::memcpy(&dropped, slot, sizeof dropped); }));
  CHECK(dropped == 1);
  CHECK(ring.dropped() == 1);
  REQUIRE(Push(ring, 4));
  uint64_t value = 0;
  for (uint64_t expected : {2, 3, 4}) {
    REQUIRE(Pop(ring, value));
    CHECK(value == expected);
  }
  CHECK_FALSE(ring.TryDropOldest([](const uint8_t*) {}));  // empty: nothing to drop, nothing counted
  CHECK(ring.dropped() == 1);
}

}  // TEST_SUITE
