"""What a cache directory holds, whether it is sound, and cleaning it: `dfir cache ls|verify|prune`.

`take_inventory` lists, per graph key (an `<key>.idx`, or a `<key>/` folder of subgraph units),
the cached models of its index and its unit files, plus the files no index accounts for.
With `verify`, every file is read and checked (the `.om` checksums, the manifest's fingerprint,
the `.rdcpkt`; the signature, by a key a compile trusts: `dfir.om.trust.default_trusted`), and each
unit is marked as referenced or not by a sound model's manifest (its process points' units and
its graph's unit).

`prune` takes each key's lock in turn and removes: index entries that are invalid or whose
files fail verification (with their files), entries beyond the `keep` newest, unit files that
are broken or that no remaining entry references, the key's model files no entry names, and
the key's leftover temporary files. Files that do not follow the cache's naming are reported
and never removed; neither are lock files.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from dfir.core.errors import GeError
from dfir.driver.cache.files import confined_path, temp_target
from dfir.driver.cache.index import IndexEntry, IndexUnreadable, entry_from_json, index_path, read_index_json, write_index
from dfir.driver.cache.lock import locked
from dfir.driver.cache.units import read_unit
from dfir.driver.cache.variables import read_rdcpkt
from dfir.om.keys import TrustedKeys
from dfir.om.schema import PartitionType
from dfir.om.signature import verify_bytes
from dfir.om.trust import default_trusted
from dfir.runtime.om import read_om

__all__ = ["Inventory", "KeyRecord", "ModelRecord", "UnitRecord", "prune", "take_inventory"]

_MODEL_FILE = re.compile(r"(?P<key>[A-Za-z0-9_\-]{1,128})_\d{20}\.(?:om|rdcpkt)")
_UNIT_FILE = re.compile(r"[0-9a-f]{64}\.om")


@dataclass
class ModelRecord:
    """An index entry: its files' sizes and, when checked, what is wrong with it (or None) and
    the keys of the units its manifest refers to."""

    entry: IndexEntry | None
    where: str
    size: int | None
    problem: str | None = None
    units: set[str] = field(default_factory=set)


@dataclass
class UnitRecord:
    """A subgraph unit file of a key."""

    name: str
    size: int
    problem: str | None = None
    referenced: bool | None = None


@dataclass
class KeyRecord:
    """One graph key: its index (or why it cannot be read), models and units."""

    key: str
    index_problem: str | None = None
    models: list[ModelRecord] = field(default_factory=list)
    units: list[UnitRecord] = field(default_factory=list)


@dataclass
class Inventory:
    """A cache directory: its keys, the cache files no index names, and unrelated files."""

    directory: str
    keys: list[KeyRecord]
    strays: list[str]
    unknown: list[str]


def take_inventory(directory: str, verify: bool = False) -> Inventory:
    """What `directory` holds (see the module docstring); a GeError if it is not a directory."""
    names = _listing(directory)
    keys = sorted({n[:-4] for n in names if n.endswith(".idx")} |
                  {n for n in names if os.path.isdir(os.path.join(directory, n))})
    trusted = default_trusted() if verify else None  # a bad DFIR_TRUSTED_KEYS fails the command
    records = [_key_record(directory, key, verify, trusted) for key in keys]
    claimed = {f"{key}{suffix}" for key in keys for suffix in (".idx", ".lock")} | set(keys)
    claimed |= {name for record in records for model in record.models if model.entry
                for name in (model.entry.cache_file_name, model.entry.var_desc_file_name) if name}
    strays, unknown = [], []
    for name in sorted(set(names) - claimed):
        (strays if _cache_file_key(name) is not None or name.endswith(".lock") else unknown).append(name)
    return Inventory(directory, records, strays, unknown)


def prune(directory: str, keep: int | None = None) -> list[str]:
    """Clean `directory` (see the module docstring); the paths removed."""
    if keep is not None and keep < 1:
        raise GeError(f"--keep must be at least 1, got {keep}")
    removed: list[str] = []
    names = _listing(directory)
    keys = sorted({n[:-4] for n in names if n.endswith(".idx")} |
                  {n for n in names if os.path.isdir(os.path.join(directory, n))} |
                  {k for n in names if (k := _cache_file_key(n)) is not None})
    trusted = default_trusted()  # a bad DFIR_TRUSTED_KEYS fails the command, it removes nothing
    for key in keys:
        with locked(os.path.join(directory, f"{key}.lock")):
            removed += _prune_key(directory, key, keep, trusted)
    return removed


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError as error:
        raise GeError(f"cannot list the cache directory: {error.strerror}", context={"file": directory}) from None


def _cache_file_key(name: str) -> str | None:
    """The key a top-level cache file (a model, `.rdcpkt` or temporary file) belongs to."""
    target = temp_target(name) or name
    match = _MODEL_FILE.fullmatch(target)
    if match:
        return match["key"]
    if target != name and target.endswith(".idx"):
        return target[:-4]
    return None


def _key_record(directory: str, key: str, verify: bool, trusted: TrustedKeys | None) -> KeyRecord:
    record = KeyRecord(key)
    index_file = index_path(directory, key)
    try:
        items = read_index_json(directory, key)
    except (IndexUnreadable, GeError) as error:
        record.index_problem = str(error)
        items = []
    for i, item in enumerate(items):
        where = f"cache_file_list[{i}]"
        try:
            entry = entry_from_json(item, where, directory, key, index_file)
        except GeError as error:
            record.models.append(ModelRecord(None, where, None, error.error_message))
            continue
        record.models.append(_model_record(directory, entry, where, verify, trusted))
    referenced = {key for model in record.models if model.problem is None for key in model.units}
    units_directory = os.path.join(directory, key)
    if os.path.isdir(units_directory):
        for name in sorted(os.listdir(units_directory)):
            record.units.append(_unit_record(units_directory, name, verify, referenced, trusted))
    return record


def _model_record(directory: str, entry: IndexEntry, where: str, verify: bool,
                  trusted: TrustedKeys | None) -> ModelRecord:
    path = os.path.join(directory, entry.cache_file_name)
    size = os.path.getsize(path) if os.path.isfile(path) else None
    record = ModelRecord(entry, where, size)
    if size is None:
        record.problem = "the file is missing"
    elif verify:
        record.problem = _model_problem(directory, entry, record, trusted)
    return record


def _model_problem(directory: str, entry: IndexEntry, record: ModelRecord,
                   trusted: TrustedKeys | None) -> str | None:
    try:
        with open(os.path.join(directory, entry.cache_file_name), "rb") as file:
            data = file.read()
        if trusted is not None:
            verify_bytes(data, trusted)
        model = read_om(data).models[0]
        manifest = json.loads(bytes(model.partition(PartitionType.CACHE_MANIFEST).data))
    except (OSError, ValueError, GeError) as error:
        return str(error)
    held = manifest.get("fingerprint") if isinstance(manifest, dict) else None
    if held != entry.fingerprint:
        return f"its manifest holds fingerprint {held}, the index {entry.fingerprint}"
    record.units = set(manifest.get("subgraphs", {}).values())
    if manifest.get("graph_unit"):
        record.units.add(manifest["graph_unit"])
    if entry.var_desc_file_name:
        path = os.path.join(directory, entry.var_desc_file_name)
        try:
            with open(path, "rb") as file:
                if read_rdcpkt(file.read()) is None:
                    return f"{entry.var_desc_file_name} is not a variable format file"
        except OSError as error:
            return f"{entry.var_desc_file_name}: {error.strerror}"
    return None


def _unit_record(units_directory: str, name: str, verify: bool, referenced: set[str],
                 trusted: TrustedKeys | None) -> UnitRecord:
    path = os.path.join(units_directory, name)
    record = UnitRecord(name, os.path.getsize(path) if os.path.isfile(path) else 0)
    if not _UNIT_FILE.fullmatch(name):
        record.problem = "not a subgraph cache file name" if temp_target(name) is None else "a temporary file"
        return record
    if verify:
        fingerprint = "sha256:" + name[:-3]
        try:
            with open(path, "rb") as file:
                data = file.read()
            if trusted is not None:
                verify_bytes(data, trusted)
            read_unit(data, fingerprint)
        except (OSError, ValueError, KeyError, GeError) as error:
            record.problem = str(error)
        record.referenced = fingerprint in referenced
    return record


def _prune_key(directory: str, key: str, keep: int | None, trusted: TrustedKeys | None) -> list[str]:
    """Prune one key (its lock held); the paths removed."""
    record = _key_record(directory, key, verify=True, trusted=trusted)
    sound = [m.entry for m in record.models if m.problem is None and m.entry is not None]
    kept = sound[-keep:] if keep is not None else sound
    removed: list[str] = []
    if record.index_problem is not None or kept != [m.entry for m in record.models]:
        if kept:
            write_index(directory, key, kept)
        else:
            removed += _remove(index_path(directory, key))
    kept_names = {n for e in kept for n in (e.cache_file_name, e.var_desc_file_name) if n}
    for model in record.models:
        if model.entry is not None and model.entry not in kept:
            for name in (model.entry.cache_file_name, model.entry.var_desc_file_name):
                if name and name not in kept_names:
                    removed += _remove(confined_path(directory, name, model.where, index_path(directory, key)))
    referenced = {key.removeprefix("sha256:") + ".om" for m in record.models
                  if m.entry in kept for key in m.units}
    units_directory = os.path.join(directory, key)
    for unit in record.units:
        if unit.problem == "not a subgraph cache file name":
            continue
        if unit.problem is not None or unit.name not in referenced:
            removed += _remove(os.path.join(units_directory, unit.name))
    for name in sorted(os.listdir(directory)):
        if _cache_file_key(name) == key and name not in kept_names:
            removed += _remove(os.path.join(directory, name))
    return removed


def _remove(path: str) -> list[str]:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return []
    return [path]
