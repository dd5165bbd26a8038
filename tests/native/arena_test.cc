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
using dfir::rt::BlockHeader;
using dfir::rt::ClassCapacity;
using dfir::rt::FloorClassOf;
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
  BlockHeader& block(uint64_t offset) const { return *reinterpret_cast<BlockHeader*>(memory->base() + offset); }
  // Walks the blocks end to end from the start of the space to the bump pointer, checking that
  // each knows the one before it; returns how many there are.
  size_t Walk() const {
    size_t count = 0;
    uint64_t previous = 0;
    for (uint64_t offset = header().begin; offset < header().bump;
         offset += kBlockHeaderBytes + block(offset).capacity) {
      REQUIRE(block(offset).prev_block == previous);
      previous = offset;
      ++count;
    }
    CHECK(previous == header().last_block);
    return count;
  }
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

TEST_CASE("a full arena returns 0, then takes a free block up to four classes larger whole, or splits a larger one") {
  TestArena t(64 * 1024);
  Arena& arena = *t.arena;
  std::vector<uint64_t> blocks;
  for (uint64_t block; (block = arena.TryAllocate(1024)) != 0;) blocks.push_back(block);
  CHECK(blocks.size() == 64 * 1024 / (1024 + kBlockHeaderBytes));
  while (arena.TryAllocate(256) != 0) {
  }
  CHECK(arena.TryAllocate(100) == 0);
  arena.Release(blocks[0]);  // class 8 (1024) free
  // A request of class 4 (512) takes it whole.
  uint64_t fallback = arena.TryAllocate(512);
  CHECK(fallback == blocks[0]);
  CHECK(arena.Capacity(fallback) == 1024);
  arena.Release(fallback);
  // One of class 8 - 5 = 3 (448) takes its front; the rest (1024 - 448 - 64 = 512) is a free
  // block of class 4 that the next request of that class takes.
  uint64_t front = arena.TryAllocate(448);
  CHECK(front == blocks[0]);
  CHECK(arena.Capacity(front) == 448);
  uint64_t rest = arena.TryAllocate(500);
  CHECK(rest == blocks[0] + kBlockHeaderBytes + 448);
  CHECK(arena.Capacity(rest) == 512);
  CHECK(arena.TryAllocate(100) == 0);
  CHECK(arena.Stats().live_blocks == blocks.size() + 1);
  // Both freed, they merge back into one block of 1024 when a request needs it.
  arena.Release(front);
  arena.Release(rest);
  uint64_t whole = arena.TryAllocate(1000);
  CHECK(whole == blocks[0]);
  CHECK(arena.Capacity(whole) == 1024);
}

// Space carved for small blocks serves a larger request once they are free again (merged), so
// Region::AllocateBlock does not wait for room that never comes.
TEST_CASE("an arena with every block free serves any request that fits its space") {
  auto region = dfir::testing::MakeRegion(1, 1, 64 * 1024);
  Arena& arena = region->arena();
  std::vector<uint64_t> small;
  for (uint64_t block; (block = arena.TryAllocate(256)) != 0;) small.push_back(block);
  for (uint64_t block : small) arena.Release(block);
  REQUIRE(arena.Stats().live_blocks == 0);
  CHECK(arena.TryAllocate(8000) != 0);
  CHECK(region->AllocateBlock(8000, dfir::rt::Deadline::AfterMs(50)) != 0);
}

TEST_CASE("free blocks merge only when a request finds no room; those next to live blocks stay apart") {
  TestArena t(16 * 1024);
  Arena& arena = *t.arena;
  std::vector<uint64_t> blocks;
  for (uint64_t block; (block = arena.TryAllocate(256)) != 0;) blocks.push_back(block);
  REQUIRE(blocks.size() == 16 * 1024 / (256 + kBlockHeaderBytes));  // 51, 64 bytes left over
  // Free every block but every tenth: runs of nine free blocks between live ones.
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % 10 != 0) arena.Release(blocks[i]);
  }
  // The freed ones serve their class as they are, last freed first: no merging on that path.
  uint64_t again = arena.TryAllocate(200);
  CHECK(again == blocks[49]);
  arena.Release(again);
  // A run of nine is 9 * 256 + 8 * 64 = 2816 bytes: a request of 2560 fits one, 3000 none.
  CHECK(arena.TryAllocate(3000) == 0);
  uint64_t large = arena.TryAllocate(2560);
  REQUIRE(large != 0);
  CHECK(arena.Capacity(large) >= 2560);
  CHECK((large - blocks[1]) % (10 * (256 + kBlockHeaderBytes)) == 0);  // the start of a run
  // Freeing the live ones lets everything merge: the whole carved space serves one request.
  for (size_t i = 0; i < blocks.size(); i += 10) arena.Release(blocks[i]);
  arena.Release(large);
  CHECK(arena.Stats().live_blocks == 0);
  uint64_t all = arena.TryAllocate(12 * 1024);
  CHECK(all == blocks[0]);
  CHECK(arena.BlockAt(arena.Data(blocks[1])) == 0);  // a merged header is no block
  arena.Release(all);
}

TEST_CASE("mixed sizes at random: blocks never overlap, and once all are free the space serves one block") {
  TestArena t(1 * kMiB);
  Arena& arena = *t.arena;
  std::vector<uint64_t> live;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int round = 0; round < 20000; ++round) {
    if (!live.empty() && (next() % 3 == 0 || live.size() > 200)) {
      size_t index = next() % live.size();
      uint64_t block = live[index];
      const uint8_t* data = arena.Data(block);
      REQUIRE(data[0] == static_cast<uint8_t>(block >> 6));
      REQUIRE(data[arena.Capacity(block) - 1] == static_cast<uint8_t>(block >> 6));
      arena.Release(block);
      live[index] = live.back();
      live.pop_back();
      continue;
    }
    uint64_t size = 100 + next() % (next() % 4 == 0 ? 60000 : 3000);
    uint64_t block = arena.TryAllocate(size);
    if (block == 0) continue;
    REQUIRE(arena.Capacity(block) >= size);
    REQUIRE(block + kBlockHeaderBytes + arena.Capacity(block) <= 4096 + 1 * kMiB);
    std::memset(arena.Data(block), static_cast<uint8_t>(block >> 6), arena.Capacity(block));
    live.push_back(block);
  }
  CHECK(t.header().merged_once == 1);  // the space ran out: blocks were merged and split
  t.Walk();
  std::set<std::pair<uint64_t, uint64_t>> spans;
  for (uint64_t block : live) spans.emplace(block, block + kBlockHeaderBytes + arena.Capacity(block));
  uint64_t end = 0;
  for (const auto& [begin, stop] : spans) {
    CHECK(begin >= end);
    end = stop;
  }
  for (uint64_t block : live) arena.Release(block);
  CHECK(arena.Stats().live_blocks == 0);
  CHECK(arena.Stats().live_bytes == 0);
  // One run of every carved byte, on the list of the largest class it holds.
  uint64_t whole = arena.TryAllocate(ClassCapacity(FloorClassOf(arena.Stats().used - kBlockHeaderBytes)));
  CHECK(whole == 4096);
  CHECK(t.Walk() <= 2);  // the merged block, and the rest split off it if there was one
}

TEST_CASE("once merging has begun, a merge runs only when a free made two free blocks neighbours") {
  TestArena t(8 * 1024);
  Arena& arena = *t.arena;
  std::vector<uint64_t> blocks;
  for (uint64_t block; (block = arena.TryAllocate(256)) != 0;) blocks.push_back(block);
  REQUIRE(blocks.size() == 25);
  arena.Release(blocks[3]);
  CHECK(t.header().merged_once == 0);
  CHECK(arena.TryAllocate(1000) == 0);  // the first merge finds nothing to join
  CHECK(t.header().merged_once == 1);
  CHECK(t.header().freed_since_merge == 0);
  arena.Release(blocks[1]);  // its neighbours 0 and 2 are live
  CHECK(t.header().neighbours_since_merge == 0);
  CHECK(arena.TryAllocate(1000) == 0);
  arena.Release(blocks[2]);  // next to 1 and 3, both free
  CHECK(t.header().neighbours_since_merge == 1);
  uint64_t joined = arena.TryAllocate(800);  // 3 * 256 + 2 * 64 = 896 bytes
  CHECK(joined == blocks[1]);
  CHECK(arena.Capacity(joined) == 896);
  CHECK(t.header().neighbours_since_merge == 0);
  CHECK(t.Walk() == 23);
}

TEST_CASE("merged and split blocks keep the page cache's count exact") {
  // Two free blocks of 2 MiB next to each other merge into one of 4 MiB + 64 (counted once),
  // which a request of 1 MiB splits: the rest, 3 MiB, stays counted.
  TestArena t(5 * kMiB);
  Arena& arena = *t.arena;
  uint64_t a = arena.TryAllocate(2 * kMiB);
  uint64_t b = arena.TryAllocate(2 * kMiB);
  REQUIRE(a != 0);
  REQUIRE(b != 0);
  arena.Release(a);
  arena.Release(b);
  CHECK(arena.Stats().cached_bytes == 4 * kMiB);
  CHECK(arena.TryAllocate(3 * kMiB) != 0);  // no room at the bump: the two merge, taken whole
  CHECK(arena.Stats().cached_bytes == 0);
  CHECK(arena.Stats().live_bytes == 4 * kMiB + kBlockHeaderBytes);
  arena.Release(a);
  CHECK(arena.Stats().cached_bytes == 4 * kMiB + kBlockHeaderBytes);
  uint64_t front = arena.TryAllocate(kMiB);  // eight classes below: split
  REQUIRE(front == a);
  CHECK(arena.Capacity(front) == kMiB);
  CHECK(arena.Stats().cached_bytes == 3 * kMiB);
  arena.Release(front);
  CHECK(arena.Stats().cached_bytes == 4 * kMiB);
  CHECK(arena.TryAllocate(kMiB) == a);  // its class again, as it was freed
  CHECK(arena.Stats().cached_bytes == 3 * kMiB);
  CHECK(arena.TryAllocate(3 * kMiB) == a + kBlockHeaderBytes + kMiB);
  CHECK(arena.Stats().cached_bytes == 0);
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
