"""How dfir names a source file in what it ships (node locations, pickled UDF code): relative to
the innermost import root holding it (`sys.path`; for a script, the script's folder), so that one
script gives the same names from any working directory and no absolute path leaves the machine.
A file under no import root is named by its base name."""
from __future__ import annotations

import functools
import os
import sys


def display_path(path: str) -> str:
    return _display_path(os.path.abspath(path), tuple(sys.path))


@functools.lru_cache(maxsize=4096)
def _display_path(path: str, search_path: tuple[str, ...]) -> str:
    roots = [os.path.abspath(entry) for entry in search_path if entry]
    holding = [root for root in roots if path.startswith(root.rstrip(os.sep) + os.sep)]
    if not holding:
        return os.path.basename(path)
    return os.path.relpath(path, max(holding, key=len))
