// Parse and validate an `.om` container held in memory (plain C++: no Python headers).
#ifndef DFIR_RUNTIME_NATIVE_OM_READER_H_
#define DFIR_RUNTIME_NATIVE_OM_READER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "om_schema.h"
#include "sha256.h"

namespace dfir::om {

// A defect of an `.om` file. The message names the defect and the numbers involved, e.g.
// "partition 3 (WEIGHTS_DATA) of model 0 ends at byte 9000 but the file has 8192 bytes".
// The bindings turn it into dfir.core.errors.GeError.
class OmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The 256-byte header's fields; text fields are cut at their first NUL (and are valid UTF-8).
struct Header {
  uint32_t magic = 0;
  uint32_t headsize = 0;
  uint32_t version = 0;
  std::array<uint8_t, kChecksumFieldSize> checksum{};
  uint32_t length = 0;
  uint8_t is_encrypt = 0;
  uint8_t is_checksum = 0;
  uint8_t modeltype = 0;
  uint8_t genmode = 0;
  std::string name;
  uint32_t ops = 0;
  std::array<uint8_t, 32> userdefineinfo{};
  uint32_t om_ir_version = 0;
  uint32_t model_num = 0;
  std::string platform_version;
  uint8_t platform_type = 0;
  uint64_t model_length = 0;
  uint8_t need_check_os_cpu_info = 0;
  uint8_t is_unknow_model = 0;
};

// One partition table entry; `offset` counts from the start of the .om file that holds it.
struct Partition {
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// One partition table and its partitions, in table order.
struct Model {
  std::vector<Partition> partitions;
};

// A validated .om file. `models` are its partition tables: `model_num` of them for a flow
// file, the single table for a bundle, whose members are in `bundle` (in table order, flow
// files all: bundles do not nest), named `member_names` (their full names: BUNDLE_MODEL_NAMES'
// when the table has it, else their header names), and whose BUNDLE_MODEL_VAR_INFO value is
// `var_size`.
struct OmFile {
  uint64_t base = 0;  // where this file starts in the buffer given to ReadOm (bundle members)
  uint64_t size = 0;
  Header header;
  std::vector<Model> models;
  uint64_t var_size = 0;
  std::vector<OmFile> bundle;
  std::vector<std::string> member_names;
};

// The SHA-256 of the `size` bytes after a file's header.
struct ContentDigest {
  uint64_t size = 0;
  Sha256Digest digest{};
};

// Validates `size` bytes at `data` as an .om file and returns its layout; throws OmError.
// Checks, in order: size, magic, headsize, version, om_ir_version, model_length/length against
// the size, is_encrypt/is_checksum, the header digest, model type and count, the other fixed
// header fields (the unused GE flags, zero pad and reserved bytes, text fields zero after their
// NUL), every table and partition bound (partitions follow one another on 64-byte boundaries,
// zero bytes between; pads zero; overflow-safe), each partition's SHA-256 against its model's
// PARTITION_CHECKSUMS, the digest of everything after the header, then each bundle member (a
// flow file; names non-empty and distinct). Reads only inside [data, data + size); never writes.
// A digest is hashed only while the digest of the bytes around it fails: the content digest
// always, a partition's only when its file's content digest does not match (to name what
// changed), a bundle member's never once the bundle's matched. So a file costs one pass, and
// the messages are those of the first check that fails in the order above.
// `known` (optional): the content digest, already computed (`CopySealed` hashes it as it copies a
// file); used when it covers exactly the bytes after the header. What is checked and every message
// are the same with or without it.
OmFile ReadOm(const uint8_t* data, size_t size, const ContentDigest* known = nullptr);

}  // namespace dfir::om

#endif  // DFIR_RUNTIME_NATIVE_OM_READER_H_
