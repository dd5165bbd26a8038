#include "arena.h"

#include <cerrno>
#include <new>

namespace dfir::rt {
namespace {

constexpr uint32_t kBlockMagic = 0x4B4C4244;  // "DBLK"
constexpr int kFallbackClasses = 4;

// Holds a robust process-shared mutex; recovers it when its last holder died holding it.
class ArenaLock {
 public:
  explicit ArenaLock(pthread_mutex_t* mutex) : mutex_(mutex) {
    if (pthread_mutex_lock(mutex_) == EOWNERDEAD) pthread_mutex_consistent(mutex_);
  }
  ~ArenaLock() { pthread_mutex_unlock(mutex_); }
  ArenaLock(const ArenaLock&) = delete;
  ArenaLock& operator=(const ArenaLock&) = delete;

 private:
  pthread_mutex_t* mutex_;
};

}  // namespace

int SizeClassOf(uint64_t size) {
  if (size <= kMinBlockBytes) return 0;
  int exponent = 63 - __builtin_clzll(size - 1);  // 2^exponent < size <= 2^(exponent + 1)
  uint64_t step = uint64_t{1} << (exponent - 2);
  int sub = static_cast<int>((size + step - 1) / step) - 4;  // 1..4
  return (exponent - 8) * 4 + sub;
}

uint64_t ClassCapacity(int size_class) {
  if (size_class == 0) return kMinBlockBytes;
  int exponent = 8 + (size_class - 1) / 4;
  uint64_t sub = static_cast<uint64_t>((size_class - 1) % 4 + 1);
  return (4 + sub) << (exponent - 2);
}

int FloorClassOf(uint64_t capacity) {
  int size_class = SizeClassOf(capacity);
  if (size_class >= kSizeClasses) return kSizeClasses - 1;
  return ClassCapacity(size_class) > capacity ? size_class - 1 : size_class;
}

void Arena::Format(const SharedMemory& memory, uint64_t header_offset, uint64_t begin, uint64_t end) {
  auto* header = new (memory.base() + header_offset) ArenaHeader();
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&header->lock, &attributes);
  pthread_mutexattr_destroy(&attributes);
  header->begin = begin;
  header->end = end;
  header->bump = begin;
}

Arena::Arena(const SharedMemory& memory, uint64_t header_offset)
    : memory_(memory), header_(reinterpret_cast<ArenaHeader*>(memory.base() + header_offset)) {}

uint64_t Arena::TryAllocate(uint64_t size) {
  int size_class = SizeClassOf(size);
  if (size_class >= kSizeClasses) return 0;
  uint64_t block = 0;
  {
    ArenaLock lock(&header_->lock);
    block = TakeFree(size_class);
    if (block == 0) block = Carve(size_class);
    if (block == 0) block = TakeLarger(size_class);
    if (block == 0 && MergeFree()) {
      block = TakeFree(size_class);
      if (block == 0) block = TakeLarger(size_class);
    }
    if (block == 0) return 0;
    header_->live_blocks += 1;
    header_->live_bytes += Header(block).capacity;
  }
  Header(block).refs.store(1, std::memory_order_release);
  return block;
}

uint64_t Arena::TakeFree(int size_class) {
  uint64_t block = header_->free_heads[size_class];
  if (block == 0) return 0;
  BlockHeader& taken = Header(block);
  header_->free_heads[size_class] = taken.next_free;
  if (taken.resident != 0) header_->cached_bytes -= taken.capacity;
  taken.resident = 0;
  taken.next_free = 0;
  taken.on_free_list = 0;
  return block;
}

uint64_t Arena::TakeLarger(int size_class) {
  for (int larger = size_class + 1; larger < kSizeClasses && larger <= size_class + kFallbackClasses; ++larger) {
    uint64_t block = TakeFree(larger);
    if (block != 0) return block;
  }
  for (int larger = size_class + kFallbackClasses + 1; larger < kSizeClasses; ++larger) {
    if (header_->free_heads[larger] != 0) return TakeSplit(larger, size_class);
  }
  return 0;
}

uint64_t Arena::TakeSplit(int from_class, int size_class) {
  const bool resident = Header(header_->free_heads[from_class]).resident != 0;
  uint64_t block = TakeFree(from_class);
  BlockHeader& taken = Header(block);
  const uint64_t capacity = ClassCapacity(size_class);
  if (taken.capacity < capacity + kBlockHeaderBytes + kMinBlockBytes) return block;  // too little left: whole
  const uint64_t rest = block + kBlockHeaderBytes + capacity;
  auto* remainder = new (memory_.base() + rest) BlockHeader();
  remainder->magic = kBlockMagic;
  remainder->prev_block = block;
  remainder->capacity = taken.capacity - capacity - kBlockHeaderBytes;
  remainder->size_class = static_cast<uint32_t>(FloorClassOf(remainder->capacity));
  // The rest keeps its pages when the block did; counted while it is large enough to be.
  remainder->resident = resident && remainder->capacity >= kDiscardMinBytes ? 1 : 0;
  if (remainder->resident != 0) header_->cached_bytes += remainder->capacity;
  LinkNext(rest);
  PushFree(rest);
  NoteNeighbours(rest);
  taken.capacity = capacity;
  taken.size_class = static_cast<uint32_t>(size_class);
  return block;
}

void Arena::PushFree(uint64_t block) {
  BlockHeader& free_block = Header(block);
  free_block.next_free = header_->free_heads[free_block.size_class];
  free_block.on_free_list = 1;
  header_->free_heads[free_block.size_class] = block;
}

void Arena::NoteNeighbours(uint64_t block) {
  if (header_->merged_once == 0) return;
  const BlockHeader& free_block = Header(block);
  const uint64_t next = block + kBlockHeaderBytes + free_block.capacity;
  if ((next < header_->bump && Header(next).on_free_list != 0) ||
      (free_block.prev_block != 0 && Header(free_block.prev_block).on_free_list != 0)) {
    header_->neighbours_since_merge += 1;
  }
}

void Arena::LinkNext(uint64_t block) {
  const uint64_t next = block + kBlockHeaderBytes + Header(block).capacity;
  if (next < header_->bump) {
    Header(next).prev_block = block;
  } else {
    header_->last_block = block;
  }
}

bool Arena::MergeFree() {
  // Nothing to join: merged as far as it goes already.
  if (header_->merged_once != 0 ? header_->neighbours_since_merge == 0 : header_->freed_since_merge == 0) return false;
  header_->merged_once = 1;
  header_->freed_since_merge = 0;
  header_->neighbours_since_merge = 0;
  uint64_t all = 0;
  for (uint64_t& head : header_->free_heads) {
    for (uint64_t block = head; block != 0;) {
      const uint64_t next = Header(block).next_free;
      Header(block).next_free = all;
      all = block;
      block = next;
    }
    head = 0;
  }
  bool merged_any = false;
  for (uint64_t block = SortByOffset(all); block != 0;) {
    BlockHeader& run = Header(block);
    uint64_t next = run.next_free;
    bool merged = false;
    while (next != 0 && next == block + kBlockHeaderBytes + run.capacity) {
      BlockHeader& absorbed = Header(next);
      const uint64_t after = absorbed.next_free;
      if (!merged && run.resident != 0) header_->cached_bytes -= run.capacity;
      if (absorbed.resident != 0) header_->cached_bytes -= absorbed.capacity;
      run.capacity += kBlockHeaderBytes + absorbed.capacity;
      absorbed.magic = 0;  // its data is the run's now
      absorbed.resident = 0;
      absorbed.next_free = 0;
      absorbed.on_free_list = 0;
      merged = true;
      next = after;
    }
    if (merged) {
      merged_any = true;
      LinkNext(block);
      run.size_class = static_cast<uint32_t>(FloorClassOf(run.capacity));
      // Counted whole when large enough (some of its pages may be gone already: the cache
      // errs on the side of discarding).
      run.resident = run.capacity >= kDiscardMinBytes ? 1 : 0;
      if (run.resident != 0) header_->cached_bytes += run.capacity;
    }
    PushFree(block);
    block = next;
  }
  if (merged_any) TrimCache(0);
  return merged_any;
}

uint64_t Arena::SortByOffset(uint64_t list) {
  if (list == 0 || Header(list).next_free == 0) return list;
  uint64_t middle = list;
  for (uint64_t fast = Header(list).next_free; fast != 0 && Header(fast).next_free != 0;
       fast = Header(Header(fast).next_free).next_free) {
    middle = Header(middle).next_free;
  }
  uint64_t second = Header(middle).next_free;
  Header(middle).next_free = 0;
  uint64_t a = SortByOffset(list);
  uint64_t b = SortByOffset(second);
  uint64_t head = 0;
  uint64_t* tail = &head;
  while (a != 0 && b != 0) {
    uint64_t& smaller = a < b ? a : b;
    *tail = smaller;
    tail = &Header(smaller).next_free;
    smaller = Header(smaller).next_free;
  }
  *tail = a != 0 ? a : b;
  return head;
}

uint64_t Arena::Carve(int size_class) {
  uint64_t capacity = ClassCapacity(size_class);
  if (header_->end - header_->bump < capacity + kBlockHeaderBytes) return 0;
  uint64_t block = header_->bump;
  header_->bump += capacity + kBlockHeaderBytes;
  auto* carved = new (memory_.base() + block) BlockHeader();
  carved->magic = kBlockMagic;
  carved->size_class = static_cast<uint32_t>(size_class);
  carved->capacity = capacity;
  carved->prev_block = header_->last_block;
  header_->last_block = block;
  return block;
}

void Arena::Retain(uint64_t block) { Header(block).refs.fetch_add(1, std::memory_order_relaxed); }

void Arena::Release(uint64_t block) {
  BlockHeader& released = Header(block);
  if (released.refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  {
    ArenaLock lock(&header_->lock);
    released.resident = released.capacity >= kDiscardMinBytes ? 1 : 0;
    if (released.resident != 0) header_->cached_bytes += released.capacity;
    PushFree(block);
    header_->freed_since_merge += 1;
    NoteNeighbours(block);
    header_->live_blocks -= 1;
    header_->live_bytes -= released.capacity;
    TrimCache(block);
  }
  NotifyAll(header_->freed);
}

void Arena::TrimCache(uint64_t kept) {
  if (header_->cached_bytes <= kResidentCacheBytes) return;
  if (kept == 0) {
    for (int size_class = kSizeClasses - 1; size_class >= 0; --size_class) TrimClass(size_class, 0);
    return;
  }
  const int kept_class = static_cast<int>(Header(kept).size_class);
  for (int size_class = kSizeClasses - 1; size_class >= 0; --size_class) {
    if (size_class != kept_class) TrimClass(size_class, kept);
  }
  TrimClass(kept_class, kept);
  TrimClass(kept_class, 0);  // the block just freed alone is over the limit
}

void Arena::TrimClass(int size_class, uint64_t kept) {
  for (uint64_t block = header_->free_heads[size_class];
       block != 0 && header_->cached_bytes > kResidentCacheBytes; block = Header(block).next_free) {
    BlockHeader& free_block = Header(block);
    if (block == kept || free_block.resident == 0) continue;
    memory_.Discard(block + kBlockHeaderBytes, free_block.capacity);
    free_block.resident = 0;
    header_->cached_bytes -= free_block.capacity;
  }
}

bool Arena::Contains(const void* data) const {
  const uint8_t* byte = static_cast<const uint8_t*>(data);
  return byte >= memory_.base() + header_->begin && byte < memory_.base() + header_->end;
}

uint64_t Arena::BlockAt(const void* data) const {
  if (!Contains(data)) return 0;
  uint64_t offset = static_cast<uint64_t>(static_cast<const uint8_t*>(data) - memory_.base());
  if (offset < header_->begin + kBlockHeaderBytes || offset % 64 != 0) return 0;
  uint64_t block = offset - kBlockHeaderBytes;
  const BlockHeader& candidate = Header(block);
  if (candidate.magic != kBlockMagic || candidate.refs.load(std::memory_order_acquire) == 0) return 0;
  return block;
}

bool Arena::Covers(uint64_t block, const void* data, uint64_t size) const {
  const uint8_t* begin = Data(block);
  const uint8_t* byte = static_cast<const uint8_t*>(data);
  return byte >= begin && size <= Header(block).capacity && static_cast<uint64_t>(byte - begin) <= Header(block).capacity - size;
}

ArenaStats Arena::Stats() const {
  ArenaLock lock(&header_->lock);
  return ArenaStats{header_->end - header_->begin, header_->bump - header_->begin, header_->live_blocks,
                    header_->live_bytes, header_->cached_bytes};
}

}  // namespace dfir::rt
