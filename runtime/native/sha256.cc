#include "sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace dfir {

// OpenSSL picks the fastest code the CPU runs (SHA extensions, AVX2): several times a portable loop.
Sha256Digest Sha256Of(const uint8_t* data, size_t size) {
  Sha256Digest digest;
  unsigned int written = 0;
  if (EVP_Digest(data, size, digest.data(), &written, EVP_sha256(), nullptr) != 1 || written != digest.size()) {
    throw std::runtime_error("OpenSSL's SHA-256 failed");
  }
  return digest;
}

}  // namespace dfir
