"""One graph key of a cache directory: its cached models, their index, and its subgraph units.

    <dir>/<key>.idx                    the index (dfir.driver.cache.index)
    <dir>/<key>.lock                   held while a compile looks up, compiles and stores
    <dir>/<key>_<timestamp>.om         a cached model (one per graph version)
    <dir>/<key>_<timestamp>.rdcpkt     its variable formats, when the graph has variables
    <dir>/<key>/<fingerprint>.om       a compiled process point (dfir.driver.cache.units)

A cached model is used only after every byte has passed its checksums
(`dfir.driver.cache.checked_om`), its manifest names the fingerprint its index entry gives, and its
`.rdcpkt` lists the variables the manifest records; a file that fails is removed with its index
entry and compiled again, never loaded. Every write goes to a temporary file renamed into
place, so readers never see half a file.

Models and units are signed with the compile's signing key (the user's own key unless another
is named). The cache trusts that key and those a load trusts (`cache_trust`): a model or unit
that is unsigned or not signed by one of them fails its checks like a damaged file, so a hit
on a poisoned entry is a miss that compiles again and overwrites it (and a compile never signs
or merges what someone else put in the cache).
"""
from __future__ import annotations

import json
import logging
import os
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Callable

from dfir.core.errors import GeError
from dfir.driver.cache.checked_om import read_checked_om
from dfir.driver.cache.files import confined_path, timestamped_name, write_atomic
from dfir.driver.cache.index import (IndexEntry, IndexUnreadable, entry_from_json, index_path, read_index_json,
                                     write_index)
from dfir.driver.cache.lock import locked
from dfir.driver.cache.resource_config import config_differences
from dfir.driver.cache.settings import CacheSettings
from dfir.driver.cache.units import CachedGraph, CachedUnit, read_unit, unit_bytes
from dfir.driver.cache.variables import rdcpkt_bytes, read_rdcpkt
from dfir.om.keys import SigningKey, TrustedKeys
from dfir.om.schema import PartitionType
from dfir.om.signature import signed, verify_bytes
from dfir.om.trust import default_trusted

__all__ = ["MANIFEST_FORMAT", "CachedModel", "CacheStore", "cache_trust", "model_manifest"]

MANIFEST_FORMAT = 2
_log = logging.getLogger("dfir.cache")


def model_manifest(key: str, fingerprint: str, subgraphs: dict[str, str], variables: list[dict],
                   graph_unit: str | None) -> bytes:
    """The CACHE_MANIFEST partition of a cached model: its key, its graph's fingerprint, the
    fingerprint of each process point (by symbol, in module order), its variables (as its
    `.rdcpkt` lists them) and the key of its graph's unit (None when none was stored)."""
    document = {"format": MANIFEST_FORMAT, "graph_key": key, "fingerprint": fingerprint,
                "subgraphs": subgraphs, "variables": [dict(sorted(v.items())) for v in variables],
                "graph_unit": graph_unit}
    return json.dumps(document, separators=(",", ":")).encode()


@dataclass
class CachedModel:
    """A cached model that passed every check: its index entry, file and validated contents."""

    entry: IndexEntry
    path: str
    om: bytes
    manifest: dict
    resource_config: dict | None
    ir_text: str


def cache_trust(signing_key: SigningKey | None) -> TrustedKeys:
    """The keys cached files must be signed by: those a load trusts (`default_trusted`) and
    the compile's signing key."""
    trusted = default_trusted()
    if signing_key is None or signing_key.public_key in trusted:
        return trusted
    return trusted | TrustedKeys([signing_key.public_key], f"the signing key {signing_key.source}")


class CacheStore:
    """The cache of one key (see the module docstring). Call its methods inside `locked()`: the
    index is read once and kept, as nothing else writes it while the lock is held. Files are
    written signed by `signing_key` (when given) and used only when signed by a key of `trusted`
    (when given)."""

    def __init__(self, settings: CacheSettings, signing_key: SigningKey | None = None,
                 trusted: TrustedKeys | None = None):
        self.settings = settings
        self.signing_key = signing_key
        self.trusted = trusted
        self.directory = settings.directory
        self.key = settings.key
        self.units_directory = os.path.join(self.directory, self.key)
        self._entries: list[IndexEntry] | None = None

    def locked(self) -> AbstractContextManager[None]:
        return locked(os.path.join(self.directory, f"{self.key}.lock"))

    # --- cached models ---

    def entries(self) -> list[IndexEntry]:
        """The index entries, oldest first. An index that is unreadable or not an index is
        dropped whole, and a malformed entry alone, each with a warning; what is left is
        written back, so one bad entry costs one rebuild, not every compile of the key."""
        if self._entries is None:
            try:
                items = read_index_json(self.directory, self.key)
            except (IndexUnreadable, GeError) as error:
                _log.warning("cache index is unreadable (%s); its entries are dropped", error)
                items = []
            path = index_path(self.directory, self.key)
            entries, dropped = [], 0
            for i, item in enumerate(items):
                try:
                    entries.append(entry_from_json(item, f"cache_file_list[{i}]", self.directory, self.key, path))
                except GeError as error:
                    _log.warning("cache index entry dropped: %s", error)
                    dropped += 1
            self._entries = entries
            if dropped:
                self._write_entries(entries)
        return list(self._entries)

    def _write_entries(self, entries: list[IndexEntry]) -> None:
        write_index(self.directory, self.key, entries)
        self._entries = list(entries)

    def find_model(self, wanted: Callable[[IndexEntry], bool], resource_config: dict | None,
                   resource_path: str | None) -> CachedModel | None:
        """The newest valid cached model among the `wanted` entries built with this resource
        config (ipaddr fields aside), or None. Entries whose files fail a check are removed from
        the index, with their files.

        When the only such models were compiled offline (`ge.runFlag=0`) for another resource
        config and this compile would run the model, the model is not recompiled: a GeError
        lists the differences (the seeds' offline-deploy rule).
        """
        broken: list[IndexEntry] = []
        mismatch: tuple[IndexEntry, list[str]] | None = None
        found = None
        for entry in reversed(self.entries()):
            if not wanted(entry):
                continue
            model = self._valid_model(entry)
            if model is None:
                broken.append(entry)
                continue
            differences = _differences(model.resource_config, resource_config)
            if not differences:
                found = model
                break
            if entry.offline and mismatch is None:
                mismatch = (entry, differences)
        if broken:
            self._remove(broken)
        if found is None and mismatch is not None and not self.settings.offline:
            raise _resource_mismatch(self.key, mismatch[0], mismatch[1], resource_path)
        return found

    def store_model(self, fingerprint: str, om: bytes, variables: list[dict], frontend_key: str,
                    points: dict[str, str]) -> IndexEntry:
        """Write a compiled model (and its `.rdcpkt`) and append its index entry. `om` comes
        signed by the compile's key when it has one (`CompileJob.lower`)."""
        name = timestamped_name(self.directory, self.key, ".om")
        var_name = name[:-len(".om")] + ".rdcpkt" if variables else ""
        if variables:
            write_atomic(os.path.join(self.directory, var_name), rdcpkt_bytes(variables))
        write_atomic(os.path.join(self.directory, name), om)
        entry = IndexEntry(self.key, name, var_name, fingerprint, self.settings.offline, frontend_key, points)
        self._write_entries(self.entries() + [entry])
        return entry

    def rekey(self, entry: IndexEntry, frontend_key: str, points: dict[str, str]) -> None:
        """Give `entry` the frontend key and point keys of the graph just found to compile to it."""
        renewed = replace(entry, frontend_key=frontend_key, points=points)
        self._write_entries([renewed if e == entry else e for e in self.entries()])

    def _valid_model(self, entry: IndexEntry) -> CachedModel | None:
        """The entry's model if its files pass every check, else None (and a warning why)."""
        index_file = index_path(self.directory, self.key)
        path = confined_path(self.directory, entry.cache_file_name, "cache_file_name", index_file)
        try:
            with open(path, "rb") as file:
                om = file.read()
            self._check_signature(om)
            model = read_checked_om(om)
            manifest = json.loads(bytes(model.partition(PartitionType.CACHE_MANIFEST)))
            if (not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT
                    or not isinstance(manifest.get("subgraphs"), dict)):
                raise GeError(f"its manifest is not of format {MANIFEST_FORMAT}")
            if manifest.get("fingerprint") != entry.fingerprint:
                raise GeError(f"its manifest holds fingerprint {manifest.get('fingerprint')}")
            if self._variables(entry, index_file) != manifest.get("variables"):
                raise GeError(f"its variable formats ({entry.var_desc_file_name or 'none'}) differ "
                              "from those it was compiled with")
            configs = model.partitions_of(PartitionType.RESOURCE_CONFIG)
            resource_config = json.loads(bytes(configs[0])) if configs else None
            ir_text = bytes(model.partition(PartitionType.IR_TEXT)).decode()
        except (OSError, ValueError, GeError) as error:
            _log.warning("cached model %s is not usable (%s); compiling again", path, error)
            return None
        return CachedModel(entry, path, om, manifest, resource_config, ir_text)

    def _variables(self, entry: IndexEntry, index_file: str) -> list[dict] | None:
        if not entry.var_desc_file_name:
            return []
        path = confined_path(self.directory, entry.var_desc_file_name, "var_desc_file_name", index_file)
        with open(path, "rb") as file:
            return read_rdcpkt(file.read())

    def _remove(self, stale: list[IndexEntry]) -> None:
        """Drop `stale` entries from the index and delete their files."""
        self._write_entries([e for e in self.entries() if e not in stale])
        for entry in stale:
            for name in (entry.cache_file_name, entry.var_desc_file_name):
                if name:
                    _unlink(os.path.join(self.directory, name))

    # --- subgraph units ---

    def unit_path(self, fingerprint: str) -> str:
        return os.path.join(self.units_directory, fingerprint.removeprefix("sha256:") + ".om")

    def find_unit(self, fingerprint: str) -> CachedUnit | None:
        """The valid process point unit filed under `fingerprint`, or None (a broken file is removed)."""
        return self._find(fingerprint, CachedUnit)

    def find_graph(self, key: str) -> CachedGraph | None:
        """The valid graph unit filed under `key`, or None (a broken file is removed)."""
        return self._find(key, CachedGraph)

    def _find(self, key: str, kind: type):
        path = self.unit_path(key)
        try:
            with open(path, "rb") as file:
                data = file.read()
            self._check_signature(data)
            unit = read_unit(data, key)
            if not isinstance(unit, kind):
                raise GeError(f"it holds a {type(unit).__name__}, expected a {kind.__name__}")
            return unit
        except FileNotFoundError:
            return None
        except (OSError, ValueError, GeError) as error:
            _log.warning("subgraph cache %s is not usable (%s); compiling it again", path, error)
            _unlink(path)
            return None

    def store_unit(self, key: str, unit: CachedUnit | CachedGraph) -> None:
        os.makedirs(self.units_directory, exist_ok=True)
        data = unit_bytes(key, unit)
        write_atomic(self.unit_path(key), data if self.signing_key is None else signed(data, self.signing_key))

    def _check_signature(self, data: bytes) -> None:
        """A GeError unless `data` is signed by a trusted key (any file passes without trust)."""
        if self.trusted is not None:
            verify_bytes(data, self.trusted)


def _differences(compiled: dict | None, here: dict | None) -> list[str]:
    if compiled is None or here is None:
        if compiled is here:
            return []
        return ["$: compiled without a resource config, here with one" if compiled is None
                else "$: compiled with a resource config, here without one"]
    return config_differences(compiled, here)


def _resource_mismatch(key: str, entry: IndexEntry, differences: list[str],
                       resource_path: str | None) -> GeError:
    shown = "; ".join(differences[:20]) + (f"; and {len(differences) - 20} more" if len(differences) > 20 else "")
    return GeError(
        f"the cached model {entry.cache_file_name} was compiled offline for another resource "
        f"config; the one here ({resource_path or 'none given'}) must be the same except ipaddr "
        f"fields. Differences: {shown}", "dfir.compile", {"graph_key": key})


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
