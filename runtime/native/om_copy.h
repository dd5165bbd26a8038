// Copy an `.om` file into a sealed memfd in one pass, hashing what the reader checks as it goes.
#ifndef DFIR_RUNTIME_NATIVE_OM_COPY_H_
#define DFIR_RUNTIME_NATIVE_OM_COPY_H_

#include <cstdint>
#include <string>

#include "om_reader.h"

namespace dfir::om {

// A private copy of a file: a memfd sealed against any change (no write, shrink, grow or further
// seal), whose first `size` bytes are the file's (fewer than asked for when the file shrank while
// it was copied: the rest are zeros), and the digests of the ranges ReadOm checks (PlanDigests),
// computed over the copy's own bytes.
struct SealedCopy {
  int fd = -1;  // the caller's to close
  uint64_t size = 0;
  KnownDigests digests;
};

// Copies the first `size` bytes of the file open at `source_fd` into a new memfd named `name`.
// The file's header and tables are read first, to plan the digests. The memfd is then given its
// size and sealed against any write but through the one mapping this process holds (which forked
// children do not inherit); one thread reads the file into that mapping a piece at a time while
// another hashes each piece as soon as it is there (while it is in cache), every planned range
// that covers it at once, the copy never more than a few pieces ahead. Then the mapping goes and
// the memfd is sealed against any write: no byte can change between its hashing and its use. A
// digest whose range the copy does not hold is left out. Throws std::system_error for a failed
// system call (EBUSY from the last seal: another writable mapping of the memfd was made before
// the first seal).
SealedCopy CopySealed(int source_fd, uint64_t size, const std::string& name);

}  // namespace dfir::om

#endif  // DFIR_RUNTIME_NATIVE_OM_COPY_H_
