#include "sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace dfir {
namespace {

[[noreturn]] void Failed() { throw std::runtime_error("OpenSSL's SHA-256 failed"); }

}  // namespace

// OpenSSL picks the fastest code the CPU runs (SHA extensions, AVX2): several times a portable loop.
Sha256Digest Sha256Of(const uint8_t* data, size_t size) {
  Sha256Digest digest;
  unsigned int written = 0;
  if (EVP_Digest(data, size, digest.data(), &written, EVP_sha256(), nullptr) != 1 || written != digest.size()) {
    Failed();
  }
  return digest;
}

Sha256Stream::Sha256Stream() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr || EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(context_);
    Failed();
  }
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(context_); }

void Sha256Stream::Update(const uint8_t* data, size_t size) {
  if (EVP_DigestUpdate(context_, data, size) != 1) Failed();
}

Sha256Digest Sha256Stream::Finish() {
  Sha256Digest digest;
  unsigned int written = 0;
  if (EVP_DigestFinal_ex(context_, digest.data(), &written) != 1 || written != digest.size()) Failed();
  return digest;
}

}  // namespace dfir
