"""Build a C++ UDF project with CMake, as GE's compiler does, when its library is missing.

    cd <workspace>/build/_<lib>
    ASCEND_HOME_PATH=<dfir's stand-in> cmake -S <folder of cmakelist_path> -B . -DTOOLCHAIN=g++
          -DRELEASE_DIR=../../release -DRESOURCE_TYPE=X86 -DUDF_TARGET_LIB=<lib>
          -DDFIR_INCLUDE_DIR=<dfir's flow_func headers>
    cmake --build .

The library is `<workspace>/release/<target_bin>`; RELEASE_DIR is relative to the build folder,
so both `${PROJECT_BINARY_DIR}/${RELEASE_DIR}` (GE's CMakeLists) and a RELEASE_DIR made absolute
against the build folder (dfir's templates) name it. When it exists it is used as it is: delete
`release/` to rebuild after editing the sources (GE's rule for UDF caches). Each library builds
in its own folder, so several projects may share a workspace (GE's `udf_workspace`); builds of
one library are serialized with `flock` on `build/_<lib>/.dfir-build.lock`, across processes too.

ASCEND_HOME_PATH points GE's CMakeLists at a folder dfir makes (`ascend_home()`): `include/`
holds dfir's flow_func headers and `devlib/{linux/x86_64,linux/aarch64,device}/libflow_func.so`
are linker scripts that add nothing (dfir's UDF API is header-only), so a library links no
Ascend runtime. Progress lines (configuring, compiling, linking, built) go to stderr; CMake's
whole output is kept in `build/_<lib>/output.log`.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TextIO

from dfir.core.errors import GeError
from dfir.frontend.flow_func.include import include_dir
from dfir.frontend.udf.config import CompileConfig
from dfir.frontend.udf.sources import content_folder

RELEASE_FOLDER = "release"
BUILD_FOLDER = "build"
BUILD_LOG = "output.log"
_LOG_TAIL_LINES = 30
_DEVLIB_FOLDERS = ("devlib/linux/x86_64", "devlib/linux/aarch64", "devlib/device")
_EMPTY_LIBRARY = "/* dfir: the flow_func API is header-only; this library adds nothing to a link */\n"
# make's step lines: "[ 50%] Building CXX object ...", "[100%] Linking CXX shared library ..."
_MAKE_STEP = re.compile(r"^\[\s*\d+%\]\s+(Building|Linking)\s+(.*)$")
_LOGGER = logging.getLogger(__name__)


def release_library(config: CompileConfig) -> Path:
    """Where the project's library is: `<workspace>/release/<target_bin>`."""
    return config.workspace / RELEASE_FOLDER / config.target_bin


def build_folder(config: CompileConfig) -> Path:
    """Where the project's library is built: `<workspace>/build/_<lib>` (GE's folder name)."""
    return config.workspace / BUILD_FOLDER / f"_{config.target_lib}"


def ensure_built(config: CompileConfig, stream: TextIO | None = None) -> Path:
    """The project's release library, built with CMake first when it does not exist.

    Progress lines go to `stream` (stderr by default)."""
    target = release_library(config)
    if target.is_file():
        return target
    cmake = _cmake(config)
    build = build_folder(config)
    with _exclusive(build):
        if not target.is_file():  # another process may have built it while we waited
            _Build(config, build, target, stream or sys.stderr).run(cmake)
    if not target.is_file():
        raise GeError(f"compile config {config.path}: building the C++ project did not produce "
                      f"{target}; check that the CMakeLists names the library UDF_TARGET_LIB and "
                      f"writes it to RELEASE_DIR (relative to the build folder, as GE passes it)")
    return target


def cmake_arguments(config: CompileConfig, build: Path, release: Path) -> list[str]:
    """The configure command line (GE's options plus where dfir's headers are)."""
    return ["-S", str(config.cmakelist.parent), "-B", str(build),
            f"-DTOOLCHAIN={config.toolchain}", f"-DRELEASE_DIR={os.path.relpath(release, build)}",
            f"-DRESOURCE_TYPE={config.resource_type}", f"-DUDF_TARGET_LIB={config.target_lib}",
            f"-DDFIR_INCLUDE_DIR={include_dir()}"]


def ascend_home() -> Path:
    """dfir's stand-in for an Ascend install, for GE's CMakeLists (see the module docstring).

    Made once per content of the headers, in dfir's cache of content folders."""
    headers = sorted((Path(include_dir()) / "flow_func").glob("*.h"))
    digest = hashlib.sha256()
    for header in headers:
        digest.update(header.name.encode() + b"\0" + header.read_bytes() + b"\0")
    return content_folder(f"ascend-home-{digest.hexdigest()[:32]}", lambda staging: _fill_ascend_home(staging, headers))


def _fill_ascend_home(folder: Path, headers: list[Path]) -> None:
    (folder / "include" / "flow_func").mkdir(parents=True)
    for header in headers:
        shutil.copyfile(header, folder / "include" / "flow_func" / header.name)
    for devlib in _DEVLIB_FOLDERS:
        (folder / devlib).mkdir(parents=True)
        (folder / devlib / "libflow_func.so").write_text(_EMPTY_LIBRARY)


def _step_text(verb: str, what: str) -> str:
    """"compiling add.cpp" for make's "Building CXX object CMakeFiles/add.dir/add.cpp.o"."""
    path = what.split(" ")[-1]
    if verb == "Linking":
        return f"linking {path}"
    source = re.sub(r"^.*?CMakeFiles/[^/]+\.dir/", "", path)
    return f"compiling {source[:-2] if source.endswith('.o') else source}"


def _cmake(config: CompileConfig) -> str:
    """The cmake program, once the project's CMakeLists.txt is known to exist."""
    if config.cmakelist.name != "CMakeLists.txt" or not config.cmakelist.is_file():
        raise GeError(f"compile config {config.path}: cmakelist_path names {config.cmakelist}, "
                      f"which is not an existing CMakeLists.txt")
    cmake = shutil.which("cmake")
    if cmake is None:
        raise GeError("cmake is not on PATH; it builds C++ UDF projects (pip install cmake)")
    return cmake


@contextmanager
def _exclusive(build: Path) -> Iterator[None]:
    build.mkdir(parents=True, exist_ok=True)
    with open(build / ".dfir-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class _Build:
    """One CMake build of a project: configure, then build, reporting each step."""

    def __init__(self, config: CompileConfig, build: Path, target: Path, stream: TextIO):
        self.config = config
        self.build = build
        self.target = target
        self.stream = stream
        self.name = f"C++ UDF {config.target_bin} ({config.cmakelist})"

    def run(self, cmake: str) -> None:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        environment = {**os.environ, "ASCEND_HOME_PATH": str(ascend_home())}
        with open(self.build / BUILD_LOG, "w") as log:
            self._progress("configuring with CMake")
            self._step("configure", [cmake, *cmake_arguments(self.config, self.build, self.target.parent)],
                       environment, log)
            self._step("build", [cmake, "--build", str(self.build), "--parallel", str(os.cpu_count() or 1)],
                       environment, log)
        self._progress(f"built {self.target} in {time.perf_counter() - started:.1f} s")

    def _step(self, step: str, command: list[str], environment: dict[str, str], log: TextIO) -> None:
        """Runs `command` in the build folder, its output into `log`, make's steps as progress."""
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        lines: list[str] = []
        process = subprocess.Popen(command, cwd=self.build, env=environment, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace")
        assert process.stdout is not None
        for line in process.stdout:
            log.write(line)
            lines.append(line.rstrip("\n"))
            step_line = _MAKE_STEP.match(line.strip())
            if step_line:
                self._progress(_step_text(step_line.group(1), step_line.group(2)))
        status = process.wait()
        if status != 0:
            tail = "\n".join(lines[-_LOG_TAIL_LINES:])
            raise GeError(f"compile config {self.config.path}: cmake {step} of the C++ project in "
                          f"{self.config.workspace} failed with exit status {status} (whole output in "
                          f"{self.build / BUILD_LOG}):\n{tail}")

    def _progress(self, text: str) -> None:
        line = f"dfir: {self.name}: {text}"
        _LOGGER.info(line)
        print(line, file=self.stream, flush=True)
