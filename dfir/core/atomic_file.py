"""Replace a file atomically: a reader of the path sees either the old file or the whole new one.

Every `.om` dfir writes (`CompiledModel.save`, `save_model` / `bundle_save_model`, the compile
cache's entries and units) goes through `write_atomic`, so a process that opens the path while
it is being written (`dfir.load`, `dfir inspect`, a cache hit) never reads a partial file.
"""
from __future__ import annotations

import os
import tempfile

__all__ = ["TEMP_PREFIX", "write_atomic"]

TEMP_PREFIX = ".tmp-"
"""A file being written is `.tmp-<final name>.<random>` beside its final name until renamed; a
crash can leave one behind (`dfir cache prune` removes those of the compile cache)."""


def write_atomic(path: str | os.PathLike, data: bytes | bytearray | memoryview, *, private: bool = False) -> None:
    """Write `data` to `path` so that readers see either the old file or the whole new one.

    The bytes go to a temporary file in the same directory, are flushed to the disk (fsync) and
    the file is then renamed over `path` (`os.replace`, atomic on POSIX). The new file gets the
    permissions a plain `open(path, "wb")` would give it (0o666 less the umask), or 0o600 when
    `private` (the compile cache's files). An OSError
    (the directory cannot be written, the disk is full) leaves `path` as it was and no
    temporary file behind.
    """
    path = os.path.realpath(path)  # through a symbolic link to its file, as open() writes
    directory = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.path.basename(path)}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            if not private:  # mkstemp made it 0o600
                os.fchmod(out.fileno(), 0o666 & ~_umask())
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _umask() -> int:
    """The process's umask: from /proc (thread-safe), else by setting it and setting it back."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
