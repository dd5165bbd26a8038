// Arena (runtime/native/arena.h) and ArenaAllocator (arena_allocator.h): process-shared,
// reference-counted blocks in size classes, free lists, a cache of resident pages.
#include "arena.h"

#include <doctest/doctest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "arena_allocator.h"
#include "helpers.h"
#include "shm.h"

using dfir::rt::Arena;
using dfir::rt::ArenaAllocator;
using dfir::rt::ArenaHeader;
using dfir::rt::ClassCapacity;
using dfir::rt::kBlockHeaderBytes;
using dfir::rt::kMinBlockBytes;
using dfir::rt::kSizeClasses;
using dfir::rt::SharedMemory;
using dfir::rt::SizeClassOf;

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// An arena over its own mapping: the header at 0, the space from one page on.
struct TestArena {
  explicit TestArena(uint64_t space) : memory(SharedMemory::Create("dfir-arena-test", 4096 + space)) {
    Arena::Format(*memory, 0, 4096, 4096 + space);
    arena = std::make_unique<Arena>(*memory, 0);
  }
  ArenaHeader& header() const { return *reinterpret_cast<ArenaHeader*>(memory->base()); }
  std::shared_ptr<SharedMemory> memory;
  std::unique_ptr<Arena> arena;
};

}  // namespace

TEST_SUITE("arena") {

TEST_CASE("size classes: 256 bytes, then four per power of two, wasting at most a quarter") {
  CHECK(SizeClassOf(0) == 0);
  CHECK(SizeClassOf(1) == 0);
  CHECK(SizeClassOf(256) == 0);
  CHECK(ClassCapacity(0) == 256);
  const uint64_t expected[] = {256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280};
  for (int c = 0; c < 10; ++c) CHECK(ClassCapacity(c) == expected[c]);
  CHECK(SizeClassOf(257) == 1);
  CHECK(SizeClassOf(320) == 1);
  CHECK(SizeClassOf(321) == 2);
  CHECK(SizeClassOf(513) == 5);
  for (uint64_t size = 1; size < (uint64_t{1} << 24); size = size * 9 / 8 + 1) {
    int c = SizeClassOf(size);
    REQUIRE(ClassCapacity(c) >= size);
    if (c > 0) {
      REQUIRE(ClassCapacity(c - 1) < size);  // the smallest class that fits
      REQUIRE(ClassCapacity(c) - size < ClassCapacity(c) / 4 + 1);
    }
  }
  for (int c = 0; c < kSizeClasses; ++c) {
    REQUIRE(SizeClassOf(ClassCapacity(c)) == c);
    REQUIRE(ClassCapacity(c) % 64 == 0);
    if (c > 0) REQUIRE(ClassCapacity(c) > ClassCapacity(c - 1));
  }
}

TEST_CASE("an allocation is a 64-byte aligned block of its class holding one reference") {
  TestArena t(1 * kMiB);
  Arena& arena = *t.arena;
  uint64_t block = arena.TryAllocate(1000);
  REQUIRE(block != 0);
  CHECK(arena.Capacity(block) == 1024);
  CHECK(arena.References(block) == 1);
  CHECK(reinterpret_cast<uintptr_t>(arena.Data(block)) % 64 == 0);
  CHECK(arena.Data(block) == t.memory->base() + block + kBlockHeaderBytes);
  CHECK(arena.Contains(arena.Data(block)));
  CHECK_FALSE(arena.Contains(t.memory->base()));
  CHECK(arena.BlockAt(arena.Data(block)) == block);
  CHECK(arena.BlockAt(arena.Data(block) + 1) == 0);
  CHECK(arena.BlockAt(t.memory->base()) == 0);
  CHECK(arena.Covers(block, arena.Data(block), 1024));
  CHECK(arena.Covers(block, arena.Data(block) + 24, 1000));
  CHECK_FALSE(arena.Covers(block, arena.Data(block) + 25, 1000));
  CHECK_FALSE(arena.Covers(block, arena.Data(block), 1025));
  auto stats = arena.Stats();
  CHECK(stats.capacity == 1 * kMiB);
  CHECK(stats.used == 1024 + kBlockHeaderBytes);
  CHECK(stats.live_blocks == 1);
  CHECK(stats.live_bytes == 1024);
  uint64_t second = arena.TryAllocate(10);
  CHECK(second == block + kBlockHeaderBytes + 1024);  // carved right after the first
  CHECK(arena.Capacity(second) == kMinBlockBytes);
}

TEST_CASE("references: Retain adds one, the last Release frees the block for reuse") {
  TestArena t(1 * kMiB);
  Arena& arena = *t.arena;
  uint64_t block = arena.TryAllocate(5000);
  arena.Retain(block);
  arena.Retain(block);
  CHECK(arena.References(block) == 3);
  arena.Release(block);
  arena.Release(block);
  CHECK(arena.References(block) == 1);
  CHECK(arena.Stats().live_blocks == 1);
  arena.Release(block);
  CHECK(arena.References(block) == 0);
  CHECK(arena.Stats().live_blocks == 0);
  CHECK(arena.Stats().live_bytes == 0);
  CHECK(arena.BlockAt(arena.Data(block)) == 0);  // free: no longer a live block
  uint64_t used = arena.Stats().used;
  uint64_t again = arena.TryAllocate(4500);  // same class: the freed block, no new space
  CHECK(again == block);
  CHECK(arena.References(again) == 1);
  CHECK(arena.Stats().used == used);
  uint64_t other = arena.TryAllocate(100);  // another class: carved
  CHECK(other != block);
  CHECK(arena.Stats().used > used);
}

TEST_CASE("free lists are last in, first out per class") {
  TestArena t(1 * kMiB);
  Arena& arena = *t.arena;
  uint64_t a = arena.TryAllocate(300);
  uint64_t b = arena.TryAllocate(300);
  uint64_t c = arena.TryAllocate(300);
  arena.Release(a);
  arena.Release(c);
  CHECK(arena.TryAllocate(300) == c);
  CHECK(arena.TryAllocate(300) == a);
  CHECK(arena.TryAllocate(300) != b);  // b is live: a new block
}

TEST_CASE("a full arena returns 0, then falls back to a free block of up to four larger classes") {
  TestArena t(64 * 1024);
  Arena& arena = *t.arena;
  std::vector<uint64_t> blocks;
  for (uint64_t block; (block = arena.TryAllocate(1024)) != 0;) blocks.push_back(block);
  CHECK(blocks.size() == 64 * 1024 / (1024 + kBlockHeaderBytes));
  while (arena.TryAllocate(256) != 0) {
  }
  CHECK(arena.TryAllocate(100) == 0);
  arena.Release(blocks[0]);  // class 8 (1024) free
  // A request of class 8 - 5 = 3 (448) does not take it; one of class 4 (512) does.
  CHECK(arena.TryAllocate(448) == 0);
  uint64_t fallback = arena.TryAllocate(512);
  CHECK(fallback == blocks[0]);
  CHECK(arena.Capacity(fallback) == 1024);
}

// A known defect (reported, not fixed here): space once carved for a size class stays with that
// class and the four above it. An arena whose space went to small blocks cannot serve a larger
// request even when every block is free again, and Region::AllocateBlock (a put's copy into the
// arena) then waits for room that never comes: with no deadline, for ever. The test states the
// expected behaviour and is marked should_fail until the arena reuses free space across classes.
TEST_CASE("an arena with every block free serves any request that fits its space" * doctest::should_fail()) {
  auto region = dfir::testing::MakeRegion(1, 1, 64 * 1024);
  Arena& arena = region->arena();
  std::vector<uint64_t> small;
  for (uint64_t block; (block = arena.TryAllocate(256)) != 0;) small.push_back(block);
  for (uint64_t block : small) arena.Release(block);
  REQUIRE(arena.Stats().live_blocks == 0);
  CHECK(arena.TryAllocate(8000) != 0);
  CHECK(region->AllocateBlock(8000, dfir::rt::Deadline::AfterMs(50)) != 0);
}

TEST_CASE("requests beyond the largest class are refused") {
  TestArena t(64 * 1024);
  CHECK(t.arena->TryAllocate(uint64_t{1} << 62) == 0);
  CHECK(t.arena->TryAllocate(128 * 1024) == 0);  // larger than the space
}

TEST_CASE("freed blocks of 1 MiB and more keep their pages up to 256 MiB, the others' go first") {
  // 3 blocks of 112 MiB (the class of 100 MiB): freeing all three would cache 336 MiB.
  TestArena t(400 * kMiB);
  Arena& arena = *t.arena;
  uint64_t a = arena.TryAllocate(100 * kMiB);
  uint64_t b = arena.TryAllocate(100 * kMiB);
  uint64_t c = arena.TryAllocate(100 * kMiB);
  REQUIRE(a != 0);
  REQUIRE(b != 0);
  REQUIRE(c != 0);
  CHECK(arena.Capacity(a) == 112 * kMiB);
  uint64_t small = arena.TryAllocate(1000);  // below kDiscardMinBytes: never cached
  arena.Release(small);
  CHECK(arena.Stats().cached_bytes == 0);
  // Markers one MiB into each block: in whole pages (a discard spares the partial first page).
  uint8_t* mark_a = arena.Data(a) + kMiB;
  uint8_t* mark_b = arena.Data(b) + kMiB;
  uint8_t* mark_c = arena.Data(c) + kMiB;
  *mark_a = 0xA1;
  *mark_b = 0xB2;
  *mark_c = 0xC3;
  arena.Release(a);
  arena.Release(b);
  CHECK(arena.Stats().cached_bytes == 224 * kMiB);
  arena.Release(c);  // 336 MiB > 256: one block's pages go back, not the one just freed
  CHECK(arena.Stats().cached_bytes == 224 * kMiB);
  CHECK(*mark_c == 0xC3);
  int discarded = (*mark_a == 0) + (*mark_b == 0);
  CHECK(discarded == 1);
  CHECK((*mark_a == 0xA1 || *mark_b == 0xB2));
  // Reuse takes the block off the cache.
  uint64_t again = arena.TryAllocate(100 * kMiB);
  CHECK(again == c);
  CHECK(arena.Stats().cached_bytes == 112 * kMiB);
}

TEST_CASE("threads allocating and releasing at once leave consistent counts") {
  TestArena t(4 * kMiB);
  Arena& arena = *t.arena;
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int id = 0; id < 4; ++id) {
    threads.emplace_back([&, id] {
      std::vector<uint64_t> mine;
      for (int i = 0; i < 5000; ++i) {
        uint64_t size = 200 + static_cast<uint64_t>((i * 37 + id * 11) % 3000);
        uint64_t block = arena.TryAllocate(size);
        if (block != 0) {
          std::memset(arena.Data(block), id + 1, size);
          mine.push_back(block);
        }
        if (mine.size() > 8 || (block == 0 && !mine.empty())) {
          uint64_t oldest = mine.front();
          mine.erase(mine.begin());
          const uint8_t* data = arena.Data(oldest);
          for (uint64_t k = 0; k < 200; ++k) {
            if (data[k] != id + 1) overlap = true;  // another thread wrote into this block
          }
          arena.Release(oldest);
        }
      }
      for (uint64_t block : mine) arena.Release(block);
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK_FALSE(overlap.load());
  CHECK(arena.Stats().live_blocks == 0);
  CHECK(arena.Stats().live_bytes == 0);
}

TEST_CASE("processes share the arena: a child's Release drops the parent's block, counts stay exact") {
  TestArena t(4 * kMiB);
  Arena& arena = *t.arena;
  uint64_t shared = arena.TryAllocate(2000);
  arena.Retain(shared);  // one reference for the child to give back
  std::vector<pid_t> children;
  for (int id = 0; id < 2; ++id) {
    children.push_back(dfir::testing::StartChild([&, id] {
      if (id == 0) arena.Release(shared);
      for (int i = 0; i < 3000; ++i) {
        uint64_t block = arena.TryAllocate(300 + static_cast<uint64_t>(i % 2000));
        if (block == 0) return 3;
        std::memset(arena.Data(block), id, 64);
        arena.Retain(block);
        arena.Release(block);
        arena.Release(block);
      }
      return 0;
    }));
  }
  for (int i = 0; i < 3000; ++i) {
    uint64_t block = arena.TryAllocate(500 + static_cast<uint64_t>(i % 1000));
    REQUIRE(block != 0);
    arena.Release(block);
  }
  for (pid_t child : children) CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(arena.References(shared) == 1);
  CHECK(arena.Stats().live_blocks == 1);
  arena.Release(shared);
  CHECK(arena.Stats().live_blocks == 0);
}

TEST_CASE("a process that dies holding the arena's lock does not deadlock the others") {
  TestArena t(1 * kMiB);
  pid_t child = dfir::testing::StartChild([&] {
    pthread_mutex_lock(&t.header().lock);
    return 0;  // exits holding it
  });
  REQUIRE(dfir::testing::WaitChild(child) == 0);
  uint64_t block = t.arena->TryAllocate(100);
  CHECK(block != 0);
  t.arena->Release(block);
  CHECK(t.arena->Stats().live_blocks == 0);
}

TEST_CASE("ArenaAllocator: large requests in the arena, small ones and overflow from malloc") {
  auto region = dfir::testing::MakeRegion(1, 1, 1 * kMiB);
  ArenaAllocator allocator(region, 64 * 1024);
  CHECK(allocator.threshold() == 64 * 1024);
  void* small = allocator.Allocate(100);
  CHECK_FALSE(allocator.InArena(small));
  void* big = allocator.Allocate(100 * 1024);
  CHECK(allocator.InArena(big));
  CHECK(region->arena().Stats().live_blocks == 1);
  void* too_big = allocator.Allocate(2 * kMiB);  // no arena room: malloc
  REQUIRE(too_big != nullptr);
  CHECK_FALSE(allocator.InArena(too_big));
  // Reallocate: within the block's capacity it stays; beyond it moves and frees the block.
  uint64_t block = region->arena().BlockAt(big);
  CHECK(allocator.Reallocate(big, region->arena().Capacity(block)) == big);
  std::memset(big, 0x5A, 100 * 1024);
  void* moved = allocator.Reallocate(big, 200 * 1024);
  REQUIRE(moved != nullptr);
  CHECK(moved != big);
  CHECK(allocator.InArena(moved));
  CHECK(static_cast<uint8_t*>(moved)[100 * 1024 - 1] == 0x5A);
  CHECK(region->arena().Stats().live_blocks == 1);
  allocator.Free(moved);
  allocator.Free(small);
  allocator.Free(too_big);
  allocator.Free(nullptr);
  CHECK(region->arena().Stats().live_blocks == 0);
  auto* zeroed = static_cast<uint8_t*>(allocator.AllocateZeroed(1024, 128));
  REQUIRE(allocator.InArena(zeroed));
  bool all_zero = true;
  for (int i = 0; i < 1024 * 128; ++i) all_zero = all_zero && zeroed[i] == 0;
  CHECK(all_zero);
  allocator.Free(zeroed);
  CHECK(allocator.AllocateZeroed(SIZE_MAX / 2, 4) == nullptr);  // count * size overflows
}

}  // TEST_SUITE
