// A malloc-like allocator over a region's arena, for the arrays one thread makes (the Python
// bindings install it as numpy's allocator, NEP 49): requests of at least `threshold` bytes
// get arena blocks while there is room, so a UDF's result already lies in shared memory when
// it is sent and goes out without a copy; smaller requests and overflow use malloc. Plain C++:
// no Python headers.
//
//   ArenaAllocator allocator(region, 64 << 10);
//   void* big = allocator.Allocate(1 << 20);  // an arena block (one reference)
//   void* small = allocator.Allocate(100);    // malloc
//   allocator.Free(big);                      // gives the reference back; a message sent from
//                                             // the block meanwhile holds its own
#ifndef DFIR_RUNTIME_NATIVE_ARENA_ALLOCATOR_H_
#define DFIR_RUNTIME_NATIVE_ARENA_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "region.h"

namespace dfir::rt {

class ArenaAllocator {
 public:
  ArenaAllocator(std::shared_ptr<Region> region, uint64_t threshold);

  // As malloc, calloc, realloc and free; each takes what any of them gave.
  void* Allocate(size_t size);
  void* AllocateZeroed(size_t count, size_t element_size);
  void* Reallocate(void* data, size_t size);
  void Free(void* data);

  // Requests this small or smaller go to malloc.
  uint64_t threshold() const { return threshold_; }
  // Whether `data` lies in the arena (Free and Reallocate give it back there).
  bool InArena(const void* data) const { return region_->arena().Contains(data); }

 private:
  std::shared_ptr<Region> region_;
  uint64_t threshold_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_ARENA_ALLOCATOR_H_
