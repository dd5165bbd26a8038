// Copy an `.om` file into a sealed memfd in one pass, hashing what the reader checks as it goes.
#ifndef DFIR_RUNTIME_NATIVE_OM_COPY_H_
#define DFIR_RUNTIME_NATIVE_OM_COPY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "om_reader.h"

namespace dfir::om {

// A private copy of a file: a memfd sealed against any change (no write, shrink, grow or further
// seal), whose first `size` bytes are the file's (fewer than asked for when the file shrank while
// it was copied: the rest are zeros), and the content digest ReadOm checks, of the copy's bytes
// after its header up to where the copy's header says its model ends (none when the copy ends
// before that or has no header).
struct SealedCopy {
  int fd = -1;  // the caller's to close
  uint64_t size = 0;
  std::optional<ContentDigest> content;
};

// Copies the first `size` bytes of the file open at `source_fd` into a new memfd named `name`.
// The memfd is given its size and sealed against any write but through the one mapping this
// process holds (which forked children do not inherit). One thread reads the file a piece at a
// time into a small buffer of this process and hashes the piece there, while it is in cache; a
// second copies each hashed piece into the memfd. So the bytes hashed are the bytes copied, and
// no one else can write them. Then the mapping goes and the memfd is sealed against any write.
// Throws std::system_error for a failed system call (EBUSY from the last seal: another writable
// mapping of the memfd was made before the first seal).
SealedCopy CopySealed(int source_fd, uint64_t size, const std::string& name);

}  // namespace dfir::om

#endif  // DFIR_RUNTIME_NATIVE_OM_COPY_H_
