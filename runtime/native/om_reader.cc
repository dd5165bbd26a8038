#include "om_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "sha256.h"

namespace dfir::om {
namespace {

// Wide enough that offset + size of two u64 fields never wraps.
__extension__ typedef unsigned __int128 Wide;

uint32_t LoadU32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

uint64_t LoadU64(const uint8_t* p) { return uint64_t{LoadU32(p)} | (uint64_t{LoadU32(p + 4)} << 32); }

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

// A NUL-padded header text field: its bytes up to the first NUL, which must be UTF-8.
std::string TextField(const uint8_t* field, size_t width, const char* field_name) {
  const size_t length = std::find(field, field + width, uint8_t{0}) - field;
  if (!IsValidUtf8(field, length)) Fail("header ", field_name, " is not valid UTF-8");
  return std::string(reinterpret_cast<const char*>(field), length);
}

bool SameDigest(const Sha256Digest& digest, const uint8_t* recorded) {
  return std::memcmp(digest.data(), recorded, digest.size()) == 0;
}

// Where a table's offsets count from: flow models use the table's end, bundles its start.
enum class OffsetBase { kTableEnd, kTableStart };

class Reader {
 public:
  Reader(const uint8_t* data, uint64_t size, uint64_t base, int depth)
      : data_(data), size_(size), base_(base), depth_(depth) {}

  OmFile Read() const {
    CheckFrame();
    CheckHeaderDigest();
    OmFile file;
    file.base = base_;
    file.size = size_;
    file.header = ReadHeader();
    CheckModelTypeAndCount(file.header);
    if (file.header.modeltype == static_cast<uint8_t>(ModelType::kFlow)) {
      file.models = ReadFlowModels(file.header.model_num);
    } else {
      file.models = {ReadBundleTable(file.header.model_num, &file.var_size)};
    }
    CheckContentDigest();
    if (file.header.modeltype == static_cast<uint8_t>(ModelType::kBundle)) {
      file.bundle = ReadBundleMembers(file.models.front());
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
    CheckLengths();
    const uint8_t is_encrypt = data_[header_offset::kIsEncrypt];
    if (is_encrypt != 0) {
      Fail("the model is encrypted (is_encrypt=", int{is_encrypt}, "); dfir reads only unencrypted .om files");
    }
    const uint8_t is_checksum = data_[header_offset::kIsChecksum];
    if (is_checksum != 1) {
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

  void CheckContentDigest() const {
    const Sha256Digest digest = Sha256Of(data_ + kHeaderSize, size_ - kHeaderSize);
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
    header.name = TextField(data_ + at::kName, kNameSize, "name");
    header.ops = LoadU32(data_ + at::kOps);
    std::memcpy(header.userdefineinfo.data(), data_ + at::kUserdefineinfo, header.userdefineinfo.size());
    header.om_ir_version = LoadU32(data_ + at::kOmIrVersion);
    header.model_num = LoadU32(data_ + at::kModelNum);
    header.platform_version = TextField(data_ + at::kPlatformVersion, kPlatformVersionSize, "platform_version");
    header.platform_type = data_[at::kPlatformType];
    header.model_length = LoadU64(data_ + at::kModelLength);
    header.need_check_os_cpu_info = data_[at::kNeedCheckOsCpuInfo];
    header.is_unknow_model = data_[at::kIsUnknowModel];
    return header;
  }

  static void CheckModelTypeAndCount(const Header& header) {
    if (header.modeltype != static_cast<uint8_t>(ModelType::kFlow) &&
        header.modeltype != static_cast<uint8_t>(ModelType::kBundle)) {
      Fail("model type ", int{header.modeltype}, " is not supported, expected 3 (FLOW) or 5 (BUNDLE)");
    }
    if (header.model_num == 0 || header.model_num > kMaxModels) {
      Fail("model_num is ", header.model_num, ", expected 1 to ", kMaxModels);
    }
  }

  // The table at `start` and its partitions; `*end` receives where the last partition ends.
  Model ReadTable(uint64_t start, const std::string& label, OffsetBase offset_base, uint64_t* end) const {
    if (start > size_ || size_ - start < kTableHeaderSize) {
      Fail(label, "'s partition table at byte ", start, " runs past the end of the ", size_, "-byte file");
    }
    const uint32_t count = LoadU32(data_ + start);
    if (count > kMaxPartitions) Fail(label, " has ", count, " partitions, more than the limit of ", kMaxPartitions);
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
      models.push_back(ReadTable(static_cast<uint64_t>(AlignUp(end)), label, OffsetBase::kTableEnd, &end));
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
      if (type == PartitionType::kBundleModelInfo || type == PartitionType::kBundleModelVarInfo) {
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
    for (size_t i = 0; i < covered; ++i) {
      const Sha256Digest digest = Sha256Of(data_ + partitions[i].offset, partitions[i].size);
      const uint8_t* recorded = data_ + checksums.offset + kDigestSize * i;
      if (!SameDigest(digest, recorded)) {
        Fail("partition ", i, " (", PartitionTypeName(partitions[i].type), ") of ", label,
             " checksum mismatch: its SHA-256 is ", DigestPrefix(digest.data()), ", PARTITION_CHECKSUMS records ",
             DigestPrefix(recorded));
      }
    }
  }

  // GE's bundle table: entry 0 BUNDLE_MODEL_VAR_INFO (a u64), then one BUNDLE_MODEL_INFO per model.
  Model ReadBundleTable(uint32_t model_num, uint64_t* var_size) const {
    const std::string label = "the bundle table";
    uint64_t end = 0;
    Model table = ReadTable(kHeaderSize, label, OffsetBase::kTableStart, &end);
    const std::vector<Partition>& entries = table.partitions;
    if (entries.size() != uint64_t{model_num} + 1) {
      Fail("bundle has model_num ", model_num, " but its table has ", entries.size(), " entries, expected ",
           uint64_t{model_num} + 1, " (BUNDLE_MODEL_VAR_INFO and one BUNDLE_MODEL_INFO per model)");
    }
    if (static_cast<PartitionType>(entries[0].type) != PartitionType::kBundleModelVarInfo) {
      Fail("bundle table entry 0 is ", PartitionTypeName(entries[0].type), ", expected BUNDLE_MODEL_VAR_INFO");
    }
    if (entries[0].size != kBundleVarInfoSize) {
      Fail("BUNDLE_MODEL_VAR_INFO has ", entries[0].size, " bytes, expected ", kBundleVarInfoSize,
           " (a u64 variable memory size)");
    }
    for (size_t i = 1; i < entries.size(); ++i) {
      if (static_cast<PartitionType>(entries[i].type) != PartitionType::kBundleModelInfo) {
        Fail("bundle table entry ", i, " is ", PartitionTypeName(entries[i].type), ", expected BUNDLE_MODEL_INFO");
      }
    }
    CheckEndsAtFileEnd(end, label);
    *var_size = LoadU64(data_ + entries[0].offset);
    return table;
  }

  std::vector<OmFile> ReadBundleMembers(const Model& table) const {
    if (depth_ + 1 > kMaxBundleDepth) Fail("bundles nest more than ", kMaxBundleDepth, " levels deep");
    std::vector<OmFile> members;
    std::unordered_map<std::string, size_t> index_of_name;
    for (size_t i = 1; i < table.partitions.size(); ++i) {
      const Partition& entry = table.partitions[i];
      const size_t index = i - 1;
      try {
        members.push_back(Reader(data_ + entry.offset, entry.size, base_ + entry.offset, depth_ + 1).Read());
      } catch (const OmError& error) {
        Fail("bundle model ", index, ": ", error.what());
      }
      const std::string& name = members.back().header.name;
      if (name.empty()) Fail("bundle model ", index, " has an empty name");
      const auto [previous, inserted] = index_of_name.emplace(name, index);
      if (!inserted) Fail("bundle models ", previous->second, " and ", index, " are both named \"", name, "\"");
    }
    return members;
  }

  const uint8_t* data_;
  uint64_t size_;
  uint64_t base_;
  int depth_;
};

}  // namespace

OmFile ReadOm(const uint8_t* data, size_t size) { return Reader(data, size, 0, 0).Read(); }

}  // namespace dfir::om
