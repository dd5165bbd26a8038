"""Weight blobs: the bytes a builtin `dense_resource` attribute names, kept out of the IR text as
MLIR keeps them (its dialect resources).

    %w = ge.const dense_resource<weight_3f2a...> : tensor<8192x8192xf32>

and, where a text must carry the bytes itself (`dfir-opt`'s output), MLIR's resource section
after the module:

    {-# dialect_resources: { builtin: { weight_3f2a...: "0x40000000<the bytes in hex>" } } #-}

(a blob's text is `0x`, its alignment as a little-endian u32, then its bytes).

A blob is made from an array (`add_blob`) or parsed from a resource section, which xDSL's
builtin resource interface keeps as text (`blob_bytes` decodes one on first use). A handle
names its content: `weight_` and 32 hex digits of the bytes' SHA-256, so the same bytes get the
same handle and the IR text, and the `.om`, stays deterministic. The store is the process's, as
xDSL's resource interface is (and IREE's memo of compiled executables): a blob stays as long as
the process, or until `forget_blobs` empties the store.
"""
from __future__ import annotations

import hashlib
import math
import struct

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr

from dfir.core.errors import GeError

__all__ = ["BLOB_ALIGNMENT", "BLOB_MIN_BYTES", "add_blob", "blob_bytes", "forget_blobs"]

BLOB_ALIGNMENT = 64
"""The alignment a blob's text declares: the `.om`'s weight alignment."""

BLOB_MIN_BYTES = 4096
"""The GE graph builder keeps a constant of this many bytes or more as a blob (a splat too: xDSL
looks at every element to print one value)."""

_blobs: dict[str, memoryview] = {}


def add_blob(data: memoryview) -> str:
    """Keep the bytes `data` (a read-only byte view, not copied) as a blob; its handle."""
    handle = "weight_" + hashlib.sha256(data).hexdigest()[:32]
    _blobs.setdefault(handle, data)
    return handle


def blob_bytes(attr: DenseResourceAttr) -> memoryview:
    """The bytes of the blob `attr` names; a GeError when no blob of that name is known or its
    size is not the size of `attr`'s type."""
    handle = attr.resource_handle.data
    data = _lookup(handle)
    expected = math.prod(attr.type.get_shape()) * ((attr.type.get_element_type().bitwidth + 7) // 8)
    if len(data) != expected:
        raise GeError(f"dense_resource<{handle}> : {attr.type} needs {expected} bytes, its blob has {len(data)}")
    return data


def forget_blobs() -> None:
    """Drop every blob the process holds."""
    _blobs.clear()


def _lookup(handle: str) -> memoryview:
    if handle not in _blobs:
        _blobs[handle] = _parsed(handle)
    return _blobs[handle]


def _parsed(handle: str) -> memoryview:
    """The bytes of a blob a parsed resource section gave (xDSL keeps its text); GeError when
    there is none or its text is not MLIR's blob form."""
    text = Builtin.get_interface(OpAsmDialectInterface).lookup(handle)
    if not text:
        raise GeError(f"dense_resource<{handle}> names no blob: the IR text holds no resource {handle} "
                      f"(an .om keeps a blob's bytes in WEIGHTS_DATA, not in its IR_TEXT)")
    try:
        raw = bytes.fromhex(text[2:])
    except ValueError:
        raise GeError(f"resource {handle}: its text is not hex after 0x") from None
    if len(raw) < 4:
        raise GeError(f"resource {handle}: a blob starts with its 4-byte alignment, got {len(raw)} bytes")
    (alignment,) = struct.unpack_from("<I", raw)
    if alignment == 0 or alignment & (alignment - 1):
        raise GeError(f"resource {handle}: alignment {alignment} is not a power of two")
    return memoryview(raw)[4:]
