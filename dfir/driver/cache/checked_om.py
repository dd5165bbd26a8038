"""A fast, checked read of the one-model flow `.om` files the compile cache writes.

The runtime's reader (`dfir.runtime.om.read_om`) checks every field, offset and checksum with
a portable SHA-256 that runs at about a tenth of hashlib's speed, twice over the data (the file
digest and each partition's). The cache reads cached files on every compile, so it checks
them this way instead:

1. The header digest (`checksum[32:64]`: the header with that slot zeroed) and the content
   digest (`checksum[0:32]`: every byte after the header), with hashlib. The content digest
   covers all the rest, so a changed, truncated or extended file fails here.
2. The header says a flow model (type 3), one model, and the body length the file has.
3. The partition table at the start of the body (`u32 num; pad`, then `num` entries of `u32
   type; pad; u64 offset; u64 size`, offsets counted from the table's end) lists partitions of
   known types lying inside the file.

A signed file's signature trailer is set aside first (`dfir.om.signature`); the store verifies
signatures itself. Any failure is a GeError saying what is wrong. `dfir.om.schema` is the
layout followed.
"""
from __future__ import annotations

import hashlib
import struct

from dfir.core.errors import GeError
from dfir.om.schema import (CONTENT_DIGEST_SLICE, HEADER_DIGEST_SLICE, HEADER_OFFSETS,
                                     HEADER_SIZE, MAGIC, TABLE_ENTRY_SIZE, TABLE_HEADER_SIZE,
                                     ModelType, PartitionType)
from dfir.om.signature import unsigned

__all__ = ["CheckedOm", "read_checked_om"]

_CHECKSUM_AT = HEADER_OFFSETS["checksum"]
_TYPES = {int(kind): kind for kind in PartitionType}


class CheckedOm:
    """The partitions of a checked one-model `.om`, as views of its bytes."""

    def __init__(self, partitions: list[tuple[PartitionType, memoryview]]):
        self._partitions = partitions

    def partitions_of(self, ptype: PartitionType) -> list[memoryview]:
        """The data of every partition of type `ptype`, in table order (possibly none)."""
        return [data for kind, data in self._partitions if kind == ptype]

    def partition(self, ptype: PartitionType) -> memoryview:
        """The data of the one partition of type `ptype`; a GeError if there is not exactly one."""
        found = self.partitions_of(ptype)
        if len(found) != 1:
            raise GeError(f"the file has {len(found)} {ptype.name} partitions, expected 1")
        return found[0]


def read_checked_om(data: bytes) -> CheckedOm:
    """The partitions of `data`, a one-model flow `.om`, after the checks of the module docstring."""
    view = unsigned(data)
    _check_header(view)
    return CheckedOm(_partitions(view))


def _check_header(view: memoryview) -> None:
    if len(view) < HEADER_SIZE or _u32(view, "magic") != MAGIC:
        raise GeError("not an .om file (no .om header)")
    checksum = bytes(view[_CHECKSUM_AT:_CHECKSUM_AT + 64])
    header = bytearray(view[:HEADER_SIZE])
    digest_at = _CHECKSUM_AT + HEADER_DIGEST_SLICE.start
    header[digest_at:digest_at + 32] = bytes(32)
    if hashlib.sha256(header).digest() != checksum[HEADER_DIGEST_SLICE]:
        raise GeError("the header does not match its checksum")
    if hashlib.sha256(view[HEADER_SIZE:]).digest() != checksum[CONTENT_DIGEST_SLICE]:
        raise GeError("the content does not match its checksum (the file is damaged or truncated)")
    model_type, models = view[HEADER_OFFSETS["modeltype"]], _u32(view, "model_num")
    length = struct.unpack_from("<Q", view, HEADER_OFFSETS["model_length"])[0]
    if (model_type, models, length) != (ModelType.FLOW, 1, len(view) - HEADER_SIZE):
        raise GeError(f"expected one flow model of {len(view) - HEADER_SIZE} bytes, the header "
                      f"says model type {model_type}, {models} models of {length} bytes")


def _partitions(view: memoryview) -> list[tuple[PartitionType, memoryview]]:
    count = struct.unpack_from("<I", view, HEADER_SIZE)[0] if len(view) >= HEADER_SIZE + 4 else 0
    table_end = HEADER_SIZE + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * count
    if table_end > len(view):
        raise GeError(f"the partition table of {count} entries does not fit in the file")
    partitions = []
    for index in range(count):
        entry_at = HEADER_SIZE + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * index
        kind, _, offset, size = struct.unpack_from("<IIQQ", view, entry_at)
        start = table_end + offset
        if start + size > len(view):
            raise GeError(f"partition {index} [{start}, {start + size}) lies outside the file")
        if kind not in _TYPES:
            raise GeError(f"partition {index} has unknown type {kind}")
        partitions.append((_TYPES[kind], view[start:start + size]))
    return partitions


def _u32(view: memoryview, field: str) -> int:
    return struct.unpack_from("<I", view, HEADER_OFFSETS[field])[0]
