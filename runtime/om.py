"""Read an `.om` container: `read_om(source) -> OmFile`, validated natively, viewed without copies.

All validation (sizes, every offset and bound, every checksum, bundle members) happens in the
native reader before anything is returned; a truncated, corrupted or foreign file raises a
GeError that says what is wrong. Partition data are `memoryview`s into the source: a path is
copied once into a sealed memfd mapped read-only (what was validated is what a loaded model and
its forked workers use, whatever later happens to the file), bytes-like sources are viewed in
place. A signed file's signature trailer is split off first (`dfir.om.signature`) and returned
as `OmFile.signature`, for the loader to verify. docs/om-format.md describes the format.
"""
from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, fields, replace
from typing import NamedTuple, Union

from dfir.core.errors import GeError
from dfir.om.schema import CONTENT_DIGEST_SLICE, HEADER_DIGEST_SLICE, ModelType, PartitionType
from dfir.om.signature import Signature, split_signature
from dfir.runtime import _native

Source = Union[str, os.PathLike, bytes, bytearray, memoryview]


@dataclass(frozen=True)
class OmHeader:
    """The header fields (GE's names); `name` and `platform_version` are decoded text."""

    magic: int
    headsize: int
    version: int
    checksum: bytes
    length: int
    is_encrypt: int
    is_checksum: int
    modeltype: ModelType
    genmode: int
    name: str
    ops: int
    userdefineinfo: bytes
    om_ir_version: int
    model_num: int
    platform_version: str
    platform_type: int
    model_length: int
    need_check_os_cpu_info: int
    is_unknow_model: int

    @property
    def content_digest(self) -> bytes:
        """SHA-256 of every byte after the header (checksum[0:32])."""
        return self.checksum[CONTENT_DIGEST_SLICE]

    @property
    def header_digest(self) -> bytes:
        """SHA-256 of the header with checksum[32:64] zeroed (checksum[32:64])."""
        return self.checksum[HEADER_DIGEST_SLICE]


@dataclass(frozen=True, eq=False)
class OmPartition:
    """A partition: `offset` counts from the start of its `.om` file; `data` views its bytes."""

    type: PartitionType
    offset: int
    size: int
    data: memoryview


@dataclass(frozen=True, eq=False)
class OmModel:
    """One partition table (a model of a flow file, or a bundle's table) and its partitions."""

    index: int
    partitions: tuple[OmPartition, ...]

    def partitions_of(self, ptype: PartitionType) -> tuple[OmPartition, ...]:
        """The partitions of type `ptype`, in table order (possibly none)."""
        return tuple(p for p in self.partitions if p.type == ptype)

    def partition(self, ptype: PartitionType) -> OmPartition:
        """The one partition of type `ptype`; a GeError when there is none or several."""
        found = self.partitions_of(ptype)
        if len(found) != 1:
            count = "no" if not found else str(len(found))
            raise GeError(f"model {self.index} has {count} {PartitionType(ptype).name} partitions, "
                          f"expected one")
        return found[0]


class BundleMember(NamedTuple):
    """A member of a bundle: its full name (its header name, or its BUNDLE_MODEL_NAMES entry when
    that is longer than the header holds) and the member `.om` itself (a flow file)."""

    name: str
    om: OmFile


@dataclass(frozen=True, eq=False)
class OmFile:
    """A validated `.om` file.

    `models` are its partition tables: `header.model_num` models for a flow file, the one
    table for a bundle. A bundle's members are `(name, om)` pairs in `bundle`, in table order,
    each `om` a complete flow `OmFile` (`bundle_model` finds one by full name or position), and
    `var_size` is its BUNDLE_MODEL_VAR_INFO value (0 for a flow file). `name` is the header's,
    at most 32 bytes: a flow model's full name is its plan's, a member's is in `bundle`.
    `data` views the whole file but its signature trailer; `signature` is that trailer (None for
    an unsigned file and for bundle members), not yet verified.
    """

    header: OmHeader
    models: tuple[OmModel, ...]
    bundle: tuple[BundleMember, ...]
    var_size: int
    data: memoryview
    signature: Signature | None = None

    @property
    def name(self) -> str:
        return self.header.name

    @property
    def is_bundle(self) -> bool:
        return self.header.modeltype == ModelType.BUNDLE

    @property
    def bundle_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.bundle)

    def bundle_model(self, key: str | int) -> OmFile:
        """The bundle member named `key`, or at position `key`; a GeError if there is none."""
        if not self.is_bundle:
            raise GeError(f".om file {self.name!r} is not a bundle (model type {self.header.modeltype.name})")
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self.bundle):
                raise GeError(f"bundle model index {key} is out of range: the bundle holds "
                              f"{len(self.bundle)} models")
            return self.bundle[key].om
        for name, member in self.bundle:
            if name == key:
                return member
        raise GeError(f"bundle has no model named {key!r}; its models are "
                      f"{', '.join(repr(n) for n in self.bundle_names)}")


def read_om(source: Source) -> OmFile:
    """Validate and open an `.om` file given as a path, bytes, bytearray or memoryview.

    A path is read once into a private sealed copy (`_sealed_copy`), mapped read-only (an empty
    file is read as empty); the returned views keep the mapping alive, and nothing done to the
    file afterwards (overwritten, truncated, replaced) changes them. Any defect, a missing file
    included, raises GeError; errors for a path carry it as context ``file``.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            mapped, content_digest = _mapped_file(path)
            buffer, signature = split_signature(mapped)
            layout = _native.read_om(buffer, content_digest)
        except GeError as error:
            raise GeError(error.error_message, context={"file": path}) from None
    else:
        buffer, signature = split_signature(_byte_view(source))
        layout = _native.read_om(buffer)
    return replace(_om_file(layout, buffer), signature=signature)


def _mapped_file(path: str) -> tuple[memoryview, _native.ContentDigest | None]:
    try:
        with open(path, "rb") as file:
            return _sealed_copy(file, os.path.basename(path))
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise GeError(f"cannot open the file: {reason}", context={"file": path}) from None


def _sealed_copy(file, name: str) -> tuple[memoryview, _native.ContentDigest | None]:
    """The bytes of `file` as a read-only mapping of a memfd sealed against any change, and the
    content digest the reader checks, computed over that copy.

    The copy is taken in one native pass (`_native.copy_sealed`, docs/om-format.md): the memfd
    takes no write but the copy's own from the start; each piece is read into a buffer of this
    process, hashed there and copied from there into the memfd, which is sealed against any
    write before it is mapped here. The mapping, inherited by forked workers, is the only thing
    read afterwards. A file that shrinks while it is copied gives the bytes read so far (the
    reader then finds them short).
    """
    size = os.fstat(file.fileno()).st_size
    if size == 0:
        return memoryview(b""), None
    fd, copied, content_digest = _native.copy_sealed(file.fileno(), size, f"dfir-om:{name[:64]}")
    try:
        if copied == 0:
            return memoryview(b""), None
        return memoryview(mmap.mmap(fd, copied, access=mmap.ACCESS_READ)), content_digest
    finally:
        os.close(fd)  # the mapping keeps the memory


def _byte_view(source: object) -> memoryview:
    try:
        return memoryview(source).cast("B")
    except TypeError:
        raise GeError(f"read_om expects a path, bytes, bytearray or a C-contiguous memoryview, got "
                      f"{type(source).__name__}") from None


def _om_file(layout: _native.OmFile, buffer: memoryview) -> OmFile:
    """The Python view of a native layout; `buffer` is the whole buffer that was validated."""
    own = buffer[layout.base:layout.base + layout.size]
    models = tuple(
        OmModel(index, tuple(_partition(p, own) for p in model.partitions))
        for index, model in enumerate(layout.models))
    members = tuple(BundleMember(name, _om_file(member, buffer))
                    for name, member in zip(layout.member_names, layout.bundle))
    return OmFile(_header(layout.header), models, members, layout.var_size, own)


def _partition(native: _native.OmPartition, file_view: memoryview) -> OmPartition:
    data = file_view[native.offset:native.offset + native.size]
    return OmPartition(PartitionType(native.type), native.offset, native.size, data)


def _header(native: _native.OmHeader) -> OmHeader:
    values = {field.name: getattr(native, field.name) for field in fields(OmHeader)}
    values["modeltype"] = ModelType(native.modeltype)
    return OmHeader(**values)
