// ReadOm (runtime/native/om_reader.h): validating `.om` containers in memory. Files are built
// here byte by byte (docs/om-format.md); each defect must give its own OmError.
#include "om_reader.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sha256.h"

using dfir::om::OmError;
using dfir::om::OmFile;
using dfir::om::PartitionType;
using dfir::om::ReadOm;
namespace at = dfir::om::header_offset;

namespace {

using Bytes = std::vector<uint8_t>;

void PutU32(Bytes& bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

void PutU64(Bytes& bytes, size_t at, uint64_t value) {
  PutU32(bytes, at, static_cast<uint32_t>(value));
  PutU32(bytes, at + 4, static_cast<uint32_t>(value >> 32));
}

uint64_t AlignUp(uint64_t value) { return (value + 63) / 64 * 64; }

Bytes Text(const std::string& text) { return Bytes(text.begin(), text.end()); }

// Writes the header's two digests: the content's, then the header's own (its slot zeroed).
void Seal(Bytes& file) {
  dfir::Sha256Digest content = dfir::Sha256Of(file.data() + 256, file.size() - 256);
  std::memcpy(file.data() + at::kChecksum, content.data(), 32);
  std::memset(file.data() + at::kChecksum + 32, 0, 32);
  dfir::Sha256Digest header = dfir::Sha256Of(file.data(), 256);
  std::memcpy(file.data() + at::kChecksum + 32, header.data(), 32);
}

// Only the header digest again, after a change of the header.
void SealHeader(Bytes& file) {
  std::memset(file.data() + at::kChecksum + 32, 0, 32);
  dfir::Sha256Digest header = dfir::Sha256Of(file.data(), 256);
  std::memcpy(file.data() + at::kChecksum + 32, header.data(), 32);
}

Bytes Header(uint8_t model_type, uint32_t model_num, const std::string& name) {
  Bytes header(256, 0);
  PutU32(header, at::kMagic, dfir::om::kMagic);
  PutU32(header, at::kHeadsize, 256);
  PutU32(header, at::kVersion, dfir::om::kFormatVersion);
  header[at::kIsChecksum] = 1;
  header[at::kModeltype] = model_type;
  std::memcpy(header.data() + at::kName, name.data(), name.size());
  PutU32(header, at::kOmIrVersion, dfir::om::kOmIrVersion);
  PutU32(header, at::kModelNum, model_num);
  return header;
}

void SetLengths(Bytes& file) {
  uint64_t model_length = file.size() - 256;
  PutU64(file, at::kModelLength, model_length);
  PutU32(file, at::kLength, static_cast<uint32_t>(model_length));
}

// Appends a table at the next 64-byte boundary and its partitions after it, each on a
// boundary; offsets count from the table's end (flow) or its start (bundle).
void AppendTable(Bytes& file, const std::vector<std::pair<PartitionType, Bytes>>& partitions, bool from_start) {
  file.resize(AlignUp(file.size()), 0);
  const uint64_t start = file.size();
  const uint64_t table_end = start + 8 + 24 * partitions.size();
  file.resize(table_end, 0);
  PutU32(file, start, static_cast<uint32_t>(partitions.size()));
  const uint64_t base = from_start ? start : table_end;
  for (size_t i = 0; i < partitions.size(); ++i) {
    file.resize(AlignUp(file.size()), 0);
    const uint64_t entry = start + 8 + 24 * i;
    PutU32(file, entry, static_cast<uint32_t>(partitions[i].first));
    PutU64(file, entry + 8, file.size() - base);
    PutU64(file, entry + 16, partitions[i].second.size());
    file.insert(file.end(), partitions[i].second.begin(), partitions[i].second.end());
  }
}

// A flow model's partitions, with PARTITION_CHECKSUMS last.
std::vector<std::pair<PartitionType, Bytes>> FlowPartitions(const std::vector<std::pair<PartitionType, Bytes>>& parts) {
  std::vector<std::pair<PartitionType, Bytes>> all = parts;
  Bytes checksums;
  for (const auto& part : parts) {
    dfir::Sha256Digest digest = dfir::Sha256Of(part.second.data(), part.second.size());
    checksums.insert(checksums.end(), digest.begin(), digest.end());
  }
  all.emplace_back(PartitionType::kPartitionChecksums, checksums);
  return all;
}

// A flow file of `models` models, each of an IR_TEXT and a WEIGHTS_DATA partition.
Bytes FlowFile(const std::string& name = "pipeline", uint32_t models = 1) {
  Bytes file = Header(3, models, name);
  for (uint32_t m = 0; m < models; ++m) {
    AppendTable(file,
                FlowPartitions({{PartitionType::kIrText, Text("module { ir " + std::to_string(m) + " }")},
                                {PartitionType::kWeightsData, Bytes(100 + m, static_cast<uint8_t>(m + 1))}}),
                false);
  }
  SetLengths(file);
  Seal(file);
  return file;
}

// A bundle of flow files named `names`; BUNDLE_MODEL_NAMES when `full_names` is given.
Bytes BundleFile(const std::vector<std::string>& names, const std::vector<std::string>& full_names = {}) {
  Bytes file = Header(5, static_cast<uint32_t>(names.size()), "bundle");
  Bytes var_info(8, 0);
  PutU64(var_info, 0, 4096);
  std::vector<std::pair<PartitionType, Bytes>> entries = {{PartitionType::kBundleModelVarInfo, var_info}};
  for (const std::string& name : names) entries.emplace_back(PartitionType::kBundleModelInfo, FlowFile(name));
  if (!full_names.empty()) {
    Bytes text;
    for (const std::string& name : full_names) {
      text.insert(text.end(), name.begin(), name.end());
      text.push_back(0);
    }
    entries.emplace_back(PartitionType::kBundleModelNames, text);
  }
  AppendTable(file, entries, true);
  SetLengths(file);
  Seal(file);
  return file;
}

OmFile Read(const Bytes& file) { return ReadOm(file.data(), file.size()); }

// The OmError text of reading `file`, or "" when it reads.
std::string ErrorOf(const Bytes& file) {
  try {
    Read(file);
  } catch (const OmError& error) {
    return error.what();
  }
  return "";
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("om_reader") {

TEST_CASE("SHA-256 is FIPS 180-4's") {
  const std::string abc = "abc";
  dfir::Sha256Digest digest = dfir::Sha256Of(reinterpret_cast<const uint8_t*>(abc.data()), abc.size());
  const uint8_t expected[] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
                              0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
                              0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
  CHECK(std::memcmp(digest.data(), expected, 32) == 0);
}

TEST_CASE("SHA-256 fed in pieces is the digest of the whole") {
  Bytes bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  dfir::Sha256Stream stream;
  stream.Update(bytes.data(), 1);
  stream.Update(bytes.data() + 1, 0);
  stream.Update(bytes.data() + 1, 63);
  stream.Update(bytes.data() + 64, bytes.size() - 64);
  CHECK(stream.Finish() == dfir::Sha256Of(bytes.data(), bytes.size()));
}

TEST_CASE("a valid flow file reads: header fields and every partition's place") {
  Bytes file = FlowFile("pipeline", 2);
  OmFile om = Read(file);
  CHECK(om.size == file.size());
  CHECK(om.base == 0);
  CHECK(om.header.magic == dfir::om::kMagic);
  CHECK(om.header.modeltype == 3);
  CHECK(om.header.model_num == 2);
  CHECK(om.header.name == "pipeline");
  CHECK(om.header.platform_version.empty());
  CHECK(om.header.model_length == file.size() - 256);
  REQUIRE(om.models.size() == 2);
  for (uint32_t m = 0; m < 2; ++m) {
    REQUIRE(om.models[m].partitions.size() == 3);
    const auto& ir = om.models[m].partitions[0];
    CHECK(ir.type == static_cast<uint32_t>(PartitionType::kIrText));
    CHECK(ir.offset % 64 == 0);
    std::string text(reinterpret_cast<const char*>(file.data() + ir.offset), ir.size);
    CHECK(text == "module { ir " + std::to_string(m) + " }");
    CHECK(om.models[m].partitions[1].size == 100 + m);
    CHECK(file[om.models[m].partitions[1].offset] == m + 1);
    CHECK(om.models[m].partitions[2].type == static_cast<uint32_t>(PartitionType::kPartitionChecksums));
  }
  CHECK(om.bundle.empty());
}

TEST_CASE("a file too short for a header") {
  CHECK(ErrorOf({}) == "file is empty");
  Bytes file = FlowFile();
  file.resize(100);
  CHECK(ErrorOf(file) == "file has 100 bytes, shorter than the 256-byte header");
}

TEST_CASE("a truncated file, and one with trailing bytes") {
  Bytes file = FlowFile();
  const uint64_t size = file.size();
  Bytes cut(file.begin(), file.end() - 10);
  CHECK(ErrorOf(cut) == "file has " + std::to_string(size - 10) + " bytes but its header says " + std::to_string(size) +
                            " (256-byte header + model_length " + std::to_string(size - 256) +
                            "): the file is truncated");
  Bytes longer = file;
  longer.resize(size + 3, 0);
  CHECK(ErrorOf(longer) == "file has " + std::to_string(size + 3) + " bytes but its header says " +
                               std::to_string(size) + " (256-byte header + model_length " + std::to_string(size - 256) +
                               "): the file has 3 unexpected trailing bytes");
}

TEST_CASE("every prefix of a valid file is an OmError, never a crash or a success") {
  Bytes file = FlowFile("pipeline", 2);
  for (size_t size = 0; size < file.size(); ++size) {
    Bytes prefix(file.begin(), file.begin() + static_cast<long>(size));  // exactly sized: reads past it fault
    bool refused = false;
    try {
      ReadOm(prefix.data(), prefix.size());
    } catch (const OmError&) {
      refused = true;
    }
    REQUIRE(refused);
  }
}

TEST_CASE("every single flipped byte is caught") {
  Bytes file = FlowFile("pipeline", 2);
  for (size_t i = 0; i < file.size(); ++i) {
    Bytes changed = file;
    changed[i] ^= 0x01;
    CAPTURE(i);
    REQUIRE(ErrorOf(changed) != "");
  }
}

TEST_CASE("the frame: magic, header size, version, om_ir_version, length, encryption, checksums") {
  Bytes file = FlowFile();
  auto error_with = [&](size_t offset, uint32_t value, bool byte = false) {
    Bytes changed = file;
    if (byte) {
      changed[offset] = static_cast<uint8_t>(value);
    } else {
      PutU32(changed, offset, value);
    }
    SealHeader(changed);
    return ErrorOf(changed);
  };
  CHECK(error_with(at::kMagic, 0x12345678) == "bad magic 0x12345678, expected 0x444F4D49 (not a dfir/GE .om file)");
  CHECK(error_with(at::kHeadsize, 128) == "header size is 128, expected 256");
  CHECK(error_with(at::kVersion, 0x10000000) == "format version 0x10000000 is not supported, expected 0x20000000");
  CHECK(Contains(error_with(at::kOmIrVersion, 2), "om_ir_version 2 is not supported, expected 1"));
  CHECK(Contains(error_with(at::kLength, 5), "header length is 5 but model_length is "));
  CHECK(error_with(at::kIsEncrypt, 1, true) ==
        "the model is encrypted (is_encrypt=1); dfir reads only unencrypted .om files");
  CHECK(error_with(at::kIsChecksum, 0, true) == "is_checksum is 0, expected 1: dfir .om files always carry checksums");
  CHECK(error_with(at::kModeltype, 4, true) == "model type 4 is not supported, expected 3 (FLOW) or 5 (BUNDLE)");
  CHECK(error_with(at::kModelNum, 0) == "model_num is 0, expected 1 to 1024");
  CHECK(error_with(at::kGenmode, 2, true) == "genmode is 2, expected 0");
  CHECK(error_with(at::kPadd + 1, 7, true) == "header padd holds 0x07 at byte 182, expected zero bytes");
  CHECK(error_with(at::kReserved + 10, 1, true) == "header reserved holds 0x01 at byte 204, expected zero bytes");
  CHECK(error_with(at::kName + 20, 'x', true) ==
        "header name holds 0x78 at byte 104 after its terminating NUL, expected zero padding");
  CHECK(error_with(at::kName, 0xFF, true) == "header name is not valid UTF-8");
}

TEST_CASE("header names are UTF-8: multibyte text reads; overlong, surrogate, out-of-range or cut bytes do not") {
  CHECK(Read(FlowFile("\xE5\x90\x8D\xE5\x89\x8D-\xF0\x9F\x98\x80")).header.name ==
        "\xE5\x90\x8D\xE5\x89\x8D-\xF0\x9F\x98\x80");
  CHECK(Read(FlowFile(std::string(32, 'n'))).header.name == std::string(32, 'n'));  // no NUL: the whole field
  const char* const bad_names[] = {"\xC0\x80",         "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                   "ab\xE5\x90",        "\x80",         "\xF8\x88\x80\x80\x80"};
  for (const char* bad : bad_names) {
    CAPTURE(bad);
    CHECK(ErrorOf(FlowFile(bad)) == "header name is not valid UTF-8");
  }
}

TEST_CASE("digests: a changed header, a changed content digest") {
  Bytes file = FlowFile();
  Bytes header_changed = file;
  header_changed[at::kOps] = 1;  // not resealed
  CHECK(Contains(ErrorOf(header_changed), "header digest mismatch: the header's SHA-256 is "));
  CHECK(Contains(ErrorOf(header_changed), "(the header was modified)"));
  Bytes content_changed = file;
  content_changed[at::kChecksum] ^= 0xFF;  // the recorded content digest
  SealHeader(content_changed);
  CHECK(Contains(ErrorOf(content_changed),
                 "header checksum mismatch: the SHA-256 of the " + std::to_string(file.size() - 256) +
                     " bytes after the header is "));
}

TEST_CASE("a matching content digest vouches for the partition digests; a known one is not hashed again") {
  Bytes file = FlowFile();
  OmFile om = Read(file);
  const auto& weights = om.models[0].partitions[1];
  Bytes resealed = file;
  resealed[weights.offset + 5] ^= 0x10;  // PARTITION_CHECKSUMS now stale, the content digest renewed
  Seal(resealed);
  CHECK(Read(resealed).models[0].partitions[1].size == weights.size);
  // a known digest stands for the one recorded: a wrong one fails as if hashed
  dfir::om::ContentDigest wrong{file.size() - 256, {}};
  std::string error;
  try {
    dfir::om::ReadOm(file.data(), file.size(), &wrong);
  } catch (const OmError& failure) {
    error = failure.what();
  }
  CHECK(Contains(error, "header checksum mismatch: the SHA-256 of the "));
  dfir::om::ContentDigest right{file.size() - 256, dfir::Sha256Of(file.data() + 256, file.size() - 256)};
  Bytes unsealed = file;
  unsealed[weights.offset + 5] ^= 0x10;
  CHECK(dfir::om::ReadOm(unsealed.data(), unsealed.size(), &right).models.size() == 1);
}

TEST_CASE("partitions: a changed byte, stray padding, bounds, unknown types") {
  Bytes file = FlowFile();
  OmFile om = Read(file);
  const auto& weights = om.models[0].partitions[1];
  Bytes changed = file;
  changed[weights.offset + 5] ^= 0x10;
  CHECK(Contains(ErrorOf(changed), "partition 1 (WEIGHTS_DATA) of model 0 checksum mismatch: its SHA-256 is "));
  // The bytes between IR_TEXT's end and WEIGHTS_DATA's 64-byte boundary must be zero.
  const auto& ir = om.models[0].partitions[0];
  Bytes padded = file;
  padded[ir.offset + ir.size] = 9;
  CHECK(ErrorOf(padded) == "padding before partition 1 (WEIGHTS_DATA) of model 0 holds 0x09 at byte " +
                               std::to_string(ir.offset + ir.size) + ", expected zero bytes");
  const uint64_t table = 256;
  Bytes oversized = file;
  PutU64(oversized, table + 8 + 24 * 2 + 16, 1000);  // PARTITION_CHECKSUMS' size
  CHECK(ErrorOf(oversized) == "partition 2 (PARTITION_CHECKSUMS) of model 0 ends at byte " +
                                  std::to_string(om.models[0].partitions[2].offset + 1000) + " but the file has " +
                                  std::to_string(file.size()) + " bytes");
  Bytes wrapping = file;
  PutU64(wrapping, table + 8 + 24 * 1 + 8, ~uint64_t{0});  // WEIGHTS_DATA's offset: no wrap-around
  CHECK(Contains(ErrorOf(wrapping), "partition 1 (WEIGHTS_DATA) of model 0 starts at byte "));
  CHECK(Contains(ErrorOf(wrapping), ", expected " + std::to_string(weights.offset)));
  Bytes unknown = file;
  PutU32(unknown, table + 8, 77);
  CHECK(ErrorOf(unknown) == "partition 0 of model 0 has unknown type 77");
  Bytes many = file;
  PutU32(many, table, 5000);
  CHECK(ErrorOf(many) == "model 0 has 5000 partitions, more than the limit of 4096");
}

TEST_CASE("a flow model's last partition must be PARTITION_CHECKSUMS covering the others") {
  Bytes file = Header(3, 1, "m");
  AppendTable(file, {{PartitionType::kIrText, Text("x")}}, false);
  SetLengths(file);
  Seal(file);
  CHECK(ErrorOf(file) == "model 0's last partition is IR_TEXT, expected PARTITION_CHECKSUMS");
  Bytes bundle_part = Header(3, 1, "m");
  AppendTable(bundle_part, FlowPartitions({{PartitionType::kBundleModelInfo, Text("x")}}), false);
  SetLengths(bundle_part);
  Seal(bundle_part);
  CHECK(ErrorOf(bundle_part) ==
        "partition 0 (BUNDLE_MODEL_INFO) of model 0 is a bundle partition, which only a bundle's table may hold");
}

TEST_CASE("a bundle reads with its members, their names and the variable size") {
  Bytes file = BundleFile({"first", "second"});
  OmFile om = Read(file);
  CHECK(om.header.modeltype == 5);
  CHECK(om.var_size == 4096);
  REQUIRE(om.bundle.size() == 2);
  CHECK(om.member_names == std::vector<std::string>{"first", "second"});
  CHECK(om.bundle[1].header.name == "second");
  CHECK(om.bundle[1].base == om.models[0].partitions[2].offset);
  CHECK(om.bundle[1].models.size() == 1);
}

TEST_CASE("bundle names longer than the header's 32 bytes come from BUNDLE_MODEL_NAMES") {
  const std::string long_name(40, 'n');
  Bytes file = BundleFile({"short", long_name.substr(0, 32)}, {"short", long_name});
  OmFile om = Read(file);
  CHECK(om.member_names == std::vector<std::string>{"short", long_name});
  Bytes all_short = BundleFile({"a", "b"}, {"a", "b"});
  CHECK(ErrorOf(all_short) ==
        "BUNDLE_MODEL_NAMES is present but every name fits the 32-byte header name "
        "(it is written only when one does not)");
}

TEST_CASE("bundle defects: duplicate names, a bad member, a nested bundle") {
  CHECK(ErrorOf(BundleFile({"same", "same"})) == "bundle models 0 and 1 are both named \"same\"");
  Bytes file = BundleFile({"first", "second"});
  OmFile om = Read(file);
  Bytes bad_member = file;
  bad_member[om.bundle[1].base + at::kMagic] = 0;  // the second member's magic
  Seal(bad_member);
  CHECK(Contains(ErrorOf(bad_member), "bundle model 1: bad magic 0x444F4D00"));
  // A bundle inside a bundle.
  Bytes nested = Header(5, 1, "outer");
  Bytes var_info(8, 0);
  AppendTable(nested,
              {{PartitionType::kBundleModelVarInfo, var_info}, {PartitionType::kBundleModelInfo, BundleFile({"x"})}},
              true);
  SetLengths(nested);
  Seal(nested);
  CHECK(Contains(ErrorOf(nested), "bundle model 0: model type 5 (BUNDLE) is not allowed in a bundle"));
}

}  // TEST_SUITE
