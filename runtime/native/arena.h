// A process-shared allocator of reference-counted blocks, living inside a shared region: tensor
// payloads are written into a block once and every process that maps the region reads them in
// place. Plain C++: no Python headers.
//
// Algorithm:
//   1. Sizes round up to a size class: 256 bytes, then four classes per power of two (320, 384,
//      448, 512, 640, ...), so a block wastes at most a quarter of its size.
//   2. A block is a 64-byte header followed by its data; blocks lie end to end from the start of
//      the space to the bump pointer. A free block goes on its class's free list (a block whose
//      capacity lies between two classes, on the list of the smaller one); an allocation takes
//      from that list, else carves fresh space at the bump pointer, else takes a free block of
//      one of the next four classes whole, else splits a free block of a larger class (the
//      front serves the request, the rest, when it holds a block of at least kMinBlockBytes,
//      becomes a free block of its own).
//   2a. When none of these serves a request, free blocks that lie next to each other are merged
//      (the free lists sorted by offset, adjacent blocks joined, the lists rebuilt) and the
//      request tries again: space that went to one size class serves any other once it is free.
//      Merging runs on this slow path only, so a size in steady use keeps reusing its own freed
//      blocks; it runs when it can join something: the first time when any block was freed
//      since, then (each block knows its neighbours) when a free made two free blocks neighbours.
//   3. A block starts with one reference; Retain adds one, Release drops one and frees the
//      block at zero. Counts are atomic, so a reader in another process can drop a reference
//      without locking; only list and bump updates take the arena's robust process-shared mutex
//      (a holder that dies does not deadlock the others).
//   4. Freed blocks keep their pages for reuse (no page faults on the next tensor of that size).
//      Free blocks of at least kDiscardMinBytes keep at most kResidentCacheBytes of pages in all:
//      beyond that, the ones of other size classes than the block just freed give their pages
//      back to the system first (largest first), so the sizes in use stay fast.
#ifndef DFIR_RUNTIME_NATIVE_ARENA_H_
#define DFIR_RUNTIME_NATIVE_ARENA_H_

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "eventcount.h"
#include "shm.h"

namespace dfir::rt {

inline constexpr uint64_t kBlockHeaderBytes = 64;
inline constexpr uint64_t kMinBlockBytes = 256;
inline constexpr int kSizeClasses = 160;
inline constexpr uint64_t kResidentCacheBytes = uint64_t{256} << 20;
inline constexpr uint64_t kDiscardMinBytes = uint64_t{1} << 20;

struct BlockHeader {
  uint32_t magic;
  uint32_t size_class;
  std::atomic<uint32_t> refs;
  uint32_t resident;    // 1 while free with its pages kept and counted in cached_bytes
  uint64_t next_free;   // next block of the free list (offset), 0 at the end
  uint64_t capacity;    // data bytes
  uint64_t prev_block;  // the block that ends where this one starts, 0 for the first
  uint32_t on_free_list;  // 1 while on a free list (set and read with the lock held)
  uint32_t reserved32;
  uint64_t reserved[2];
};
static_assert(sizeof(BlockHeader) == kBlockHeaderBytes);

struct ArenaHeader {
  pthread_mutex_t lock;
  uint64_t begin = 0;  // region offsets of the arena's space
  uint64_t end = 0;
  uint64_t bump = 0;
  uint64_t cached_bytes = 0;
  uint64_t live_blocks = 0;
  uint64_t live_bytes = 0;
  uint64_t free_heads[kSizeClasses] = {};
  uint64_t last_block = 0;         // the block that ends at the bump pointer, 0 while none
  uint64_t freed_since_merge = 0;  // blocks freed since free blocks were last merged
  // Once free blocks were merged (the space ran out once), frees note whether they made two free
  // blocks neighbours, so a merge runs only when it can join something.
  uint64_t merged_once = 0;
  uint64_t neighbours_since_merge = 0;
  EventCount freed;  // waiters for room
};

struct ArenaStats {
  uint64_t capacity;      // bytes of space
  uint64_t used;          // bytes carved so far (live or free)
  uint64_t live_blocks;
  uint64_t live_bytes;    // capacity of the live blocks
  uint64_t cached_bytes;  // capacity of free blocks of at least kDiscardMinBytes that keep their pages
};

// The size class of a request and the data bytes of a class.
int SizeClassOf(uint64_t size);
uint64_t ClassCapacity(int size_class);
// The largest class whose capacity is at most `capacity` (>= kMinBlockBytes): the free list of
// a block of that capacity.
int FloorClassOf(uint64_t capacity);

// A view of an arena inside a mapping; offsets count from the mapping's base.
class Arena {
 public:
  // Formats [begin, end) of `memory` as an empty arena whose header is at `header_offset`.
  static void Format(const SharedMemory& memory, uint64_t header_offset, uint64_t begin, uint64_t end);
  Arena(const SharedMemory& memory, uint64_t header_offset);

  // A block of at least `size` data bytes holding one reference, or 0 when there is no room.
  uint64_t TryAllocate(uint64_t size);
  void Retain(uint64_t block);
  // Drops a reference; at zero the block is free and waiters for room are woken.
  void Release(uint64_t block);

  uint8_t* Data(uint64_t block) const { return memory_.base() + block + kBlockHeaderBytes; }
  uint64_t Capacity(uint64_t block) const { return Header(block).capacity; }
  uint32_t References(uint64_t block) const { return Header(block).refs.load(std::memory_order_acquire); }
  // True when `data` lies in the arena's space.
  bool Contains(const void* data) const;
  // The live block whose data starts at `data`, or 0.
  uint64_t BlockAt(const void* data) const;
  // True when [data, data + size) lies inside the data of `block`.
  bool Covers(uint64_t block, const void* data, uint64_t size) const;

  EventCount& freed() const { return header_->freed; }
  uint64_t space() const { return header_->end - header_->begin; }
  ArenaStats Stats() const;

 private:
  BlockHeader& Header(uint64_t block) const { return *reinterpret_cast<BlockHeader*>(memory_.base() + block); }
  uint64_t TakeFree(int size_class);
  uint64_t Carve(int size_class);
  // With the lock held: a free block of a larger class for `size_class`: one of the next four
  // classes whole, else the front of a larger one split; 0 when there is none.
  uint64_t TakeLarger(int size_class);
  // Takes the head of `from_class`'s list and splits `size_class`'s capacity off its front.
  uint64_t TakeSplit(int from_class, int size_class);
  // Puts free `block` on the free list of its class.
  void PushFree(uint64_t block);
  // Once merges have begun: notes whether free `block` has a free neighbour.
  void NoteNeighbours(uint64_t block);
  // Makes the block that starts where `block` ends (or the bump pointer) know `block` as its
  // neighbour.
  void LinkNext(uint64_t block);
  // Merges the free blocks that lie next to each other; true when any did.
  bool MergeFree();
  // The free blocks of `list` (linked through next_free) in offset order.
  uint64_t SortByOffset(uint64_t list);
  // With the lock held: discard cached pages until the cache fits, sparing `kept` if it can
  // (0: none to spare).
  void TrimCache(uint64_t kept);
  // Discards the pages of resident free blocks of `size_class` (but `kept`) until the cache fits.
  void TrimClass(int size_class, uint64_t kept);

  const SharedMemory& memory_;
  ArenaHeader* header_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_ARENA_H_
