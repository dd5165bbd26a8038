// numpy's allocator over a region's tensor arena (NEP 49; arena_bindings.cc), which
// `Region.use_arena_allocator` installs in a worker thread.
#ifndef DFIR_RUNTIME_BINDINGS_ARENA_BINDINGS_H_
#define DFIR_RUNTIME_BINDINGS_ARENA_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>

#include "region.h"

namespace dfir::bindings {

// Makes numpy allocate from `region`'s arena in the calling thread (a context variable).
void UseArenaAllocator(const std::shared_ptr<rt::Region>& region, uint64_t threshold);

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_ARENA_BINDINGS_H_
