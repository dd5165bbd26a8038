#include "arena_allocator.h"

#include <cstdlib>
#include <cstring>
#include <utility>

namespace dfir::rt {

ArenaAllocator::ArenaAllocator(std::shared_ptr<Region> region, uint64_t threshold)
    : region_(std::move(region)), threshold_(threshold) {}

void* ArenaAllocator::Allocate(size_t size) {
  if (size >= threshold_) {
    uint64_t block = region_->arena().TryAllocate(size);
    if (block != 0) return region_->arena().Data(block);
  }
  return std::malloc(size);
}

void* ArenaAllocator::AllocateZeroed(size_t count, size_t element_size) {
  size_t size = count * element_size;
  if (element_size != 0 && size / element_size != count) return nullptr;
  if (size < threshold_) return std::calloc(count, element_size);
  void* data = Allocate(size);
  if (data != nullptr) std::memset(data, 0, size);
  return data;
}

void* ArenaAllocator::Reallocate(void* data, size_t size) {
  Arena& arena = region_->arena();
  if (data == nullptr || !arena.Contains(data)) return std::realloc(data, size);
  uint64_t block = arena.BlockAt(data);
  uint64_t capacity = arena.Capacity(block);
  if (size <= capacity) return data;
  void* moved = Allocate(size);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, data, capacity);
  arena.Release(block);
  return moved;
}

void ArenaAllocator::Free(void* data) {
  Arena& arena = region_->arena();
  if (data != nullptr && arena.Contains(data)) {
    arena.Release(arena.BlockAt(data));
  } else {
    std::free(data);
  }
}

}  // namespace dfir::rt
