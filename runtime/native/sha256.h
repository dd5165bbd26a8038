// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto: the digests of the `.om` container, at once
// or fed piece by piece.
#ifndef DFIR_RUNTIME_NATIVE_SHA256_H_
#define DFIR_RUNTIME_NATIVE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace dfir {

using Sha256Digest = std::array<uint8_t, 32>;

// The SHA-256 of `size` bytes at `data`.
Sha256Digest Sha256Of(const uint8_t* data, size_t size);

// The SHA-256 of bytes fed in pieces, in order.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(const uint8_t* data, size_t size);
  // The digest of every byte fed; call it once, last.
  Sha256Digest Finish();

 private:
  EVP_MD_CTX* context_;
};

}  // namespace dfir

#endif  // DFIR_RUNTIME_NATIVE_SHA256_H_
