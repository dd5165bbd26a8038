// A process-shared allocator of reference-counted blocks, living inside a shared region: tensor
// payloads are written into a block once and every process that maps the region reads them in
// place. Plain C++: no Python headers.
//
// Algorithm:
//   1. Sizes round up to a size class: 256 bytes, then four classes per power of two (320, 384,
//      448, 512, 640, ...), so a block wastes at most a quarter of its size.
//   2. A block is a 64-byte header followed by its data. A free block goes on its class's free
//      list; an allocation takes from that list, else carves fresh space at the bump pointer,
//      else takes a free block of one of the next four classes.
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
  uint64_t reserved[4];
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
  // With the lock held: discard cached pages until the cache fits, sparing `kept` if it can.
  void TrimCache(uint64_t kept);
  // Discards the pages of resident free blocks of `size_class` (but `kept`) until the cache fits.
  void TrimClass(int size_class, uint64_t kept);

  const SharedMemory& memory_;
  ArenaHeader* header_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_ARENA_H_
