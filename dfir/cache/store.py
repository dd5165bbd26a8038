"""One graph key of a cache directory: its cached models, their index, and its subgraph units.

    <dir>/<key>.idx                    the index (dfir.cache.index)
    <dir>/<key>.lock                   held while a compile looks up, compiles and stores
    <dir>/<key>_<timestamp>.om         a cached model (one per graph version)
    <dir>/<key>_<timestamp>.rdcpkt     its variable formats, when the graph has variables
    <dir>/<key>/<fingerprint>.om       a compiled process point (dfir.cache.units)

A cached model is used only after the `.om` reader has checked every byte against its
checksums and its manifest names the fingerprint looked for; a file that fails is removed with
its index entry and compiled again, never loaded. Every write goes to a temporary file renamed
into place, so readers never see half a file.
"""
from __future__ import annotations

import json
import logging
import os
from contextlib import AbstractContextManager
from dataclasses import dataclass

from dfir.cache.files import confined_path, timestamped_name, write_atomic
from dfir.cache.index import IndexEntry, IndexUnreadable, index_path, read_index, write_index
from dfir.cache.lock import locked
from dfir.cache.resource_config import config_differences
from dfir.cache.settings import CacheSettings
from dfir.cache.units import CachedUnit, read_unit, unit_bytes
from dfir.cache.variables import rdcpkt_bytes, read_rdcpkt
from dfir.ge.error import GeError
from dfir.lowering.om_schema import PartitionType

__all__ = ["MANIFEST_FORMAT", "CachedModel", "CacheStore", "model_manifest"]

MANIFEST_FORMAT = 1
_log = logging.getLogger("dfir.cache")


def model_manifest(key: str, fingerprint: str, subgraphs: dict[str, str]) -> bytes:
    """The CACHE_MANIFEST partition of a cached model: its key, its graph's fingerprint and the
    fingerprint of each process point (by symbol)."""
    document = {"format": MANIFEST_FORMAT, "graph_key": key, "fingerprint": fingerprint,
                "subgraphs": subgraphs}
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


@dataclass
class CachedModel:
    """A cached model that passed every check: its index entry, file and validated contents."""

    entry: IndexEntry
    path: str
    om: bytes
    resource_config: dict | None
    ir_text: str


class CacheStore:
    """The cache of one key (see the module docstring). Call its methods inside `locked()`."""

    def __init__(self, settings: CacheSettings):
        self.settings = settings
        self.directory = settings.directory
        self.key = settings.key
        self.units_directory = os.path.join(self.directory, self.key)

    def locked(self) -> AbstractContextManager[None]:
        return locked(os.path.join(self.directory, f"{self.key}.lock"))

    # --- cached models ---

    def find_model(self, fingerprint: str, variables: list[dict], resource_config: dict | None,
                   resource_path: str | None) -> CachedModel | None:
        """The newest valid cached model of `fingerprint` built with these variables and this
        resource config (ipaddr fields aside), or None.

        When the only models of `fingerprint` were compiled offline (`ge.runFlag=0`) for another
        resource config and this compile would run the model, the model is not recompiled:
        a GeError lists the differences (the seeds' offline-deploy rule).
        """
        entries = self._entries()
        broken: list[IndexEntry] = []
        mismatch: tuple[IndexEntry, list[str]] | None = None
        found = None
        for entry in reversed(entries):
            if entry.fingerprint != fingerprint:
                continue
            model = self._valid_model(entry, fingerprint, variables)
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

    def store_model(self, fingerprint: str, om: bytes, variables: list[dict]) -> IndexEntry:
        """Write a compiled model (and its `.rdcpkt`) and append its index entry."""
        name = timestamped_name(self.directory, self.key, ".om")
        var_name = name[:-len(".om")] + ".rdcpkt" if variables else ""
        if variables:
            write_atomic(os.path.join(self.directory, var_name), rdcpkt_bytes(variables))
        write_atomic(os.path.join(self.directory, name), om)
        entry = IndexEntry(self.key, name, var_name, fingerprint, self.settings.offline)
        write_index(self.directory, self.key, self._entries() + [entry])
        return entry

    def _entries(self) -> list[IndexEntry]:
        try:
            return read_index(self.directory, self.key)
        except IndexUnreadable as error:
            _log.warning("cache index is unreadable (%s); its entries are dropped", error)
            return []

    def _valid_model(self, entry: IndexEntry, fingerprint: str,
                     variables: list[dict]) -> CachedModel | None:
        """The entry's model if its files pass every check, else None (and a warning why)."""
        from dfir.runtime.om import read_om
        index_file = index_path(self.directory, self.key)
        path = confined_path(self.directory, entry.cache_file_name, "cache_file_name", index_file)
        try:
            with open(path, "rb") as file:
                om = file.read()
            model = read_om(om).models[0]
            manifest = json.loads(bytes(model.partition(PartitionType.CACHE_MANIFEST).data))
            held = manifest.get("fingerprint") if isinstance(manifest, dict) else None
            if held != fingerprint:
                raise GeError(f"its manifest holds fingerprint {held}")
            if self._variables(entry, index_file) != variables:
                raise GeError(f"its variable formats ({entry.var_desc_file_name or 'none'}) differ "
                              "from the graph's")
            configs = model.partitions_of(PartitionType.RESOURCE_CONFIG)
            resource_config = json.loads(bytes(configs[0].data)) if configs else None
            ir_text = bytes(model.partition(PartitionType.IR_TEXT).data).decode()
        except (OSError, ValueError, GeError) as error:
            _log.warning("cached model %s is not usable (%s); compiling again", path, error)
            return None
        return CachedModel(entry, path, om, resource_config, ir_text)

    def _variables(self, entry: IndexEntry, index_file: str) -> list[dict] | None:
        if not entry.var_desc_file_name:
            return []
        path = confined_path(self.directory, entry.var_desc_file_name, "var_desc_file_name", index_file)
        with open(path, "rb") as file:
            return read_rdcpkt(file.read())

    def _remove(self, stale: list[IndexEntry]) -> None:
        """Drop `stale` entries from the index and delete their files."""
        write_index(self.directory, self.key, [e for e in self._entries() if e not in stale])
        for entry in stale:
            for name in (entry.cache_file_name, entry.var_desc_file_name):
                if name:
                    _unlink(os.path.join(self.directory, name))

    # --- subgraph units ---

    def unit_path(self, fingerprint: str) -> str:
        return os.path.join(self.units_directory, fingerprint.removeprefix("sha256:") + ".om")

    def find_unit(self, fingerprint: str) -> CachedUnit | None:
        """The valid unit compiled from `fingerprint`, or None (a broken file is removed)."""
        path = self.unit_path(fingerprint)
        try:
            with open(path, "rb") as file:
                return read_unit(file.read(), fingerprint)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, GeError) as error:
            _log.warning("subgraph cache %s is not usable (%s); compiling it again", path, error)
            _unlink(path)
            return None

    def store_unit(self, fingerprint: str, unit: CachedUnit) -> None:
        os.makedirs(self.units_directory, exist_ok=True)
        write_atomic(self.unit_path(fingerprint), unit_bytes(fingerprint, unit))


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
