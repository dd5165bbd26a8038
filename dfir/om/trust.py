"""Whose `.om` files dfir runs: the user's own key, the keys the user trusts, and the policy.

The dfir home is env `DFIR_HOME`, else `$XDG_CONFIG_HOME/dfir`, else `~/.config/dfir`:

    <home>/signing_key.pem         the user's own private key (mode 0600), made on first use
    <home>/signing_key.pub.pem     its public key, to give to whoever loads the user's files
    <home>/trusted/<hex>.pub.pem   a key added with `dfir trust add` (<hex>: its fingerprint's digits)

Every `.om` dfir writes is signed with `DFIR_SIGNING_KEY`'s key or `sign_with=`, else the own key
(`own_signing_key`). `dfir.load`, `dfir run` and the compile cache run a file only when a trusted
key signed it (`default_trusted`): the own key, `DFIR_SIGNING_KEY`'s, the keys `DFIR_TRUSTED_KEYS`
names and the added ones. `trust="any"` or env `DFIR_TRUST=any` runs any valid file, warning
once per process (`warn_untrusted_once`). docs/security.md says how it is used.

Key files are parsed once per process and read again only when they change (`_parsed`).
"""
from __future__ import annotations

import errno
import os
import tempfile
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, TypeVar

from dfir.core.errors import GeError
from dfir.om.keys import (SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, SigningKey, TrustedKeys, env_path,
                          key_fingerprint, load_signing_key, load_trusted_keys, new_private_key_pem,
                          public_key_pem)
from dfir.om.keys import signing_key as named_signing_key

__all__ = ["HOME_ENV", "TRUST_ENV", "AddedKey", "UntrustedRunWarning", "add_trusted_keys", "added_keys",
           "default_trusted", "dfir_home", "env_trusted_keys", "own_key_path", "own_public_key_path",
           "own_signing_key", "remove_trusted_key", "signing_key", "trust_mode", "warn_untrusted_once"]

HOME_ENV = "DFIR_HOME"
TRUST_ENV = "DFIR_TRUST"
TRUST_MODES = ("signed", "any")
_OWN_KEY = "signing_key.pem"
_OWN_PUBLIC_KEY = "signing_key.pub.pem"
_TRUSTED_DIR = "trusted"

T = TypeVar("T")
_lock = threading.Lock()
_parsed_files: dict[tuple, tuple[tuple[int, int, int], object]] = {}
_warned = False


class UntrustedRunWarning(UserWarning):
    """`trust="any"` (or `DFIR_TRUST=any`) let a load run a file without checking its signer."""


@dataclass(frozen=True)
class AddedKey:
    """A key added with `dfir trust add`: its fingerprint, file and raw public key."""

    fingerprint: str
    path: str
    public_key: bytes


def dfir_home() -> str:
    """The dfir home: env DFIR_HOME, else `$XDG_CONFIG_HOME/dfir`, else `~/.config/dfir`."""
    home = os.environ.get(HOME_ENV)
    if home is not None:
        if not home:
            raise GeError(f"{HOME_ENV} is empty; set it to the directory dfir keeps its keys in, or "
                          "unset it (then $XDG_CONFIG_HOME/dfir or ~/.config/dfir)")
        return home
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "dfir")


def own_key_path() -> str:
    """Where the user's own private key is (or will be, once made)."""
    return os.path.join(dfir_home(), _OWN_KEY)


def signing_key(sign_with: object = None) -> SigningKey:
    """The key every `.om` dfir writes is signed with: `sign_with` (a path, a `SigningKey` or an
    `Ed25519PrivateKey`), else the file env DFIR_SIGNING_KEY names, else the user's own key."""
    return named_signing_key(sign_with) or own_signing_key()


def own_signing_key(create: bool = True) -> SigningKey | None:
    """The user's own signing key, made on first use when `create` (else None while there is
    none). Two processes making it at once end with the same key: each writes a whole key to a
    temporary file and links it to its name, which only the first link gets."""
    path = own_key_path()
    if not os.path.exists(path):
        if not create:
            return None
        _make_own_key(path)
    return _parsed(load_signing_key, path, f"{path} (your own key)")


def own_public_key_path() -> str:
    """The file of the own public key (the key and the file made when missing), to share."""
    key = own_signing_key()
    path = os.path.join(dfir_home(), _OWN_PUBLIC_KEY)
    if not os.path.exists(path):
        _link_new(path, public_key_pem(key.public_key), 0o644)
    return path


def _make_own_key(path: str) -> None:
    _make_home(os.path.dirname(path))
    _link_new(path, new_private_key_pem(), 0o600)
    won = load_signing_key(path)  # this key, or the one another process linked first
    _link_new(os.path.join(os.path.dirname(path), _OWN_PUBLIC_KEY), public_key_pem(won.public_key), 0o644)


def _make_home(home: str) -> None:
    try:
        os.makedirs(home, mode=0o700, exist_ok=True)
    except OSError as error:
        raise GeError(f"cannot make the dfir home {home}: {error.strerror} (set {HOME_ENV} to "
                      "a directory you can write)") from None


def _link_new(path: str, data: bytes, mode: int) -> bool:
    """Create `path` holding `data` (with `mode`) unless it exists; whether this call made it.
    The data goes to a temporary file first, so `path` never holds part of a file."""
    directory = os.path.dirname(path)
    try:
        fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    except OSError as error:
        raise GeError(f"cannot write {path}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.link(temp, path)
        return True
    except FileExistsError:
        return False
    except OSError as error:
        if error.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP):  # a file system without hard links
            return _create_exclusive(path, data, mode)
        raise GeError(f"cannot write {path}: {error.strerror}") from None
    finally:
        os.unlink(temp)


def _create_exclusive(path: str, data: bytes, mode: int) -> bool:
    """`_link_new` where links cannot be made: create `path` only if it does not exist."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    except OSError as error:
        raise GeError(f"cannot write {path}: {error.strerror}") from None
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return True


def _parsed(parse: Callable[..., T], path: str, *args: str) -> T:
    """`parse(path, *args)` of the file `path`, kept per process while the file's inode, size
    and mtime stay the same."""
    try:
        stat = os.stat(path)
    except OSError:
        return parse(path, *args)  # it says why the file cannot be read
    version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    key = (parse, path, args)
    with _lock:
        known = _parsed_files.get(key)
    if known is not None and known[0] == version:
        return known[1]
    value = parse(path, *args)
    with _lock:
        _parsed_files[key] = (version, value)
    return value


# --- keys added with `dfir trust add` ---

def _trusted_dir() -> str:
    return os.path.join(dfir_home(), _TRUSTED_DIR)


def added_keys() -> list[AddedKey]:
    """The keys added with `dfir trust add`, by fingerprint."""
    directory = _trusted_dir()
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".pub.pem"))
    except FileNotFoundError:
        return []
    except OSError as error:
        raise GeError(f"cannot list the trusted keys in {directory}: {error.strerror}") from None
    added = []
    for name in names:
        path = os.path.join(directory, name)
        for public_key in sorted(_parsed(load_trusted_keys, path).public_keys):
            added.append(AddedKey(key_fingerprint(public_key), path, public_key))
    return added


def add_trusted_keys(path: str | os.PathLike) -> list[tuple[str, bool]]:
    """Trust the public keys of the PEM file `path` (one or more); per key its fingerprint and
    whether it is new (False: it was trusted already)."""
    keys = load_trusted_keys(path)
    directory = _trusted_dir()
    _make_home(directory)
    results = []
    for public_key in sorted(keys.public_keys):
        fingerprint = key_fingerprint(public_key)
        target = os.path.join(directory, fingerprint.removeprefix("sha256:") + ".pub.pem")
        results.append((fingerprint, _link_new(target, public_key_pem(public_key), 0o644)))
    return results


def remove_trusted_key(fingerprint: str) -> str:
    """Stop trusting the added key `fingerprint` (``sha256:`` optional); the file removed."""
    wanted = fingerprint if fingerprint.startswith("sha256:") else "sha256:" + fingerprint
    for key in added_keys():
        if key.fingerprint == wanted:
            os.unlink(key.path)
            return key.path
    shown = ", ".join(k.fingerprint for k in added_keys()) or "none"
    raise GeError(f"no added key has fingerprint {wanted}; the added keys are: {shown} "
                  "(`dfir trust ls` lists every trusted key)")


# --- what a load trusts ---

def default_trusted() -> TrustedKeys:
    """The keys a load trusts by default: the own key (when made), DFIR_SIGNING_KEY's, the keys
    of DFIR_TRUSTED_KEYS (a GeError when it is set but empty) and the added ones."""
    keys: list[bytes] = []
    sources: list[str] = []
    own = own_signing_key(create=False)
    if own is not None:
        keys.append(own.public_key)
        sources.append(f"your own key {own.fingerprint}")
    signing_path = env_path(SIGNING_KEY_ENV, "an Ed25519 private key PEM file")
    if signing_path is not None:
        source = f"{SIGNING_KEY_ENV}={signing_path}"
        keys.append(_parsed(load_signing_key, signing_path, source).public_key)
        sources.append(source)
    listed = env_trusted_keys()
    if listed is not None:
        keys += listed.public_keys
        sources.append(listed.source)
    added = added_keys()
    if added:
        keys += [key.public_key for key in added]
        sources.append(f"{len(added)} key{'' if len(added) == 1 else 's'} added with `dfir trust add`")
    return TrustedKeys(keys, ", ".join(sources) or "none yet: your own key is made when you first compile")


def env_trusted_keys() -> TrustedKeys | None:
    """The keys of the file env DFIR_TRUSTED_KEYS names (None when unset; a GeError when empty)."""
    path = env_path(TRUSTED_KEYS_ENV, "a PEM file of trusted public keys")
    if path is None:
        return None
    source = f"{TRUSTED_KEYS_ENV}={path}"
    return _parsed(load_trusted_keys, path, source)


def trust_mode(trust: str | None) -> str:
    """`"signed"` (run files a trusted key signed) or `"any"`: `trust`, else env DFIR_TRUST,
    else `"signed"`."""
    if trust is None:
        value = os.environ.get(TRUST_ENV)
        if value is None:
            return "signed"
        if value not in TRUST_MODES:
            raise GeError(f"{TRUST_ENV}={value!r} is not a trust mode; use any (run any file) or "
                          "signed (the default: run files a trusted key signed), or unset it")
        return value
    if trust not in TRUST_MODES:
        raise GeError(f"trust={trust!r} is not a trust mode; use \"any\" (run any file) or \"signed\" "
                      "(the default: run files a trusted key signed)")
    return trust


def warn_untrusted_once(what: str) -> None:
    """Warn, the first time in this process, that a load ran `what` without checking its signer."""
    global _warned
    with _lock:
        if _warned:
            return
        _warned = True
    warnings.warn(f"trust=\"any\" (or {TRUST_ENV}=any): dfir runs .om files without checking who "
                  f"signed them, starting with {what}; this warning is shown once per process",
                  UntrustedRunWarning, stacklevel=5)  # the caller of dfir.load
