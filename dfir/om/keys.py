"""Ed25519 keys for signed `.om` files: the signing key, the trusted keys, and key pairs.

Keys are PEM files: a private key as PKCS#8 (``-----BEGIN PRIVATE KEY-----``, unencrypted), public
keys as SubjectPublicKeyInfo (``-----BEGIN PUBLIC KEY-----``), several of them in one file for
the trusted keys. A key is known by its fingerprint, ``sha256:`` and the first 16 hex digits of
the SHA-256 of its 32 raw public bytes.

`signing_key` is the `sign_with=` argument's key, else that of the file env `DFIR_SIGNING_KEY`
names (`dfir.om.trust.signing_key` adds the user's own key, made on first use, when neither is
set); `trusted_keys` reads the `trusted_keys=` argument, else the file env `DFIR_TRUSTED_KEYS`
names. An env variable set to "" is an error, never "no key". docs/security.md says how they
are used.

Reading, making or using a key imports `dfir.om.ed25519` and with it `cryptography`.
"""
from __future__ import annotations

import hashlib
import os
import re
from types import ModuleType
from typing import TYPE_CHECKING, Iterable

from dfir.core.errors import GeError

if TYPE_CHECKING:
    from dfir.om.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = ["SIGNING_KEY_ENV", "TRUSTED_KEYS_ENV", "SigningKey", "TrustedKeys", "env_path", "key_fingerprint",
           "load_signing_key", "load_trusted_keys", "new_private_key_pem", "public_key_pem", "signing_key",
           "trusted_keys", "write_key_pair"]

SIGNING_KEY_ENV = "DFIR_SIGNING_KEY"
TRUSTED_KEYS_ENV = "DFIR_TRUSTED_KEYS"

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----\r?\n?", re.S)


def key_fingerprint(public_key: bytes) -> str:
    """``sha256:`` and the first 16 hex digits of the SHA-256 of a raw Ed25519 public key."""
    return "sha256:" + hashlib.sha256(public_key).hexdigest()[:16]


def _ed25519() -> ModuleType:
    """`dfir.om.ed25519`, imported the first time a key is read, made or used."""
    from dfir.om import ed25519  # lazy: cryptography (15 ms, 3-5 MiB) that a load without keys never needs
    return ed25519


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return _ed25519().raw_public_key(public_key)


class SigningKey:
    """An Ed25519 private key that signs `.om` files; `source` says where it came from."""

    def __init__(self, key: Ed25519PrivateKey, source: str):
        self._key = key
        self.source = source
        self.public_key = _raw(key.public_key())

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.public_key)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)

    def __repr__(self) -> str:
        return f"<SigningKey {self.fingerprint} from {self.source}>"


class TrustedKeys:
    """The raw Ed25519 public keys a load trusts; `source` says where they came from."""

    def __init__(self, public_keys: Iterable[bytes], source: str):
        self.public_keys = frozenset(public_keys)
        self.source = source

    def __contains__(self, public_key: bytes) -> bool:
        return public_key in self.public_keys

    def __or__(self, other: TrustedKeys) -> TrustedKeys:
        return TrustedKeys(self.public_keys | other.public_keys, f"{self.source} and {other.source}")

    @property
    def fingerprints(self) -> list[str]:
        return sorted(key_fingerprint(key) for key in self.public_keys)

    def __repr__(self) -> str:
        return f"<TrustedKeys {', '.join(self.fingerprints)} from {self.source}>"


def load_signing_key(path: str | os.PathLike, source: str | None = None) -> SigningKey:
    """The Ed25519 private key in the PEM file `path`; a GeError naming the file otherwise.
    `source` names the file in messages (default: the path)."""
    path = os.fspath(path)
    what = f"the signing key {source or path}"
    data = _read(path, what)
    ed25519 = _ed25519()
    try:
        key = ed25519.private_key_from_pem(data)
    except TypeError:
        raise GeError(f"{what} is encrypted; dfir reads unencrypted PEM keys (`dfir keygen` "
                      "writes one)") from None
    except ValueError:
        raise GeError(f"{what} is not a PEM private key") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise GeError(f"{what} is {_kind(key)} key, expected an Ed25519 key")
    return SigningKey(key, source or path)


def load_trusted_keys(path: str | os.PathLike, source: str | None = None) -> TrustedKeys:
    """The Ed25519 public keys of the PEM file `path` (one or more ``PUBLIC KEY`` blocks); a
    GeError naming the file and the block otherwise."""
    path = os.fspath(path)
    what = f"the trusted keys file {source or path}"
    data = _read(path, what)
    blocks = list(_PEM_BLOCK.finditer(data))
    if not blocks:
        raise GeError(f"{what} holds no PEM public key")
    keys = []
    ed25519 = _ed25519()
    for index, block in enumerate(blocks):
        label = block[1].decode()
        if label != "PUBLIC KEY":
            raise GeError(f"{what}: PEM block {index} is a {label}, expected a PUBLIC KEY "
                          "(trust public keys only)")
        try:
            key = ed25519.public_key_from_pem(block[0])
        except ValueError:
            raise GeError(f"{what}: PEM block {index} is not a valid public key") from None
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise GeError(f"{what}: PEM block {index} is {_kind(key)} key, expected an Ed25519 key")
        keys.append(_raw(key))
    return TrustedKeys(keys, source or path)


def env_path(name: str, what: str) -> str | None:
    """The path env `name` gives (None when unset); a GeError when it is set to "" (`what`
    says what the file should be)."""
    path = os.environ.get(name)
    if path is not None and not path:
        raise GeError(f"{name} is empty; set it to {what}, or unset it (your own key and the keys "
                      "added with `dfir trust add` serve without it)")
    return path


def signing_key(sign_with: object = None) -> SigningKey | None:
    """The key named to sign with: `sign_with` (a path, a `SigningKey` or an
    `Ed25519PrivateKey`), else the file env DFIR_SIGNING_KEY names, else None (then
    `dfir.om.trust.signing_key` signs with the user's own key)."""
    if sign_with is None:
        path = env_path(SIGNING_KEY_ENV, "an Ed25519 private key PEM file")
        return None if path is None else load_signing_key(path, f"{SIGNING_KEY_ENV}={path}")
    if isinstance(sign_with, SigningKey):
        return sign_with
    if isinstance(sign_with, _ed25519().Ed25519PrivateKey):
        return SigningKey(sign_with, "sign_with")
    if isinstance(sign_with, (str, os.PathLike)):
        return load_signing_key(sign_with, f"sign_with={os.fspath(sign_with)}")
    raise GeError(f"sign_with must be the path of an Ed25519 private key PEM file, a SigningKey or "
                  f"an Ed25519PrivateKey, got {type(sign_with).__name__}")


def trusted_keys(trusted: object = None) -> TrustedKeys | None:
    """The keys to trust: `trusted` (a path, a `TrustedKeys`, an `Ed25519PublicKey`, or a list
    of these), else the file env DFIR_TRUSTED_KEYS names, else None (`dfir.om.trust` adds
    the user's own key and the added ones to these for a load)."""
    if trusted is None:
        path = env_path(TRUSTED_KEYS_ENV, "a PEM file of trusted public keys")
        return None if path is None else load_trusted_keys(path, f"{TRUSTED_KEYS_ENV}={path}")
    if isinstance(trusted, (str, os.PathLike)):
        return load_trusted_keys(trusted, f"trusted_keys={os.fspath(trusted)}")
    if isinstance(trusted, TrustedKeys):
        return trusted
    items = list(trusted) if isinstance(trusted, (list, tuple, set, frozenset)) else [trusted]
    if not items:
        raise GeError("trusted_keys is empty; give at least one public key")
    keys: set[bytes] = set()
    for item in items:
        if isinstance(item, TrustedKeys):
            keys |= item.public_keys
        elif isinstance(item, _ed25519().Ed25519PublicKey):
            keys.add(_raw(item))
        elif isinstance(item, (str, os.PathLike)):
            keys |= load_trusted_keys(item, f"trusted_keys={os.fspath(item)}").public_keys
        else:
            raise GeError(f"trusted_keys must be the path of a PEM file of Ed25519 public keys, a "
                          f"TrustedKeys, an Ed25519PublicKey or a list of them, got "
                          f"{type(item).__name__}")
    return TrustedKeys(keys, "the trusted_keys argument")


def public_key_pem(public_key: bytes) -> bytes:
    """The raw Ed25519 `public_key` as a PEM ``PUBLIC KEY`` block."""
    return _ed25519().public_pem(public_key)


def new_private_key_pem() -> bytes:
    """A new Ed25519 private key as unencrypted PEM (PKCS#8)."""
    return _ed25519().new_key_pair()[1]


def write_key_pair(name: str) -> tuple[str, str, SigningKey]:
    """Write a new key pair: `name.pem` (the private key, mode 0600) and `name.pub.pem` (its
    public key). Refuses to overwrite either file. Returns both paths and the key."""
    private_path, public_path = f"{name}.pem", f"{name}.pub.pem"
    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise GeError(f"{path} already exists; keygen never overwrites a key")
    key, private, public = _ed25519().new_key_pair()
    _write_new(private_path, private, 0o600)
    try:
        _write_new(public_path, public, 0o644)
    except GeError:
        os.unlink(private_path)
        raise
    return private_path, public_path, SigningKey(key, private_path)


def _write_new(path: str, data: bytes, mode: int) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise GeError(f"{path} already exists; keygen never overwrites a key") from None
    except OSError as error:
        raise GeError(f"cannot write {path}: {error.strerror}") from None
    with os.fdopen(fd, "wb") as out:
        os.fchmod(out.fileno(), mode)
        out.write(data)


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise GeError(f"{what} cannot be read: {error.strerror}") from None


def _kind(key: object) -> str:
    """"an RSA", "an EC", "an Ed448", ...: the kind of a key that is not an Ed25519 one."""
    name = type(key).__name__.lstrip("_")
    for suffix in ("PrivateKey", "PublicKey"):
        name = name.removesuffix(suffix)
    name = {"EllipticCurve": "EC"}.get(name, name)
    return ("an " if name[:1] in "AEFHILMNORSX" else "a ") + name
