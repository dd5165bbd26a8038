"""The index file `<key>.idx`: which cached models a graph key has.

    {"cache_file_list": [
        {"graph_key": "demo", "cache_file_name": "demo_20260130120000123456.om",
         "var_desc_file_name": "demo_20260130120000123456.rdcpkt",
         "fingerprint": "sha256:...", "offline": false,
         "frontend_key": "sha256:...", "points": {"sha256:<point key>": "sha256:<fingerprint>"}}]}

`graph_key`, `cache_file_name` and `var_desc_file_name` are the seeds' fields (an empty
`var_desc_file_name` when the graph has no variables); the others are dfir's: `fingerprint`,
the `df.graph` fingerprint the model was compiled from; `offline`, compiled with `ge.runFlag=0`
for another machine; `frontend_key`, the frontend key of the graph last compiled to it
(`dfir.frontend.cache_keys`); `points`, the fingerprint of each graph process point of that graph by
its point key. Entries are appended, oldest first: a key keeps one entry per graph version.
File names are relative to the cache directory and must stay inside it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields

from dfir.core.errors import GeError
from dfir.driver.cache.files import confined_path, write_atomic

__all__ = ["IndexEntry", "IndexUnreadable", "entry_from_json", "index_path", "read_index", "read_index_json",
           "write_index"]


@dataclass(frozen=True)
class IndexEntry:
    """One cached model of a key (see the module docstring for the fields)."""

    graph_key: str
    cache_file_name: str
    var_desc_file_name: str
    fingerprint: str
    offline: bool = False
    frontend_key: str = ""
    points: dict[str, str] = field(default_factory=dict, hash=False)


class IndexUnreadable(Exception):
    """The index is not JSON (truncated or overwritten): its entries are lost, not trusted."""


def index_path(directory: str, key: str) -> str:
    return os.path.join(directory, f"{key}.idx")


def read_index(directory: str, key: str) -> list[IndexEntry]:
    """The entries of `<key>.idx` (none if it does not exist), oldest first.

    Raises IndexUnreadable when the file is not JSON, and GeError (naming the file and the JSON
    path) when it is JSON of the wrong shape or names a file outside the directory.
    """
    path = index_path(directory, key)
    return [entry_from_json(item, f"cache_file_list[{i}]", directory, key, path)
            for i, item in enumerate(read_index_json(directory, key))]


def read_index_json(directory: str, key: str) -> list:
    """The raw `cache_file_list` of `<key>.idx` (empty if there is no index); see `read_index`."""
    path = index_path(directory, key)
    try:
        with open(path, "rb") as file:
            document = json.loads(file.read())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as error:
        raise IndexUnreadable(f"{path}: {error}") from None
    entries = document.get("cache_file_list") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise GeError("the index must be a JSON object with a list 'cache_file_list'",
                      context={"file": path})
    return entries


def entry_from_json(item: object, where: str, directory: str, key: str, path: str) -> IndexEntry:
    """One index entry read from JSON `item` (at JSON path `where` of index file `path`)."""
    if not isinstance(item, dict):
        raise GeError(f"{where} must be an object, got {item!r}", context={"file": path})
    for name in ("graph_key", "cache_file_name", "var_desc_file_name", "fingerprint"):
        if not isinstance(item.get(name), str):
            raise GeError(f"{where}.{name} must be a string, got {item.get(name)!r}",
                          context={"file": path})
    if item["graph_key"] != key:
        raise GeError(f"{where}.graph_key is {item['graph_key']!r}, expected {key!r}",
                      context={"file": path})
    confined_path(directory, item["cache_file_name"], f"{where}.cache_file_name", path)
    if item["var_desc_file_name"]:
        confined_path(directory, item["var_desc_file_name"], f"{where}.var_desc_file_name", path)
    frontend_key, points = item.get("frontend_key", ""), item.get("points", {})
    if not isinstance(frontend_key, str):
        raise GeError(f"{where}.frontend_key must be a string, got {frontend_key!r}",
                      context={"file": path})
    if not isinstance(points, dict) or not all(isinstance(v, str) for v in points.values()):
        raise GeError(f"{where}.points must be an object of strings, got {points!r:.80}",
                      context={"file": path})
    return IndexEntry(item["graph_key"], item["cache_file_name"], item["var_desc_file_name"],
                      item["fingerprint"], bool(item.get("offline", False)), frontend_key, points)


def write_index(directory: str, key: str, entries: list[IndexEntry]) -> None:
    """Replace `<key>.idx` with `entries` (atomically), one entry a line."""
    lines = ",\n".join(json.dumps({f.name: getattr(entry, f.name) for f in fields(entry)}, sort_keys=True)
                       for entry in entries)
    text = '{"cache_file_list": [' + (f"\n{lines}\n" if lines else "") + "]}\n"
    write_atomic(index_path(directory, key), text.encode())
