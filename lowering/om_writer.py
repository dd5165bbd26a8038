"""Serialize partitions into `.om` bytes: flow models (`write_om`) and bundles (`write_bundle`).

The layout is `dfir.om.schema`'s. Output bytes depend only on the arguments: no
timestamps, no addresses, zero padding; the same inputs give the same bytes.

The file is assembled from views of the partitions' data (a partition may come in pieces:
`Chunks`) and copied once, into the returned bytes; the content digest is computed on a second
thread while the partition digests are (hashlib lets go of the GIL), so on two cores hashing
costs about one pass over the data.
"""
from __future__ import annotations

import hashlib
import struct
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

from dfir.core.errors import GeError
from dfir.om.schema import (
    BUNDLE_ONLY_PARTITIONS, FIXED_HEADER_VALUES, FORMAT_VERSION, HEADER_DIGEST_SLICE, HEADER_FIELDS,
    HEADER_OFFSETS, HEADER_SIZE, LENGTH_SATURATED, MAGIC, MAX_MODELS, MAX_PARTITIONS, NAME_SIZE,
    PARTITION_ALIGNMENT, PLATFORM_VERSION_SIZE, TABLE_ENTRY_SIZE, TABLE_HEADER_SIZE, ModelType, PartitionType, align_up,
    header_name,
)
from dfir.om.signature import unsigned


class Chunks:
    """Bytes given as pieces laid end to end (views, not copied): partition data the writer
    copies once, into the file."""

    def __init__(self, pieces: Iterable = ()):
        self.pieces: list[memoryview] = []
        self.size = 0
        for piece in pieces:
            self.append(piece)

    def append(self, data, alignment: int = 1) -> int:
        """Add `data` (bytes-like) at the next multiple of `alignment`, zeros in between; its offset."""
        if self.size % alignment:
            self.pieces.append(memoryview(bytes(-self.size % alignment)))
            self.size += len(self.pieces[-1])
        offset = self.size
        view = _flat(data)
        if view.nbytes:
            self.pieces.append(view)
            self.size += view.nbytes
        return offset

    def __len__(self) -> int:
        return self.size


Partition = tuple[int, bytes | bytearray | memoryview | Chunks]


def write_om(models: Sequence[Sequence[Partition]], *, name: str,
             model_type: ModelType = ModelType.FLOW, platform_version: str = "", ops: int = 0) -> bytes:
    """The `.om` bytes of a flow file holding `models`, each a list of `(partition_type, data)`.

    `name` is the graph's (its plan's) name; the header holds it cut to 32 bytes on a character
    boundary (`dfir.om.schema.header_name`): the full name is the plan's. Each model gets a
    `PARTITION_CHECKSUMS` partition appended (the SHA-256 of each of its partitions, in order).
    Raises GeError for an unknown or reserved partition type, data that is not bytes-like, a name
    that is no text, a platform version that does not fit the header, or counts beyond the
    schema's limits.
    """
    if model_type != ModelType.FLOW:
        raise GeError(f"write_om writes flow models (model type {ModelType.FLOW.value}), got model "
                      f"type {int(model_type)}; bundles are written by write_bundle")
    _check_model_count(len(models), "models")
    checked_models = [_checked_partitions(partitions, f"model {index}") for index, partitions in enumerate(models)]
    header_name_field = header_name(_name_text(name, ".om header name"))
    body, checksum_slots = Chunks(), []
    for checked in checked_models:
        body.append(b"", PARTITION_ALIGNMENT)
        slot = bytearray(32 * len(checked))
        checksum_slots.append((checked, slot))
        _append_table_and_partitions(body, [*checked, (PartitionType.PARTITION_CHECKSUMS, memoryview(slot))],
                                     offsets_from_table_end=True)
    first_slot = next((i for i, piece in enumerate(body.pieces) if piece.obj is checksum_slots[0][1]),
                      len(body.pieces))
    with ThreadPoolExecutor(1) as pool:  # the content before the first checksums, meanwhile
        head = pool.submit(_digest_of_pieces, body.pieces[:first_slot])
        for checked, slot in checksum_slots:
            slot[:] = b"".join(_digest(data) for _, data in checked)
        content = head.result()
    for piece in body.pieces[first_slot:]:
        content.update(piece)
    return _seal(body, content.digest(), name=header_name_field, model_type=model_type,
                 model_num=len(models), platform_version=platform_version, ops=ops)


def write_bundle(model_oms: Sequence[bytes], names: Sequence[str], var_size: int = 0, *,
                 name: str = "") -> bytes:
    """The `.om` bytes of a bundle (model type 5) holding complete flow `.om` files, in order.

    GE's bundle layout: one table of N+1 entries, entry 0 `BUNDLE_MODEL_VAR_INFO` (a u64,
    `var_size`), then one `BUNDLE_MODEL_INFO` per model holding its `.om` bytes; table offsets
    count from the table's start. Each nested header's `name` is set to `names[i]` (and its
    header digest renewed) so that bundle members are addressable by name; names must be
    distinct and non-empty. A name longer than the header's 32 bytes is cut there, and the full
    names then follow in one more entry, `BUNDLE_MODEL_NAMES`. Bundles do not nest: a member
    that is a bundle is a GeError. The bundle's own `name` must fit the header. A member's
    signature is dropped: renaming voids it, and the bundle's own signature covers its members.
    """
    if len(model_oms) != len(names):
        raise GeError(f"write_bundle got {len(model_oms)} models but {len(names)} names")
    _check_model_count(len(model_oms), "bundle models")
    _check_bundle_names(names)
    if not 0 <= var_size < 2**64:
        raise GeError(f"bundle var_size must be in [0, 2**64), got {var_size}")
    members = [_renamed(unsigned(_bytes_of(om, f"bundle model {i}")), names[i], i)
               for i, om in enumerate(model_oms)]
    entries: list[Partition] = [(PartitionType.BUNDLE_MODEL_VAR_INFO, struct.pack("<Q", var_size))]
    entries += [(PartitionType.BUNDLE_MODEL_INFO, om) for om in members]
    if any(len(member_name.encode()) > NAME_SIZE for member_name in names):
        entries.append((PartitionType.BUNDLE_MODEL_NAMES,
                        memoryview(b"".join(member_name.encode() + b"\0" for member_name in names))))
    body = Chunks()
    _append_table_and_partitions(body, entries, offsets_from_table_end=False)
    return _seal(body, _digest(body), name=_fixed_text(name, NAME_SIZE, "name"), model_type=ModelType.BUNDLE,
                 model_num=len(members), platform_version="", ops=0)


def _checked_partitions(partitions: Iterable[Partition],
                        where: str) -> list[tuple[PartitionType, memoryview]]:
    """The partitions of one flow model as (type, byte view), after checking types and counts."""
    checked = []
    for index, entry in enumerate(partitions):
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise GeError(f"partition {index} of {where} must be a (partition_type, data) pair, "
                          f"got {entry!r:.60}")
        ptype = _partition_type(entry[0], f"partition {index} of {where}")
        checked.append((ptype, _bytes_of(entry[1], f"partition {index} ({ptype.name}) of {where}")))
    if len(checked) > MAX_PARTITIONS - 1:
        raise GeError(f"{where} has {len(checked)} partitions; at most {MAX_PARTITIONS - 1} fit "
                      f"beside its PARTITION_CHECKSUMS partition")
    return checked


def _partition_type(value: object, where: str) -> PartitionType:
    try:
        ptype = PartitionType(value)
    except ValueError:
        raise GeError(f"{where} has unknown partition type {value!r}; expected one of "
                      f"{', '.join(t.name for t in PartitionType)}") from None
    if ptype in BUNDLE_ONLY_PARTITIONS or ptype == PartitionType.PARTITION_CHECKSUMS:
        raise GeError(f"{where} has type {ptype.name}, which the writer adds itself")
    return ptype


def _flat(data: object) -> memoryview:
    """`data` (bytes-like, C-contiguous) as one flat byte view; an empty one (of any shape) as b""."""
    view = memoryview(data)
    return view.cast("B") if view.nbytes else memoryview(b"")


def _bytes_of(data: object, where: str) -> memoryview | Chunks:
    """A flat byte view of `data` (no copy); `Chunks` as they are."""
    if isinstance(data, Chunks):
        return data
    try:
        return _flat(data)
    except TypeError:
        raise GeError(f"{where}: data must be bytes-like (C-contiguous), got "
                      f"{type(data).__name__}") from None


def _check_model_count(count: int, what: str) -> None:
    if not 1 <= count <= MAX_MODELS:
        raise GeError(f"an .om file holds 1 to {MAX_MODELS} {what}, got {count}")


def _check_bundle_names(names: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for index, member_name in enumerate(names):
        if not isinstance(member_name, str) or not member_name:
            raise GeError(f"bundle model {index} needs a non-empty name, got {member_name!r}")
        _name_text(member_name, f"bundle model {index} name")
        if member_name in seen:
            raise GeError(f"bundle models {seen[member_name]} and {index} are both named {member_name!r}")
        seen[member_name] = index


def _append_table_and_partitions(out: Chunks, partitions: Sequence[tuple[PartitionType, memoryview | Chunks]], *,
                                 offsets_from_table_end: bool) -> None:
    """Append one partition table to `out`, then its partitions, each on the next 64-byte boundary.

    Flow models count offsets from the table's end, bundles from its start (GE's layouts).
    `len(out)` must be a multiple of 64 on entry: the body follows the 256-byte header, so
    alignment within it is alignment within the file.
    """
    table_start = len(out)
    table_size = TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * len(partitions)
    starts, cursor = [], table_size
    for _, data in partitions:
        starts.append(align_up(cursor))
        cursor = starts[-1] + len(data)
    offset_base = table_size if offsets_from_table_end else 0
    table = bytearray(struct.pack("<II", len(partitions), 0))
    for (ptype, data), start in zip(partitions, starts):
        table += struct.pack("<IIQQ", ptype, 0, start - offset_base, len(data))
    out.append(table)
    for (_, data), start in zip(partitions, starts):
        out.append(b"", PARTITION_ALIGNMENT)
        assert len(out) == table_start + start
        for piece in data.pieces if isinstance(data, Chunks) else (data,):
            out.append(piece)


def _renamed(om: memoryview, new_name: str, index: int) -> memoryview:
    """`om` with its header `name` set to `new_name` and its header digest renewed."""
    if len(om) < HEADER_SIZE or struct.unpack_from("<I", om, 0)[0] != MAGIC:
        raise GeError(f"bundle model {index} ({new_name!r}) is not .om bytes (no .om header)")
    if om[HEADER_OFFSETS["modeltype"]] == ModelType.BUNDLE:
        raise GeError(f"bundle model {index} ({new_name!r}) is itself a bundle: bundles do not nest, "
                      f"a bundle's members are flow models")
    header = bytearray(om[:HEADER_SIZE])
    name_at = slice(HEADER_OFFSETS["name"], HEADER_OFFSETS["name"] + NAME_SIZE)
    header[name_at] = header_name(new_name).ljust(NAME_SIZE, b"\0")
    return memoryview(_with_header_digest(header) + om[HEADER_SIZE:])


def _digest(data: memoryview | Chunks) -> bytes:
    """The SHA-256 of `data`."""
    digest = hashlib.sha256()
    for piece in data.pieces if isinstance(data, Chunks) else (data,):
        digest.update(piece)
    return digest.digest()


def _digest_of_pieces(pieces: list[memoryview]) -> "hashlib._Hash":
    """A SHA-256 object fed with `pieces`, in order."""
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(piece)
    return digest


def _seal(body: Chunks, content_digest: bytes, *, name: bytes, model_type: ModelType, model_num: int,
          platform_version: str, ops: int) -> bytes:
    """The 256-byte header for `body` (its digest `content_digest` included) followed by `body`;
    `name` is the header's name field (at most 32 bytes)."""
    values = {field.name: b"" if field.format.endswith("s") else 0 for field in HEADER_FIELDS}
    values.update(FIXED_HEADER_VALUES)
    values.update(
        magic=MAGIC, headsize=HEADER_SIZE, version=FORMAT_VERSION,
        checksum=content_digest, length=min(len(body), LENGTH_SATURATED),
        modeltype=int(model_type), name=name, ops=_u32(ops, "ops"), model_num=model_num,
        platform_version=_fixed_text(platform_version, PLATFORM_VERSION_SIZE, "platform_version"),
        model_length=len(body),
    )
    header = bytearray(HEADER_SIZE)
    for field in HEADER_FIELDS:
        struct.pack_into("<" + field.format, header, field.offset, values[field.name])
    return b"".join([_with_header_digest(header), *body.pieces])


def _with_header_digest(header: bytearray) -> bytes:
    """`header` with checksum[32:64] set to the SHA-256 of the header with that slot zeroed."""
    digest_at = slice(HEADER_OFFSETS["checksum"] + HEADER_DIGEST_SLICE.start,
                      HEADER_OFFSETS["checksum"] + HEADER_DIGEST_SLICE.stop)
    header[digest_at] = bytes(digest_at.stop - digest_at.start)
    header[digest_at] = hashlib.sha256(header).digest()
    return bytes(header)


def _name_text(text: object, what: str) -> str:
    """`text` if it is a str that encodes as UTF-8 without NUL (a name of any length)."""
    if not isinstance(text, str):
        raise GeError(f"{what} must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise GeError(f"{what} {text!r} cannot be encoded as UTF-8") from None
    if "\0" in text:
        raise GeError(f"{what} {text!r} must not contain NUL")
    return text


def _fixed_text(text: str, size: int, field: str) -> bytes:
    encoded = _name_text(text, f".om header {field}").encode("utf-8")
    if len(encoded) > size:
        raise GeError(f".om header {field} {text!r} must be at most {size} bytes of UTF-8 without "
                      f"NUL, got {len(encoded)} bytes")
    return encoded


def _u32(value: int, field: str) -> int:
    if not isinstance(value, int) or not 0 <= value < 2**32:
        raise GeError(f".om header {field} must be an int in [0, 2**32), got {value!r}")
    return value
