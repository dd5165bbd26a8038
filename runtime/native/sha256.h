// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto: the digest of the `.om` container's checksums;
// and the digests of several byte ranges of one buffer, computed in one pass as the buffer fills.
#ifndef DFIR_RUNTIME_NATIVE_SHA256_H_
#define DFIR_RUNTIME_NATIVE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dfir {

using Sha256Digest = std::array<uint8_t, 32>;

// The SHA-256 of `size` bytes at `data`.
Sha256Digest Sha256Of(const uint8_t* data, size_t size);

// Bytes [begin, end) of a buffer.
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// The SHA-256 of each of several ranges of one buffer (they may overlap or nest), fed in one pass:
// `Advance` hashes the bytes up to a point into every range that covers them, so a caller can hash
// each piece of the buffer while it is still in cache. Ranges that cover the same 64-byte blocks
// are hashed together: with the CPU's SHA extensions, two digests of a block share one message
// schedule (about 1.5x the time of one digest rather than 2x); without them each range has its
// own OpenSSL digest. Ranges must begin at a multiple of 64 from the buffer's start.
//
// `Advance` and `Finish` take the indices of the ranges they touch: two threads may each advance
// their own ranges at once, never the same range.
class Sha256Ranges {
 public:
  explicit Sha256Ranges(const std::vector<ByteRange>& ranges);
  ~Sha256Ranges();
  Sha256Ranges(const Sha256Ranges&) = delete;
  Sha256Ranges& operator=(const Sha256Ranges&) = delete;

  size_t size() const { return streams_.size(); }
  const ByteRange& range(size_t index) const;

  // Hashes into the ranges `which` their bytes of data[0, upto) not hashed yet (their last block,
  // when it is partial, is left for `Finish`); `upto` never decreases between calls.
  void Advance(const uint8_t* data, uint64_t upto, const std::vector<size_t>& which);

  // The digest of range `index`, all of whose bytes are in `data` (only the last block, if
  // partial, is read again); call it once, after the last `Advance` of that range.
  Sha256Digest Finish(const uint8_t* data, size_t index);

 private:
  struct Stream;
  std::vector<std::unique_ptr<Stream>> streams_;
};

}  // namespace dfir

#endif  // DFIR_RUNTIME_NATIVE_SHA256_H_
