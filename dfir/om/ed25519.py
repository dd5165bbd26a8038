"""Ed25519 keys and signatures: every use dfir makes of `cryptography`, the one module importing it.

`dfir.om.keys`, `dfir.om.trust` and `dfir.om.signature` import this module when a key is read,
made or used: once per process, the first time a compile signs or a load verifies (20-30 ms
and 3-5 MiB); a load with `trust="any"` never loads `cryptography`."""
from __future__ import annotations

import functools

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = ["Ed25519PrivateKey", "Ed25519PublicKey", "new_key_pair", "private_key_from_pem",
           "public_key_from_pem", "public_pem", "raw_public_key", "verifies"]


def raw_public_key(key: Ed25519PublicKey) -> bytes:
    """The 32 raw bytes of `key`."""
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def private_key_from_pem(data: bytes) -> object:
    """The private key, of any algorithm, in the PEM `data`: TypeError when it is encrypted,
    ValueError when `data` holds no private key."""
    try:
        return serialization.load_pem_private_key(data, password=None)
    except UnsupportedAlgorithm as error:
        raise ValueError(str(error)) from None


def public_key_from_pem(data: bytes) -> object:
    """The public key, of any algorithm, in the PEM block `data`: ValueError when it holds none."""
    try:
        return serialization.load_pem_public_key(data)
    except UnsupportedAlgorithm as error:
        raise ValueError(str(error)) from None


def public_pem(public_key: bytes) -> bytes:
    """The raw Ed25519 `public_key` as a PEM SubjectPublicKeyInfo block."""
    return Ed25519PublicKey.from_public_bytes(public_key).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def verifies(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """Whether `signature` is the raw Ed25519 `public_key`'s signature of `message` (the answer
    kept per process for the last 256 distinct questions)."""
    return _verifies(bytes(public_key), bytes(signature), bytes(message))


@functools.lru_cache(maxsize=256)  # a pure function of its bytes: a file loaded again skips the math
def _verifies(public_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def new_key_pair() -> tuple[Ed25519PrivateKey, bytes, bytes]:
    """A new private key, as PEM PKCS#8 (unencrypted), and its public key as PEM SubjectPublicKeyInfo."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return key, private, public
