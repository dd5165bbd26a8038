#include "sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

namespace {

constexpr uint64_t kBlock = 64;
constexpr uint32_t kInitialState[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

EVP_MD_CTX* NewOpenSslDigest() {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  if (context == nullptr || EVP_DigestInit_ex(context, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(context);
    throw std::runtime_error("OpenSSL's SHA-256 failed");
  }
  return context;
}

#if defined(__x86_64__)

bool HasShaExtensions() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool sse41 = (ecx & bit_SSE4_1) != 0, ssse3 = (ecx & bit_SSSE3) != 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return sse41 && ssse3 && (ebx & bit_SHA) != 0;
}

alignas(16) constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// The state as the SHA instructions hold it: words A B E F and C D G H.
struct NiState {
  __m128i abef;
  __m128i cdgh;
};

__attribute__((target("sha,sse4.1,ssse3"))) NiState LoadState(const uint32_t* h) {
  const __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));
  const __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  return {_mm_alignr_epi8(cdab, efgh, 8), _mm_blend_epi16(efgh, cdab, 0xF0)};
}

__attribute__((target("sha,sse4.1,ssse3"))) void StoreState(const NiState& state, uint32_t* h) {
  const __m128i feba = _mm_shuffle_epi32(state.abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(state.cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}

// `blocks` 64-byte blocks at `data` into each of the `N` states: the message schedule is computed
// once per block and drives the rounds of every state, which the CPU overlaps.
template <int N>
__attribute__((target("sha,sse4.1,ssse3"))) void CompressShared(uint32_t* const (&states)[N], const uint8_t* data,
                                                              uint64_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  NiState state[N];
  for (int j = 0; j < N; ++j) state[j] = LoadState(states[j]);
  for (; blocks != 0; --blocks, data += kBlock) {
    NiState saved[N];
    for (int j = 0; j < N; ++j) saved[j] = state[j];
    __m128i words[4];  // the last 16 words of the schedule, four to a register
#pragma GCC unroll 16  // registers for `words`, constants for the round offsets: about 10% faster
    for (int i = 0; i < 16; ++i) {
      __m128i next;
      if (i < 4) {
        next = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)), byte_swap);
      } else {
        const __m128i w0 = words[i & 3], w1 = words[(i + 1) & 3], w2 = words[(i + 2) & 3], w3 = words[(i + 3) & 3];
        next = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4)), w3);
      }
      words[i & 3] = next;
      const __m128i low = _mm_add_epi32(next, _mm_load_si128(reinterpret_cast<const __m128i*>(kRoundConstants + 4 * i)));
      const __m128i high = _mm_shuffle_epi32(low, 0x0E);
      for (int j = 0; j < N; ++j) state[j].cdgh = _mm_sha256rnds2_epu32(state[j].cdgh, state[j].abef, low);
      for (int j = 0; j < N; ++j) state[j].abef = _mm_sha256rnds2_epu32(state[j].abef, state[j].cdgh, high);
    }
    for (int j = 0; j < N; ++j) {
      state[j].abef = _mm_add_epi32(state[j].abef, saved[j].abef);
      state[j].cdgh = _mm_add_epi32(state[j].cdgh, saved[j].cdgh);
    }
  }
  for (int j = 0; j < N; ++j) StoreState(state[j], states[j]);
}

#else

bool HasShaExtensions() { return false; }

template <int N>
void CompressShared(uint32_t* const (&)[N], const uint8_t*, uint64_t) {
  throw std::logic_error("SHA extensions are x86-64 only");
}

#endif

const bool kUseShaExtensions = HasShaExtensions();

}  // namespace

// One range's digest so far: `next` is its first byte not hashed yet. With the SHA extensions the
// state is the eight hash words, else an OpenSSL digest.
struct Sha256Ranges::Stream {
  ByteRange range;
  uint64_t next = 0;
  uint32_t words[8];
  EVP_MD_CTX* openssl = nullptr;

  explicit Stream(const ByteRange& r) : range(r), next(r.begin) {
    std::memcpy(words, kInitialState, sizeof words);
    if (!kUseShaExtensions) openssl = NewOpenSslDigest();
  }
  ~Stream() { EVP_MD_CTX_free(openssl); }

  // Where this range's whole blocks within data[0, upto) end.
  uint64_t BlocksEnd(uint64_t upto) const {
    const uint64_t stop = std::min(upto, range.end);
    return stop <= range.begin ? range.begin : range.begin + (stop - range.begin) / kBlock * kBlock;
  }
};

Sha256Ranges::Sha256Ranges(const std::vector<ByteRange>& ranges) {
  streams_.reserve(ranges.size());
  for (const ByteRange& range : ranges) {
    if (range.begin % kBlock != 0 || range.end < range.begin) {
      throw std::invalid_argument("a hashed range must begin at a multiple of 64 and not end before it begins");
    }
    streams_.push_back(std::make_unique<Stream>(range));
  }
}

Sha256Ranges::~Sha256Ranges() = default;

const ByteRange& Sha256Ranges::range(size_t index) const { return streams_.at(index)->range; }

void Sha256Ranges::Advance(const uint8_t* data, uint64_t upto, const std::vector<size_t>& which) {
  std::vector<Stream*> pending;
  for (size_t index : which) {
    Stream* stream = streams_.at(index).get();
    if (stream->next < stream->BlocksEnd(upto)) pending.push_back(stream);
  }
  std::vector<Stream*> together;
  while (!pending.empty()) {
    // The streams at the earliest position go on together up to where one ends or another joins.
    uint64_t from = std::numeric_limits<uint64_t>::max();
    for (const Stream* stream : pending) from = std::min(from, stream->next);
    uint64_t to = std::numeric_limits<uint64_t>::max();
    together.clear();
    for (Stream* stream : pending) {
      if (stream->next == from) {
        together.push_back(stream);
        to = std::min(to, stream->BlocksEnd(upto));
      } else {
        to = std::min(to, stream->next);
      }
    }
    const uint64_t blocks = (to - from) / kBlock;
    size_t i = 0;
    if (kUseShaExtensions) {
      for (; i + 1 < together.size(); i += 2) {
        uint32_t* const pair[2] = {together[i]->words, together[i + 1]->words};
        CompressShared<2>(pair, data + from, blocks);
      }
      if (i < together.size()) {
        uint32_t* const one[1] = {together[i]->words};
        CompressShared<1>(one, data + from, blocks);
      }
    } else {
      for (Stream* stream : together) {
        if (EVP_DigestUpdate(stream->openssl, data + from, to - from) != 1) {
          throw std::runtime_error("OpenSSL's SHA-256 failed");
        }
      }
    }
    for (Stream* stream : together) stream->next = to;
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [upto](const Stream* stream) { return stream->next >= stream->BlocksEnd(upto); }),
                  pending.end());
  }
}

Sha256Digest Sha256Ranges::Finish(const uint8_t* data, size_t index) {
  Stream& stream = *streams_.at(index);
  const uint64_t tail = stream.range.end - stream.next;
  if (tail >= kBlock) throw std::logic_error("a hashed range was finished before all its blocks were hashed");
  Sha256Digest digest;
  if (!kUseShaExtensions) {
    unsigned int written = 0;
    if (EVP_DigestUpdate(stream.openssl, data + stream.next, tail) != 1 ||
        EVP_DigestFinal_ex(stream.openssl, digest.data(), &written) != 1 || written != digest.size()) {
      throw std::runtime_error("OpenSSL's SHA-256 failed");
    }
    return digest;
  }
  // The last bytes, 0x80, zeros, then the length in bits (big-endian): one block or two.
  uint8_t last[2 * kBlock] = {};
  std::memcpy(last, data + stream.next, tail);
  last[tail] = 0x80;
  const uint64_t blocks = tail + 1 + 8 <= kBlock ? 1 : 2;
  const uint64_t bits = (stream.range.end - stream.range.begin) * 8;
  for (int i = 0; i < 8; ++i) last[blocks * kBlock - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  uint32_t* const one[1] = {stream.words};
  CompressShared<1>(one, last, blocks);
  stream.next = stream.range.end;
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 4; ++k) digest[4 * i + k] = static_cast<uint8_t>(stream.words[i] >> (24 - 8 * k));
  }
  return digest;
}

}  // namespace dfir
