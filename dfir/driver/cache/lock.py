"""An exclusive lock on one key of a cache directory, shared by every process using it.

`<dir>/<key>.lock` is locked with `flock(LOCK_EX)` for the whole lookup-compile-store of a
compile, so that two processes compiling the same key at once take turns: the second finds
what the first stored. The lock file itself is left in place (removing it would race with a
process about to lock it); the kernel releases the lock when its holder exits, even by a crash.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from typing import Iterator

from dfir.core.errors import GeError

__all__ = ["locked"]


@contextmanager
def locked(path: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the duration of the block."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise GeError(f"cannot open the cache lock file: {error.strerror}",
                      context={"file": path}) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the flock
