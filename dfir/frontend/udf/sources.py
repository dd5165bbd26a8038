"""The sources of a Python UDF project: packed into the model, unpacked and imported at run time.

`pack_sources(folder)` turns `<workspace>/src_python/` into deterministic bytes: a gzip'ed tar of
every file under it (caches such as `__pycache__` and `*.pyc` left out), in sorted path order,
with zeroed times and owners, so the same files give the same bytes. `load_project_class` unpacks
such bytes (once per process) and imports `py_module` from them as a package of its own
(`_dfir_udf_<digest>`), so two projects with a module of the same name never collide; a module
reaches its siblings with relative imports (`from . import helpers`).
"""
from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.util
import io
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Callable

from dfir.core import ge_aliases
from dfir.core.errors import GeError

SOURCE_FOLDER = "src_python"
_SKIPPED_PARTS = ("__pycache__",)
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_IMPORT_LOCK = threading.RLock()


def pack_sources(folder: Path) -> bytes:
    """The files under `folder` as deterministic tar.gz bytes (see the module docstring)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for path in sorted(_source_files(folder)):
            data = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(folder).as_posix())
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)


def _source_files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()
            and not any(part in _SKIPPED_PARTS for part in path.relative_to(folder).parts)
            and path.suffix not in _SKIPPED_SUFFIXES]


def unpack_sources(data: bytes | memoryview, folder: Path) -> None:
    """Write the files of `pack_sources` bytes under `folder`; a GeError for a damaged payload."""
    try:
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(bytes(data))), mode="r") as archive:
            archive.extractall(folder, filter="data")
    except (OSError, EOFError, tarfile.TarError) as error:
        raise GeError(f"the Python UDF project payload cannot be unpacked: {error}") from error


def load_project_class(payload: bytes | memoryview, module: str, class_name: str,
                       where: str) -> tuple[type, Path]:
    """Class `class_name` of module `module` of packed sources, and the folder they are unpacked in.

    The sources are unpacked once per content (`content_folder`) and imported as a package named
    after their digest, so edited sources are imported afresh. GeError (naming `where`, the file and the class) when the module is missing, its
    import raises, or it has no such class.
    """
    data = bytes(payload)
    digest = hashlib.sha256(data).hexdigest()
    ge_aliases.install_if_requested()  # sources written for GE say `import dataflow.flow_func`
    with _IMPORT_LOCK:
        folder = _unpacked_folder(digest, data)
        source = folder / f"{module}.py"
        if not source.is_file():
            raise GeError(f"{where}: py_module '{module}' names {SOURCE_FOLDER}/{module}.py, "
                          f"which does not exist")
        try:
            loaded = importlib.import_module(f"{_package(digest, folder)}.{module}")
        except Exception as error:  # noqa: BLE001 - importing user code can raise anything
            raise GeError(f"{where}: importing {SOURCE_FOLDER}/{module}.py raised "
                          f"{type(error).__name__}: {error}") from error
    cls = getattr(loaded, class_name, None)
    if not isinstance(cls, type):
        raise GeError(f"{where}: {SOURCE_FOLDER}/{module}.py has no class '{class_name}' (py_class)")
    return cls, folder


def content_folder(digest: str, fill: Callable[[Path], None] | None = None) -> Path:
    """`<tmp>/dfir-udf-<uid>/<digest>`: a folder named after content, made once for all processes.

    `fill` writes the content into a fresh staging folder that is then renamed into place, so a
    process never sees a half-written folder; when two race, one rename wins and the other's
    staging folder is removed. The folders are a cache (no process owns them): a model's worker
    processes share them, and they outlive the models.
    """
    folder = _cache_root() / digest
    if not folder.is_dir():
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{digest[:12]}-"))
        if fill is not None:
            fill(staging)
        try:
            os.rename(staging, folder)
        except OSError:  # another process made it first
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def _cache_root() -> Path:
    root = Path(tempfile.gettempdir()) / f"dfir-udf-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise GeError(f"{root} must be a folder of user {os.getuid()}; remove it to let dfir make it")
    return root


def _unpacked_folder(digest: str, data: bytes) -> Path:
    return content_folder(digest, lambda staging: unpack_sources(data, staging))


def _package(digest: str, folder: Path) -> str:
    """The package whose `__path__` is `folder`, registered once per digest."""
    name = f"_dfir_udf_{digest[:16]}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_loader(name, loader=None, is_package=True)
        package = importlib.util.module_from_spec(spec)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    return name
