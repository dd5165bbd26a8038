// The `.om` container schema for C++: the same values as dfir/om/schema.py (a test
// compares them through the bindings). docs/om-format.md describes the format byte by byte.
#ifndef DFIR_RUNTIME_NATIVE_OM_SCHEMA_H_
#define DFIR_RUNTIME_NATIVE_OM_SCHEMA_H_

#include <cstddef>
#include <cstdint>

namespace dfir::om {

// The little-endian u32 and u64 fields of the format, read from any alignment.
inline uint32_t LoadU32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
inline uint64_t LoadU64(const uint8_t* p) { return uint64_t{LoadU32(p)} | (uint64_t{LoadU32(p + 4)} << 32); }

inline constexpr uint32_t kMagic = 0x444F4D49;  // "DOMI"
inline constexpr uint32_t kHeaderSize = 256;
inline constexpr uint32_t kFormatVersion = 0x20000000;  // GE's MODEL_VERSION
inline constexpr uint32_t kOmIrVersion = 1;

inline constexpr size_t kChecksumFieldSize = 64;
inline constexpr size_t kDigestSize = 32;
// checksum[0:32] is the SHA-256 of the bytes after the header; checksum[32:64] the SHA-256 of
// the header with checksum[32:64] zeroed.
inline constexpr size_t kContentDigestAt = 0;
inline constexpr size_t kHeaderDigestAt = 32;
inline constexpr uint32_t kLengthSaturated = 0xFFFFFFFF;

inline constexpr size_t kTableHeaderSize = 8;
inline constexpr size_t kTableEntrySize = 24;
inline constexpr uint64_t kPartitionAlignment = 64;

inline constexpr uint32_t kMaxPartitions = 4096;
inline constexpr uint32_t kMaxModels = 1024;
inline constexpr size_t kNameSize = 32;
inline constexpr size_t kPlatformVersionSize = 20;
inline constexpr uint64_t kBundleVarInfoSize = 8;

// Byte offsets of the header fields (GE's ModelFileHeader).
namespace header_offset {
inline constexpr size_t kMagic = 0;
inline constexpr size_t kHeadsize = 4;
inline constexpr size_t kVersion = 8;
inline constexpr size_t kChecksum = 12;
inline constexpr size_t kLength = 76;
inline constexpr size_t kIsEncrypt = 80;
inline constexpr size_t kIsChecksum = 81;
inline constexpr size_t kModeltype = 82;
inline constexpr size_t kGenmode = 83;
inline constexpr size_t kName = 84;
inline constexpr size_t kOps = 116;
inline constexpr size_t kUserdefineinfo = 120;
inline constexpr size_t kOmIrVersion = 152;
inline constexpr size_t kModelNum = 156;
inline constexpr size_t kPlatformVersion = 160;
inline constexpr size_t kPlatformType = 180;
inline constexpr size_t kPadd = 181;
inline constexpr size_t kModelLength = 184;
inline constexpr size_t kNeedCheckOsCpuInfo = 192;
inline constexpr size_t kIsUnknowModel = 193;
inline constexpr size_t kReserved = 194;
}  // namespace header_offset

struct NamedValue {
  const char* name;
  uint64_t value;
};

inline constexpr NamedValue kHeaderOffsets[] = {
    {"magic", header_offset::kMagic},
    {"headsize", header_offset::kHeadsize},
    {"version", header_offset::kVersion},
    {"checksum", header_offset::kChecksum},
    {"length", header_offset::kLength},
    {"is_encrypt", header_offset::kIsEncrypt},
    {"is_checksum", header_offset::kIsChecksum},
    {"modeltype", header_offset::kModeltype},
    {"genmode", header_offset::kGenmode},
    {"name", header_offset::kName},
    {"ops", header_offset::kOps},
    {"userdefineinfo", header_offset::kUserdefineinfo},
    {"om_ir_version", header_offset::kOmIrVersion},
    {"model_num", header_offset::kModelNum},
    {"platform_version", header_offset::kPlatformVersion},
    {"platform_type", header_offset::kPlatformType},
    {"padd", header_offset::kPadd},
    {"model_length", header_offset::kModelLength},
    {"need_check_os_cpu_info", header_offset::kNeedCheckOsCpuInfo},
    {"is_unknow_model", header_offset::kIsUnknowModel},
    {"reserved", header_offset::kReserved},
};

enum class ModelType : uint8_t { kFlow = 3, kBundle = 5 };

inline constexpr NamedValue kModelTypes[] = {
    {"FLOW", static_cast<uint64_t>(ModelType::kFlow)},
    {"BUNDLE", static_cast<uint64_t>(ModelType::kBundle)},
};

enum class PartitionType : uint32_t {
  kModelDef = 0,
  kWeightsData = 1,
  kSoBins = 5,
  kFlowModel = 6,
  kFlowSubmodel = 7,
  kBundleModelInfo = 24,
  kBundleModelVarInfo = 25,
  kIrText = 0x1000,
  kUdfPayload = 0x1001,
  kResourceConfig = 0x1002,
  kDeployConfig = 0x1003,
  kCacheManifest = 0x1004,
  kPartitionChecksums = 0x1005,
  kGeExecutable = 0x1006,
  kBundleModelNames = 0x1010,
};

inline constexpr NamedValue kPartitionTypes[] = {
    {"MODEL_DEF", static_cast<uint64_t>(PartitionType::kModelDef)},
    {"WEIGHTS_DATA", static_cast<uint64_t>(PartitionType::kWeightsData)},
    {"SO_BINS", static_cast<uint64_t>(PartitionType::kSoBins)},
    {"FLOW_MODEL", static_cast<uint64_t>(PartitionType::kFlowModel)},
    {"FLOW_SUBMODEL", static_cast<uint64_t>(PartitionType::kFlowSubmodel)},
    {"BUNDLE_MODEL_INFO", static_cast<uint64_t>(PartitionType::kBundleModelInfo)},
    {"BUNDLE_MODEL_VAR_INFO", static_cast<uint64_t>(PartitionType::kBundleModelVarInfo)},
    {"IR_TEXT", static_cast<uint64_t>(PartitionType::kIrText)},
    {"UDF_PAYLOAD", static_cast<uint64_t>(PartitionType::kUdfPayload)},
    {"RESOURCE_CONFIG", static_cast<uint64_t>(PartitionType::kResourceConfig)},
    {"DEPLOY_CONFIG", static_cast<uint64_t>(PartitionType::kDeployConfig)},
    {"CACHE_MANIFEST", static_cast<uint64_t>(PartitionType::kCacheManifest)},
    {"PARTITION_CHECKSUMS", static_cast<uint64_t>(PartitionType::kPartitionChecksums)},
    {"GE_EXECUTABLE", static_cast<uint64_t>(PartitionType::kGeExecutable)},
    {"BUNDLE_MODEL_NAMES", static_cast<uint64_t>(PartitionType::kBundleModelNames)},
};

// Header fields that hold one value only: GE flags and revisions dfir does not use or know
// (the same as FIXED_HEADER_VALUES in dfir/om/schema.py).
inline constexpr NamedValue kFixedHeaderValues[] = {
    {"is_encrypt", 0},
    {"is_checksum", 1},
    {"genmode", 0},
    {"om_ir_version", kOmIrVersion},
    {"platform_type", 0},
    {"need_check_os_cpu_info", 0},
    {"is_unknow_model", 0},
};

// The value the header field `field` must hold (a field of kFixedHeaderValues).
constexpr uint64_t FixedHeaderValue(const char* field) {
  for (const NamedValue& fixed : kFixedHeaderValues) {
    const char* a = fixed.name;
    const char* b = field;
    while (*a != 0 && *a == *b) ++a, ++b;
    if (*a == *b) return fixed.value;
  }
  return ~uint64_t{0};
}

// The name of a partition type, or nullptr for a number the schema does not define.
inline const char* PartitionTypeName(uint32_t type) {
  for (const NamedValue& known : kPartitionTypes) {
    if (known.value == type) return known.name;
  }
  return nullptr;
}

}  // namespace dfir::om

#endif  // DFIR_RUNTIME_NATIVE_OM_SCHEMA_H_
