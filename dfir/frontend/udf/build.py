"""Build a C++ UDF project with CMake, as the seed's command line does, when its library is missing.

    cmake -S <workspace> -B <workspace>/build -DTOOLCHAIN=g++ -DRELEASE_DIR=<workspace>/release
          -DRESOURCE_TYPE=X86 -DUDF_TARGET_LIB=add -DDFIR_INCLUDE_DIR=<dfir's flow_func headers>
    cmake --build <workspace>/build

The library is `<workspace>/release/<target_bin>`. When it exists it is used as it is: delete
`release/` to rebuild after editing the sources (the seeds' rule for UDF caches). Builds of one
workspace are serialized with `flock` on `build/.dfir-build.lock`, across processes too.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from dfir.core.errors import GeError
from dfir.frontend.flow_func.include import include_dir
from dfir.frontend.udf.config import CompileConfig

RELEASE_FOLDER = "release"
BUILD_FOLDER = "build"
_LOG_TAIL_LINES = 30


def release_library(config: CompileConfig) -> Path:
    """Where the project's library is: `<workspace>/release/<target_bin>`."""
    return config.workspace / RELEASE_FOLDER / config.target_bin


def ensure_built(config: CompileConfig) -> Path:
    """The project's release library, built with CMake first when it does not exist."""
    target = release_library(config)
    if target.is_file():
        return target
    build = config.workspace / BUILD_FOLDER
    with _exclusive(build):
        if not target.is_file():  # another process may have built it while we waited
            _run_cmake(config, build, target.parent)
    if not target.is_file():
        raise GeError(f"compile config {config.path}: building the C++ project did not produce "
                      f"{target}; check that the CMakeLists names the library UDF_TARGET_LIB and "
                      f"writes it to RELEASE_DIR")
    return target


def cmake_arguments(config: CompileConfig, build: Path, release: Path) -> list[str]:
    """The configure command line (the seed's options plus where dfir's headers are)."""
    return ["-S", str(config.cmakelist.parent), "-B", str(build),
            f"-DTOOLCHAIN={config.toolchain}", f"-DRELEASE_DIR={release}",
            f"-DRESOURCE_TYPE={config.resource_type}", f"-DUDF_TARGET_LIB={config.target_lib}",
            f"-DDFIR_INCLUDE_DIR={include_dir()}"]


@contextmanager
def _exclusive(build: Path) -> Iterator[None]:
    build.mkdir(parents=True, exist_ok=True)
    with open(build / ".dfir-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run_cmake(config: CompileConfig, build: Path, release: Path) -> None:
    if config.cmakelist.name != "CMakeLists.txt" or not config.cmakelist.is_file():
        raise GeError(f"compile config {config.path}: cmakelist_path names {config.cmakelist}, "
                      f"which is not an existing CMakeLists.txt")
    cmake = shutil.which("cmake")
    if cmake is None:
        raise GeError("cmake is not on PATH; it builds C++ UDF projects (pip install cmake)")
    release.mkdir(parents=True, exist_ok=True)
    for step, arguments in (("configure", cmake_arguments(config, build, release)),
                            ("build", ["--build", str(build), "--parallel", str(os.cpu_count() or 1)])):
        done = subprocess.run([cmake, *arguments], capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-_LOG_TAIL_LINES:])
            raise GeError(f"compile config {config.path}: cmake {step} of the C++ project in "
                          f"{config.workspace} failed with exit status {done.returncode}:\n{tail}")
