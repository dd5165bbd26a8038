// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto: the digest of the `.om` container's checksums.
#ifndef DFIR_RUNTIME_NATIVE_SHA256_H_
#define DFIR_RUNTIME_NATIVE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace dfir {

using Sha256Digest = std::array<uint8_t, 32>;

// The SHA-256 of `size` bytes at `data`.
Sha256Digest Sha256Of(const uint8_t* data, size_t size);

}  // namespace dfir

#endif  // DFIR_RUNTIME_NATIVE_SHA256_H_
