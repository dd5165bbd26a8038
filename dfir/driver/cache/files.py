"""File helpers of the cache directory: atomic writes (`dfir.core.atomic_file`), names with
timestamps, confined paths."""
from __future__ import annotations

import datetime
import os

from dfir.core import atomic_file
from dfir.core.atomic_file import TEMP_PREFIX
from dfir.core.errors import GeError

__all__ = ["TEMP_PREFIX", "confined_path", "temp_target", "timestamped_name", "write_atomic"]


def write_atomic(path: str, data: bytes) -> None:
    """Write a cache file atomically (`dfir.core.atomic_file.write_atomic`), readable by its owner
    only: readers see either the old file or the whole new one."""
    atomic_file.write_atomic(path, data, private=True)


def timestamped_name(directory: str, key: str, suffix: str) -> str:
    """`<key>_<YYYYmmddHHMMSSffffff><suffix>`, the first such name not present in `directory`.

    The seeds name cache files after the key and the current time; microseconds keep two
    compiles in the same second apart.
    """
    now = datetime.datetime.now()
    while True:
        name = f"{key}_{now.strftime('%Y%m%d%H%M%S%f')}{suffix}"
        if not os.path.exists(os.path.join(directory, name)):
            return name
        now += datetime.timedelta(microseconds=1)


def confined_path(directory: str, name: object, where: str, index_file: str) -> str:
    """The path `name` (relative to `directory`, or absolute) names, if it lies inside `directory`.

    A name that is not a non-empty string, or that leads outside the directory (through `..`,
    an absolute path or a symbolic link), is a GeError naming `where` (a JSON path) in
    `index_file`: an index must never make the cache read or delete other files.
    """
    if not isinstance(name, str) or not name:
        raise GeError(f"{where} must be a non-empty file name, got {name!r}",
                      context={"file": index_file})
    root = os.path.realpath(directory)
    path = os.path.realpath(os.path.join(root, name))
    if path == root or os.path.commonpath([root, path]) != root:
        raise GeError(f"{where} {name!r} points outside the cache directory {directory}",
                      context={"file": index_file})
    return path


def temp_target(name: str) -> str | None:
    """The final name a temporary file `name` was being written as, or None if it is not one."""
    if not name.startswith(TEMP_PREFIX) or "." not in name[len(TEMP_PREFIX):]:
        return None
    return name[len(TEMP_PREFIX):].rsplit(".", 1)[0]
