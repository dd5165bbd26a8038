"""The one schema of the `.om` container: constants, header layout, partition types, limits.

The writer (`dfir.lowering.om_writer`), the native reader (`runtime/native/om_schema.h`, whose
values a test compares with these) and `dfir inspect` all follow this module; docs/om-format.md
describes the format byte by byte.

The frame is GE's offline-model layout, little-endian throughout:

    [256-byte header][model 0: table, partitions][model 1: table, partitions]...

A model's partition table is ``u32 num; u32 pad`` followed by `num` entries of
``u32 type; u32 pad; u64 offset; u64 size``. Every partition starts on a 64-byte boundary of
the file, directly after the previous one (or the table), zero-padded in between.
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

MAGIC = 0x444F4D49  # "DOMI" read as a little-endian u32: GE's MODEL_FILE_MAGIC_NUM
HEADER_SIZE = 256
# GE's MODEL_VERSION: the frame is GE's. The revision of dfir's own partition contents is
# `OM_IR_VERSION`, stored in the header's `om_ir_version` field.
FORMAT_VERSION = 0x20000000
OM_IR_VERSION = 1

# `checksum[64]`: the first 32 bytes hold the SHA-256 of every byte after the header (GE's
# meaning of the field); the last 32 bytes hold the SHA-256 of the 256-byte header with those
# 32 bytes zeroed, so that no header byte can change unnoticed.
CHECKSUM_FIELD_SIZE = 64
DIGEST_SIZE = 32
CONTENT_DIGEST_SLICE = slice(0, DIGEST_SIZE)
HEADER_DIGEST_SLICE = slice(DIGEST_SIZE, 2 * DIGEST_SIZE)

# `length` is a u32: it equals `model_length` when that fits, else this saturated value.
LENGTH_SATURATED = 0xFFFFFFFF

TABLE_HEADER_SIZE = 8   # u32 num + u32 pad
TABLE_ENTRY_SIZE = 24   # u32 type + u32 pad + u64 offset + u64 size
PARTITION_ALIGNMENT = 64

MAX_PARTITIONS = 4096   # per model (table), as GE allows for flow models
MAX_MODELS = 1024       # models in one file, or members of one bundle
NAME_SIZE = 32          # header `name`, UTF-8, NUL-padded; a longer name is cut (`header_name`)
PLATFORM_VERSION_SIZE = 20
BUNDLE_VAR_INFO_SIZE = 8  # BUNDLE_MODEL_VAR_INFO holds one u64: the variable memory size


class ModelType(enum.IntEnum):
    """The header's `modeltype` byte (GE's numbering; dfir writes only these two)."""

    FLOW = 3
    BUNDLE = 5


class PartitionType(enum.IntEnum):
    """A partition table entry's `type`: GE's numbers where the meaning matches, then dfir's own."""

    MODEL_DEF = 0
    WEIGHTS_DATA = 1
    SO_BINS = 5
    FLOW_MODEL = 6             # the execution plan (docs/execution-plan.md)
    FLOW_SUBMODEL = 7
    BUNDLE_MODEL_INFO = 24     # a complete nested .om (bundles only)
    BUNDLE_MODEL_VAR_INFO = 25  # u64 variable memory size (bundles only, entry 0)
    IR_TEXT = 0x1000           # the final IR, printed
    UDF_PAYLOAD = 0x1001       # one Python UDF payload (cloudpickle of runtime.udf.UdfPayload)
    RESOURCE_CONFIG = 0x1002   # the resource (numa) configuration JSON
    DEPLOY_CONFIG = 0x1003     # the deploy info JSON
    CACHE_MANIFEST = 0x1004    # subgraph fingerprints of the compile cache
    PARTITION_CHECKSUMS = 0x1005  # SHA-256 of each other partition; last entry of a flow model
    GE_EXECUTABLE = 0x1006   # one compiled GE graph: an IREE vmfb or an ONNX model (the plan's `executables`)
    BUNDLE_MODEL_NAMES = 0x1010   # the members' full names, each NUL-terminated (bundles only, last
    #                               entry, present only when a name does not fit the header)


BUNDLE_ONLY_PARTITIONS = frozenset({PartitionType.BUNDLE_MODEL_INFO, PartitionType.BUNDLE_MODEL_VAR_INFO,
                                    PartitionType.BUNDLE_MODEL_NAMES})

# Header fields that hold one value only (among them GE's flags that dfir does not use): the
# writer writes these, the reader refuses any other. `padd`, `reserved`, table pads and the gaps
# between partitions are zero bytes; `ops`, `userdefineinfo` and `platform_version` are free.
FIXED_HEADER_VALUES: dict[str, int] = {
    "is_encrypt": 0, "is_checksum": 1, "genmode": 0, "om_ir_version": OM_IR_VERSION,
    "platform_type": 0, "need_check_os_cpu_info": 0, "is_unknow_model": 0,
}


@dataclass(frozen=True)
class HeaderField:
    """One header field: its byte offset and its `struct` format (little-endian)."""

    name: str
    offset: int
    format: str

    @property
    def size(self) -> int:
        return struct.calcsize("<" + self.format)


HEADER_FIELDS: tuple[HeaderField, ...] = (
    HeaderField("magic", 0, "I"),
    HeaderField("headsize", 4, "I"),
    HeaderField("version", 8, "I"),
    HeaderField("checksum", 12, "64s"),
    HeaderField("length", 76, "I"),
    HeaderField("is_encrypt", 80, "B"),
    HeaderField("is_checksum", 81, "B"),
    HeaderField("modeltype", 82, "B"),
    HeaderField("genmode", 83, "B"),
    HeaderField("name", 84, "32s"),
    HeaderField("ops", 116, "I"),
    HeaderField("userdefineinfo", 120, "32s"),
    HeaderField("om_ir_version", 152, "I"),
    HeaderField("model_num", 156, "I"),
    HeaderField("platform_version", 160, "20s"),
    HeaderField("platform_type", 180, "B"),
    HeaderField("padd", 181, "3s"),
    HeaderField("model_length", 184, "Q"),
    HeaderField("need_check_os_cpu_info", 192, "B"),
    HeaderField("is_unknow_model", 193, "B"),
    HeaderField("reserved", 194, "62s"),
)
HEADER_OFFSETS: dict[str, int] = {f.name: f.offset for f in HEADER_FIELDS}


def header_name(name: str) -> bytes:
    """The header `name` bytes of `name`: its UTF-8, cut to at most `NAME_SIZE` bytes on a
    character boundary (a flow model's full name is its plan's; a bundle member's, when cut, is in
    the bundle's BUNDLE_MODEL_NAMES partition)."""
    encoded = name.encode("utf-8")
    if len(encoded) <= NAME_SIZE:
        return encoded
    cut = NAME_SIZE
    while encoded[cut] & 0xC0 == 0x80:  # a continuation byte: the cut would split a character
        cut -= 1
    return encoded[:cut]


def align_up(value: int, alignment: int = PARTITION_ALIGNMENT) -> int:
    """The smallest multiple of `alignment` that is >= `value`."""
    return -(-value // alignment) * alignment


# --- the signature trailer (docs/om-format.md, "Signatures") ---
# A signed file is the unsigned file, unchanged, followed by a 128-byte trailer that lies after
# the last model (at byte 256 + model_length; `model_length` does not count it). The trailer
# holds an Ed25519 signature of `SIGNED_CONTEXT` followed by the 256-byte header: the header
# holds the content digest (every byte after the header) and the header digest, so the
# signature covers every byte of the file before the trailer. Unsigned files have no trailer.
SIGNATURE_MAGIC = 0x47495344  # "DSIG" read as a little-endian u32
SIGNATURE_TRAILER_SIZE = 128
SIGNATURE_ED25519 = 1         # the trailer's `algorithm`: Ed25519 (RFC 8032), the only one
ED25519_PUBLIC_KEY_SIZE = 32
ED25519_SIGNATURE_SIZE = 64
SIGNED_CONTEXT = b"dfir .om signature v1\0"

SIGNATURE_FIELDS: tuple[HeaderField, ...] = (  # offsets from the trailer's first byte
    HeaderField("magic", 0, "I"),
    HeaderField("size", 4, "I"),             # SIGNATURE_TRAILER_SIZE
    HeaderField("algorithm", 8, "I"),        # SIGNATURE_ED25519
    HeaderField("pad", 12, "4s"),            # zeros
    HeaderField("public_key", 16, "32s"),    # the signer's raw Ed25519 public key
    HeaderField("signature", 48, "64s"),     # Ed25519 signature of SIGNED_CONTEXT + header
    HeaderField("reserved", 112, "16s"),     # zeros
)
SIGNATURE_OFFSETS: dict[str, int] = {f.name: f.offset for f in SIGNATURE_FIELDS}
