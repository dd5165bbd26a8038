// SHA-256 (FIPS 180-4), self-contained: the digest of the `.om` container's checksums.
#ifndef DFIR_RUNTIME_NATIVE_SHA256_H_
#define DFIR_RUNTIME_NATIVE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace dfir {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental hashing: Update() any number of times, then Finish() once.
class Sha256 {
 public:
  Sha256();
  void Update(const uint8_t* data, size_t size);
  Sha256Digest Finish();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> pending_{};
  size_t pending_size_ = 0;
  uint64_t total_size_ = 0;
};

// The SHA-256 of `size` bytes at `data`.
Sha256Digest Sha256Of(const uint8_t* data, size_t size);

}  // namespace dfir

#endif  // DFIR_RUNTIME_NATIVE_SHA256_H_
