#include "om_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "sha256.h"

namespace dfir::om {
namespace {

// Wide enough that offset + size of two u64 fields never wraps.
__extension__ typedef unsigned __int128 Wide;

Wide AlignUp(Wide value) { return (value + kPartitionAlignment - 1) / kPartitionAlignment * kPartitionAlignment; }

std::string Decimal(Wide value) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return digits;
}

std::string Hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08X", value);
  return text;
}

// The first 8 bytes of a digest in hex, enough to tell two digests apart in a message.
std::string DigestPrefix(const uint8_t* digest) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < 8; ++i) {
    hex += kHexDigits[digest[i] >> 4];
    hex += kHexDigits[digest[i] & 0xF];
  }
  return hex + "...";
}

std::ostream& operator<<(std::ostream& out, Wide value) { return out << Decimal(value); }

template <typename... Parts>
[[noreturn]] void Fail(const Parts&... parts) {
  std::ostringstream message;
  (message << ... << parts);
  throw OmError(message.str());
}

bool IsValidUtf8(const uint8_t* text, size_t size) {
  static constexpr uint32_t kSmallestOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
  for (size_t i = 0; i < size;) {
    const uint8_t lead = text[i];
    size_t length = 1;
    uint32_t code_point = lead;
    if (lead >= 0x80) {
      if ((lead & 0xE0) == 0xC0) {
        length = 2, code_point = lead & 0x1F;
      } else if ((lead & 0xF0) == 0xE0) {
        length = 3, code_point = lead & 0x0F;
      } else if ((lead & 0xF8) == 0xF0) {
        length = 4, code_point = lead & 0x07;
      } else {
        return false;
      }
      if (size - i < length) return false;
      for (size_t k = 1; k < length; ++k) {
        if ((text[i + k] & 0xC0) != 0x80) return false;
        code_point = (code_point << 6) | (text[i + k] & 0x3F);
      }
      const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
      if (code_point < kSmallestOfLength[length] || code_point > 0x10FFFF || surrogate) return false;
    }
    i += length;
  }
  return true;
}

std::string Hex8(uint8_t value) {
  char text[5];
  std::snprintf(text, sizeof text, "0x%02X", value);
  return text;
}

// Where the first non-zero byte of [first, last) of `data` is, or `last` if there is none.
uint64_t FirstNonZero(const uint8_t* data, uint64_t first, uint64_t last) {
  return static_cast<uint64_t>(std::find_if(data + first, data + last, [](uint8_t b) { return b != 0; }) - data);
}

// A NUL-padded header text field at byte `at`: its bytes up to the first NUL, which must be
// UTF-8; the bytes after that NUL must be zero.
std::string TextField(const uint8_t* data, size_t at, size_t width, const char* field_name) {
  const uint8_t* field = data + at;
  const size_t length = std::find(field, field + width, uint8_t{0}) - field;
  if (!IsValidUtf8(field, length)) Fail("header ", field_name, " is not valid UTF-8");
  const uint64_t stray = FirstNonZero(data, at + length, at + width);
  if (stray != at + width) {
    Fail("header ", field_name, " holds ", Hex8(data[stray]), " at byte ", stray,
         " after its terminating NUL, expected zero padding");
  }
  return std::string(reinterpret_cast<const char*>(field), length);
}

// `name` as the header's `name` field holds it: cut to at most kNameSize bytes on a UTF-8
// character boundary (dfir.om.schema.header_name).
std::string HeaderName(const std::string& name) {
  if (name.size() <= kNameSize) return name;
  size_t cut = kNameSize;
  while ((static_cast<uint8_t>(name[cut]) & 0xC0) == 0x80) --cut;
  return name.substr(0, cut);
}

bool SameDigest(const Sha256Digest& digest, const uint8_t* recorded) {
  return std::memcmp(digest.data(), recorded, digest.size()) == 0;
}

// Where a table's offsets count from: flow models use the table's end, bundles its start.
enum class OffsetBase { kTableEnd, kTableStart };

class Reader {
 public:
  // `member`: the file is a bundle member (which may not be a bundle itself). `known`: its content
  // digest when already computed, else null. `vouched`: a digest
  // around this file matched, which covers every digest in it: none is hashed.
  Reader(const uint8_t* data, uint64_t size, uint64_t base, bool member, const ContentDigest* known, bool vouched)
      : data_(data), size_(size), base_(base), member_(member), known_(known), vouched_(vouched) {}

  OmFile Read() {
    CheckFrame();
    if (!vouched_) CheckHeaderDigest();
    OmFile file;
    file.base = base_;
    file.size = size_;
    file.header = ReadHeader();
    CheckModelTypeAndCount(file.header);
    CheckFixedFields();
    // Hashed first, compared where it always was, after the tables: whether it matches decides
    // whether the tables' checks hash the partitions (see ReadOm).
    const Sha256Digest content_digest = ContentSha256();
    content_matches_ = vouched_ || SameDigest(content_digest, data_ + header_offset::kChecksum + kContentDigestAt);
    std::vector<std::string> full_names;
    if (file.header.modeltype == static_cast<uint8_t>(ModelType::kFlow)) {
      file.models = ReadFlowModels(file.header.model_num);
    } else {
      file.models = {ReadBundleTable(file.header.model_num, &file.var_size, &full_names)};
    }
    if (!content_matches_) CheckContentDigest(content_digest);
    if (file.header.modeltype == static_cast<uint8_t>(ModelType::kBundle)) {
      ReadBundleMembers(file.models.front(), full_names, &file);
    }
    return file;
  }

 private:
  // The fixed header fields that decide whether the rest can be read at all.
  void CheckFrame() const {
    if (size_ == 0) Fail("file is empty");
    if (size_ < kHeaderSize) Fail("file has ", size_, " bytes, shorter than the ", kHeaderSize, "-byte header");
    const uint32_t magic = LoadU32(data_ + header_offset::kMagic);
    if (magic != kMagic) {
      Fail("bad magic ", Hex32(magic), ", expected ", Hex32(kMagic), " (not a dfir/GE .om file)");
    }
    const uint32_t headsize = LoadU32(data_ + header_offset::kHeadsize);
    if (headsize != kHeaderSize) Fail("header size is ", headsize, ", expected ", kHeaderSize);
    const uint32_t version = LoadU32(data_ + header_offset::kVersion);
    if (version != kFormatVersion) {
      Fail("format version ", Hex32(version), " is not supported, expected ", Hex32(kFormatVersion));
    }
    const uint32_t om_ir_version = LoadU32(data_ + header_offset::kOmIrVersion);
    if (om_ir_version != FixedHeaderValue("om_ir_version")) {
      Fail("om_ir_version ", om_ir_version, " is not supported, expected ", FixedHeaderValue("om_ir_version"),
           " (the revision of dfir's partition contents this reader knows)");
    }
    CheckLengths();
    const uint8_t is_encrypt = data_[header_offset::kIsEncrypt];
    if (is_encrypt != FixedHeaderValue("is_encrypt")) {
      Fail("the model is encrypted (is_encrypt=", int{is_encrypt}, "); dfir reads only unencrypted .om files");
    }
    const uint8_t is_checksum = data_[header_offset::kIsChecksum];
    if (is_checksum != FixedHeaderValue("is_checksum")) {
      Fail("is_checksum is ", int{is_checksum}, ", expected 1: dfir .om files always carry checksums");
    }
  }

  void CheckLengths() const {
    const uint64_t model_length = LoadU64(data_ + header_offset::kModelLength);
    const uint64_t after_header = size_ - kHeaderSize;
    if (model_length > after_header) {
      Fail("file has ", size_, " bytes but its header says ", Wide{kHeaderSize} + model_length, " (",
           kHeaderSize, "-byte header + model_length ", model_length, "): the file is truncated");
    }
    if (model_length < after_header) {
      Fail("file has ", size_, " bytes but its header says ", kHeaderSize + model_length, " (", kHeaderSize,
           "-byte header + model_length ", model_length, "): the file has ", after_header - model_length,
           " unexpected trailing bytes");
    }
    const uint32_t length = LoadU32(data_ + header_offset::kLength);
    const uint64_t expected = std::min<uint64_t>(model_length, kLengthSaturated);
    if (length != expected) {
      Fail("header length is ", length, " but model_length is ", model_length, "; expected length ", expected);
    }
  }

  void CheckHeaderDigest() const {
    uint8_t header[kHeaderSize];
    std::memcpy(header, data_, kHeaderSize);
    uint8_t* slot = header + header_offset::kChecksum + kHeaderDigestAt;
    std::memset(slot, 0, kDigestSize);
    const Sha256Digest digest = Sha256Of(header, kHeaderSize);
    const uint8_t* recorded = data_ + header_offset::kChecksum + kHeaderDigestAt;
    if (!SameDigest(digest, recorded)) {
      Fail("header digest mismatch: the header's SHA-256 is ", DigestPrefix(digest.data()), ", checksum[32:64] records ",
           DigestPrefix(recorded), " (the header was modified)");
    }
  }

  void CheckContentDigest(const Sha256Digest& digest) const {
    const uint8_t* recorded = data_ + header_offset::kChecksum + kContentDigestAt;
    if (!SameDigest(digest, recorded)) {
      Fail("header checksum mismatch: the SHA-256 of the ", size_ - kHeaderSize, " bytes after the header is ",
           DigestPrefix(digest.data()), ", the header records ", DigestPrefix(recorded));
    }
  }

  Header ReadHeader() const {
    namespace at = header_offset;
    Header header;
    header.magic = LoadU32(data_ + at::kMagic);
    header.headsize = LoadU32(data_ + at::kHeadsize);
    header.version = LoadU32(data_ + at::kVersion);
    std::memcpy(header.checksum.data(), data_ + at::kChecksum, header.checksum.size());
    header.length = LoadU32(data_ + at::kLength);
    header.is_encrypt = data_[at::kIsEncrypt];
    header.is_checksum = data_[at::kIsChecksum];
    header.modeltype = data_[at::kModeltype];
    header.genmode = data_[at::kGenmode];
    header.name = TextField(data_, at::kName, kNameSize, "name");
    header.ops = LoadU32(data_ + at::kOps);
    std::memcpy(header.userdefineinfo.data(), data_ + at::kUserdefineinfo, header.userdefineinfo.size());
    header.om_ir_version = LoadU32(data_ + at::kOmIrVersion);
    header.model_num = LoadU32(data_ + at::kModelNum);
    header.platform_version = TextField(data_, at::kPlatformVersion, kPlatformVersionSize, "platform_version");
    header.platform_type = data_[at::kPlatformType];
    header.model_length = LoadU64(data_ + at::kModelLength);
    header.need_check_os_cpu_info = data_[at::kNeedCheckOsCpuInfo];
    header.is_unknow_model = data_[at::kIsUnknowModel];
    return header;
  }

  void CheckModelTypeAndCount(const Header& header) const {
    if (header.modeltype != static_cast<uint8_t>(ModelType::kFlow) &&
        header.modeltype != static_cast<uint8_t>(ModelType::kBundle)) {
      Fail("model type ", int{header.modeltype}, " is not supported, expected 3 (FLOW) or 5 (BUNDLE)");
    }
    if (member_ && header.modeltype == static_cast<uint8_t>(ModelType::kBundle)) {
      Fail("model type 5 (BUNDLE) is not allowed in a bundle: bundles do not nest, a bundle's members are flow "
           "models (model type 3)");
    }
    if (header.model_num == 0 || header.model_num > kMaxModels) {
      Fail("model_num is ", header.model_num, ", expected 1 to ", kMaxModels);
    }
  }

  // The GE flags dfir does not use hold their one value; the pad and reserved bytes are zero.
  void CheckFixedFields() const {
    namespace at = header_offset;
    static constexpr std::pair<const char*, size_t> kFlags[] = {
        {"genmode", at::kGenmode},
        {"platform_type", at::kPlatformType},
        {"need_check_os_cpu_info", at::kNeedCheckOsCpuInfo},
        {"is_unknow_model", at::kIsUnknowModel},
    };
    for (const auto& [field, offset] : kFlags) {
      if (data_[offset] != FixedHeaderValue(field)) {
        Fail(field, " is ", int{data_[offset]}, ", expected ", FixedHeaderValue(field));
      }
    }
    static constexpr std::tuple<const char*, size_t, size_t> kZeros[] = {
        {"padd", at::kPadd, at::kModelLength},
        {"reserved", at::kReserved, kHeaderSize},
    };
    for (const auto& [field, first, last] : kZeros) {
      const uint64_t stray = FirstNonZero(data_, first, last);
      if (stray != last) {
        Fail("header ", field, " holds ", Hex8(data_[stray]), " at byte ", stray, ", expected zero bytes");
      }
    }
  }

  // `what` lies at [first, last) of the file and must be zero bytes.
  void CheckPadding(uint64_t first, uint64_t last, const std::string& what) const {
    const uint64_t stray = FirstNonZero(data_, first, last);
    if (stray != last) {
      Fail("padding before ", what, " holds ", Hex8(data_[stray]), " at byte ", stray, ", expected zero bytes");
    }
  }

  // The table at `start` and its partitions; `*end` receives where the last partition ends.
  // The bytes from `padding_from` to `start` (the alignment before the table) must be zero.
  Model ReadTable(uint64_t start, uint64_t padding_from, const std::string& label, OffsetBase offset_base,
                  uint64_t* end) const {
    if (start > size_ || size_ - start < kTableHeaderSize) {
      Fail(label, "'s partition table at byte ", start, " runs past the end of the ", size_, "-byte file");
    }
    CheckPadding(padding_from, start, label + "'s partition table");
    const uint32_t count = LoadU32(data_ + start);
    if (count > kMaxPartitions) Fail(label, " has ", count, " partitions, more than the limit of ", kMaxPartitions);
    const uint32_t table_pad = LoadU32(data_ + start + 4);
    if (table_pad != 0) Fail(label, "'s partition table pad is ", table_pad, ", expected 0");
    const uint64_t table_size = kTableHeaderSize + uint64_t{kTableEntrySize} * count;
    if (size_ - start < table_size) {
      Fail(label, "'s partition table of ", count, " entries ends at byte ", start + table_size, " but the file has ",
           size_, " bytes");
    }
    const uint64_t base = offset_base == OffsetBase::kTableEnd ? start + table_size : start;
    uint64_t cursor = start + table_size;
    Model model;
    model.partitions.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const uint8_t* entry = data_ + start + kTableHeaderSize + uint64_t{kTableEntrySize} * i;
      const Partition partition{LoadU32(entry), LoadU64(entry + 8), LoadU64(entry + 16)};
      const char* type_name = PartitionTypeName(partition.type);
      if (type_name == nullptr) Fail("partition ", i, " of ", label, " has unknown type ", partition.type);
      const uint32_t entry_pad = LoadU32(entry + 4);
      if (entry_pad != 0) {
        Fail("partition ", i, " (", type_name, ") of ", label, " has pad ", entry_pad, ", expected 0");
      }
      const Wide first = Wide{base} + partition.offset;
      const Wide expected = AlignUp(cursor);
      if (first != expected) {
        Fail("partition ", i, " (", type_name, ") of ", label, " starts at byte ", first, ", expected ", expected,
             " (partitions follow one another on ", kPartitionAlignment, "-byte boundaries)");
      }
      const Wide past_last = first + partition.size;
      if (past_last > size_) {
        Fail("partition ", i, " (", type_name, ") of ", label, " ends at byte ", past_last, " but the file has ",
             size_, " bytes");
      }
      CheckPadding(cursor, static_cast<uint64_t>(first),
                   "partition " + std::to_string(i) + " (" + type_name + ") of " + label);
      model.partitions.push_back({partition.type, static_cast<uint64_t>(first), partition.size});
      cursor = static_cast<uint64_t>(past_last);
    }
    *end = cursor;
    return model;
  }

  void CheckEndsAtFileEnd(uint64_t end, const std::string& label) const {
    if (end != size_) {
      Fail(label, " ends at byte ", end, " but the file has ", size_, " bytes (", size_ - end,
           " unexpected trailing bytes)");
    }
  }

  std::vector<Model> ReadFlowModels(uint32_t model_num) const {
    std::vector<Model> models;
    uint64_t end = kHeaderSize;
    for (uint32_t index = 0; index < model_num; ++index) {
      const std::string label = "model " + std::to_string(index);
      // AlignUp stays far below 2**64: `end` never exceeds the size of a buffer in memory.
      models.push_back(ReadTable(static_cast<uint64_t>(AlignUp(end)), end, label, OffsetBase::kTableEnd, &end));
      CheckFlowPartitions(models.back(), label);
    }
    CheckEndsAtFileEnd(end, "model " + std::to_string(model_num - 1));
    return models;
  }

  // A flow model's partitions end with PARTITION_CHECKSUMS, the SHA-256 of each other one.
  void CheckFlowPartitions(const Model& model, const std::string& label) const {
    const std::vector<Partition>& partitions = model.partitions;
    if (partitions.empty()) Fail(label, " has no partitions, expected at least PARTITION_CHECKSUMS");
    for (size_t i = 0; i < partitions.size(); ++i) {
      const auto type = static_cast<PartitionType>(partitions[i].type);
      if (type == PartitionType::kBundleModelInfo || type == PartitionType::kBundleModelVarInfo ||
          type == PartitionType::kBundleModelNames) {
        Fail("partition ", i, " (", PartitionTypeName(partitions[i].type), ") of ", label,
             " is a bundle partition, which only a bundle's table may hold");
      }
      if (type == PartitionType::kPartitionChecksums && i + 1 != partitions.size()) {
        Fail("partition ", i, " of ", label, " is PARTITION_CHECKSUMS, which only the last partition may be");
      }
    }
    const Partition& checksums = partitions.back();
    if (static_cast<PartitionType>(checksums.type) != PartitionType::kPartitionChecksums) {
      Fail(label, "'s last partition is ", PartitionTypeName(checksums.type), ", expected PARTITION_CHECKSUMS");
    }
    const size_t covered = partitions.size() - 1;
    if (checksums.size != kDigestSize * covered) {
      Fail("PARTITION_CHECKSUMS of ", label, " has ", checksums.size, " bytes, expected ", kDigestSize * covered,
           " (a ", kDigestSize, "-byte SHA-256 for each of its other ", covered, " partitions)");
    }
    for (size_t i = 0; i < covered && !content_matches_; ++i) {
      const Sha256Digest digest = Sha256Of(data_ + partitions[i].offset, partitions[i].size);
      const uint8_t* recorded = data_ + checksums.offset + kDigestSize * i;
      if (!SameDigest(digest, recorded)) {
        Fail("partition ", i, " (", PartitionTypeName(partitions[i].type), ") of ", label,
             " checksum mismatch: its SHA-256 is ", DigestPrefix(digest.data()), ", PARTITION_CHECKSUMS records ",
             DigestPrefix(recorded));
      }
    }
  }

  // GE's bundle table: entry 0 BUNDLE_MODEL_VAR_INFO (a u64), then one BUNDLE_MODEL_INFO per model,
  // then BUNDLE_MODEL_NAMES when a member's name does not fit its header (its names into `*names`).
  Model ReadBundleTable(uint32_t model_num, uint64_t* var_size, std::vector<std::string>* names) const {
    const std::string label = "the bundle table";
    uint64_t end = 0;
    Model table = ReadTable(kHeaderSize, kHeaderSize, label, OffsetBase::kTableStart, &end);
    const std::vector<Partition>& entries = table.partitions;
    const uint64_t models_end = uint64_t{model_num} + 1;
    if (entries.size() != models_end && entries.size() != models_end + 1) {
      Fail("bundle has model_num ", model_num, " but its table has ", entries.size(), " entries, expected ", models_end,
           " (BUNDLE_MODEL_VAR_INFO and one BUNDLE_MODEL_INFO per model) or ", models_end + 1,
           " (with BUNDLE_MODEL_NAMES last)");
    }
    if (static_cast<PartitionType>(entries[0].type) != PartitionType::kBundleModelVarInfo) {
      Fail("bundle table entry 0 is ", PartitionTypeName(entries[0].type), ", expected BUNDLE_MODEL_VAR_INFO");
    }
    if (entries[0].size != kBundleVarInfoSize) {
      Fail("BUNDLE_MODEL_VAR_INFO has ", entries[0].size, " bytes, expected ", kBundleVarInfoSize,
           " (a u64 variable memory size)");
    }
    for (size_t i = 1; i < models_end; ++i) {
      if (static_cast<PartitionType>(entries[i].type) != PartitionType::kBundleModelInfo) {
        Fail("bundle table entry ", i, " is ", PartitionTypeName(entries[i].type), ", expected BUNDLE_MODEL_INFO");
      }
    }
    if (entries.size() > models_end) {
      const Partition& last = entries.back();
      if (static_cast<PartitionType>(last.type) != PartitionType::kBundleModelNames) {
        Fail("bundle table entry ", models_end, " is ", PartitionTypeName(last.type),
             ", expected BUNDLE_MODEL_NAMES (the one entry allowed after the BUNDLE_MODEL_INFO entries)");
      }
      *names = ReadBundleNames(last, model_num);
    }
    CheckEndsAtFileEnd(end, label);
    *var_size = LoadU64(data_ + entries[0].offset);
    return table;
  }

  // BUNDLE_MODEL_NAMES: `model_num` UTF-8 names, each followed by a NUL; one at least longer than
  // the header's name field (else the partition is not written).
  std::vector<std::string> ReadBundleNames(const Partition& partition, uint32_t model_num) const {
    const uint8_t* text = data_ + partition.offset;
    const uint64_t size = partition.size;
    if (size == 0 || text[size - 1] != 0) {
      Fail("BUNDLE_MODEL_NAMES (", size, " bytes) does not end with a NUL byte, expected one NUL-terminated name per "
           "bundle model");
    }
    std::vector<std::string> names;
    for (uint64_t first = 0; first < size;) {  // the last byte is a NUL: every name ends inside
      const uint64_t nul = static_cast<uint64_t>(std::find(text + first, text + size, uint8_t{0}) - text);
      if (names.size() == model_num) {
        Fail("BUNDLE_MODEL_NAMES holds more than ", model_num, " names, expected ", model_num,
             " (one NUL-terminated name per bundle model)");
      }
      if (!IsValidUtf8(text + first, nul - first)) {
        Fail("BUNDLE_MODEL_NAMES name ", names.size(), " is not valid UTF-8");
      }
      names.emplace_back(reinterpret_cast<const char*>(text + first), nul - first);
      first = nul + 1;
    }
    if (names.size() != model_num) {
      Fail("BUNDLE_MODEL_NAMES holds ", names.size(), " names, expected ", model_num,
           " (one NUL-terminated name per bundle model)");
    }
    if (std::all_of(names.begin(), names.end(), [](const std::string& name) { return name.size() <= kNameSize; })) {
      Fail("BUNDLE_MODEL_NAMES is present but every name fits the ", kNameSize,
           "-byte header name (it is written only when one does not)");
    }
    return names;
  }

  // Each member, validated; its name is its header's or, when `full_names` is given, its entry
  // there (which the header holds cut to kNameSize bytes). Names are non-empty and distinct.
  void ReadBundleMembers(const Model& table, const std::vector<std::string>& full_names, OmFile* file) const {
    std::unordered_map<std::string, size_t> index_of_name;
    for (size_t i = 1; i <= file->header.model_num; ++i) {
      const Partition& entry = table.partitions[i];
      const size_t index = i - 1;
      try {
        file->bundle.push_back(
            Reader(data_ + entry.offset, entry.size, base_ + entry.offset, true, nullptr, content_matches_).Read());
      } catch (const OmError& error) {
        Fail("bundle model ", index, ": ", error.what());
      }
      const std::string& header_name = file->bundle.back().header.name;
      const std::string& name = full_names.empty() ? header_name : full_names[index];
      if (name.empty()) Fail("bundle model ", index, " has an empty name");
      if (HeaderName(name) != header_name) {
        Fail("bundle model ", index, "'s header name \"", header_name, "\" is not its name \"", name,
             "\" from BUNDLE_MODEL_NAMES cut to ", kNameSize, " bytes");
      }
      const auto [previous, inserted] = index_of_name.emplace(name, index);
      if (!inserted) Fail("bundle models ", previous->second, " and ", index, " are both named \"", name, "\"");
      file->member_names.push_back(name);
    }
  }

  // The SHA-256 of this file's bytes after the header: the known one, else computed (unless
  // the file is vouched for).
  Sha256Digest ContentSha256() const {
    if (known_ != nullptr && known_->size == size_ - kHeaderSize) return known_->digest;
    return vouched_ ? Sha256Digest{} : Sha256Of(data_ + kHeaderSize, size_ - kHeaderSize);
  }

  const uint8_t* data_;
  uint64_t size_;
  uint64_t base_;
  bool member_;
  const ContentDigest* known_;
  bool vouched_;
  bool content_matches_ = false;  // set by Read before the tables are read
};

}  // namespace

OmFile ReadOm(const uint8_t* data, size_t size, const ContentDigest* known) {
  return Reader(data, size, 0, false, known, false).Read();
}

}  // namespace dfir::om
