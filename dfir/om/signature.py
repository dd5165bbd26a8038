"""Signed `.om` files: the signature trailer (`dfir.om.schema`), signing and verifying.

A signed file is the unsigned file followed by a 128-byte trailer holding the signer's Ed25519
public key and its signature of ``SIGNED_CONTEXT + header``; the 256-byte header holds the
digests of every other byte, so the signature covers the whole file. Signing leaves the file's
own bytes as they are: `unsigned(signed(om, key)) == om`, and Ed25519 signatures are
deterministic, so the same file and key give the same bytes.

1. `split_signature` finds the trailer: the bytes after the last model (byte 256 +
   `model_length`) that start with the trailer's magic. Other trailing bytes are left for the
   reader to report. A trailer whose size, algorithm or zero fields are wrong is a GeError.
2. `verify_signature` checks a header against its trailer and the trusted keys: an unsigned
   file, a signer that is not trusted (named by fingerprint) and a signature that does not
   verify are each a GeError saying which. Callers verify before anything in the file is
   unpickled or loaded, and rely on the reader (or the cache's check) for the digests.

Reading a trailer needs no cryptography; checking a signature (`Signature.verifies`) imports
`dfir.om.ed25519`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from dfir.core.errors import GeError
from dfir.om.keys import SigningKey, TrustedKeys, key_fingerprint
from dfir.om.schema import (ED25519_PUBLIC_KEY_SIZE, ED25519_SIGNATURE_SIZE, HEADER_OFFSETS, HEADER_SIZE,
                            MAGIC, SIGNATURE_ED25519, SIGNATURE_FIELDS, SIGNATURE_MAGIC,
                            SIGNATURE_TRAILER_SIZE, SIGNED_CONTEXT)

__all__ = ["Signature", "sign", "signed", "split_signature", "unsigned", "verify_bytes",
           "verify_signature"]

Bytes = bytes | bytearray | memoryview


@dataclass(frozen=True)
class Signature:
    """A file's signature trailer: where it starts, the signer's raw public key, the signature."""

    offset: int
    public_key: bytes
    signature: bytes

    @property
    def signer(self) -> str:
        """The signer's key fingerprint, ``sha256:`` and 16 hex digits."""
        return key_fingerprint(self.public_key)

    def verifies(self, header: Bytes) -> bool:
        """Whether the signature is the signer's for `header` (the file's 256-byte header)."""
        from dfir.om.ed25519 import verifies  # lazy: cryptography, which reading a trailer never needs
        return verifies(self.public_key, self.signature, SIGNED_CONTEXT + bytes(header[:HEADER_SIZE]))


def split_signature(data: Bytes) -> tuple[memoryview, Signature | None]:
    """`data` without its signature trailer, and the trailer (None when the file has none)."""
    view = memoryview(data).cast("B")
    end = _model_end(view)
    if end is None or len(view) - end < 4 or struct.unpack_from("<I", view, end)[0] != SIGNATURE_MAGIC:
        return view, None
    trailer = view[end:]
    if len(trailer) != SIGNATURE_TRAILER_SIZE:
        raise GeError(f"the signature trailer at byte {end} has {len(trailer)} bytes, expected "
                      f"{SIGNATURE_TRAILER_SIZE}")
    fields = {f.name: struct.unpack_from("<" + f.format, trailer, f.offset)[0] for f in SIGNATURE_FIELDS}
    if fields["size"] != SIGNATURE_TRAILER_SIZE:
        raise GeError(f"the signature trailer at byte {end} says it has {fields['size']} bytes, "
                      f"expected {SIGNATURE_TRAILER_SIZE}")
    if fields["algorithm"] != SIGNATURE_ED25519:
        raise GeError(f"the signature trailer at byte {end} has algorithm {fields['algorithm']}, "
                      f"expected {SIGNATURE_ED25519} (Ed25519)")
    if any(fields["pad"]) or any(fields["reserved"]):
        raise GeError(f"the signature trailer at byte {end} has non-zero reserved bytes")
    return view[:end], Signature(end, fields["public_key"], fields["signature"])


def unsigned(data: Bytes) -> memoryview:
    """`data` without its signature trailer (all of it when it has none)."""
    return split_signature(data)[0]


def sign(data: Bytes, key: SigningKey) -> bytes:
    """The signature trailer of the unsigned `.om` `data` for `key`."""
    view = memoryview(data).cast("B")
    if len(view) < HEADER_SIZE or struct.unpack_from("<I", view, 0)[0] != MAGIC:
        raise GeError("cannot sign: the data is not an .om file (no .om header)")
    trailer = bytearray(SIGNATURE_TRAILER_SIZE)
    values = {"magic": SIGNATURE_MAGIC, "size": SIGNATURE_TRAILER_SIZE, "algorithm": SIGNATURE_ED25519,
              "pad": b"", "public_key": key.public_key, "reserved": b"",
              "signature": key.sign(SIGNED_CONTEXT + bytes(view[:HEADER_SIZE]))}
    assert len(values["public_key"]) == ED25519_PUBLIC_KEY_SIZE
    assert len(values["signature"]) == ED25519_SIGNATURE_SIZE
    for field in SIGNATURE_FIELDS:
        struct.pack_into("<" + field.format, trailer, field.offset, values[field.name])
    return bytes(trailer)


def signed(data: Bytes, key: SigningKey | None) -> bytes:
    """`data` signed by `key` (any earlier signature replaced), or unsigned when `key` is None."""
    body = unsigned(data)
    return bytes(body) if key is None else b"".join((body, sign(body, key)))


def verify_signature(header: Bytes, signature: Signature | None, trusted: TrustedKeys) -> None:
    """Check that a file whose header is `header` is signed, by a key of `trusted`, correctly;
    a GeError says which of the three it is not."""
    if signature is None:
        raise GeError(f"the .om file is unsigned; only files signed by a trusted key load "
                      f"(trusted keys: {trusted.source})")
    if signature.public_key not in trusted:
        raise GeError(f"the .om file is signed by an untrusted key {signature.signer}; the trusted "
                      f"keys ({trusted.source}) are {', '.join(trusted.fingerprints) or 'none'}")
    if not signature.verifies(header):
        raise GeError(f"the .om file has a bad signature: it does not verify with its signer's key "
                      f"{signature.signer} (the file or its signature was changed after signing)")


def verify_bytes(data: Bytes, trusted: TrustedKeys) -> None:
    """`verify_signature` for the `.om` file `data`."""
    body, signature = split_signature(data)
    verify_signature(body[:HEADER_SIZE], signature, trusted)


def _model_end(view: memoryview) -> int | None:
    """Where the last model of the `.om` in `view` ends (256 + `model_length`), or None when
    `view` has no .om header or the header points beyond the data."""
    if len(view) < HEADER_SIZE or struct.unpack_from("<I", view, 0)[0] != MAGIC:
        return None
    end = HEADER_SIZE + struct.unpack_from("<Q", view, HEADER_OFFSETS["model_length"])[0]
    return end if end <= len(view) else None
