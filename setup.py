"""Builds the native runtime core (`dfir.runtime._native`); all metadata lives in pyproject.toml.

The C++ sources compile in parallel (one job per core; env DFIR_BUILD_JOBS sets the count), into
objects kept in build/native/: `pip install .` and `pip install -e .` (whose own build folders are
temporary) then share them, and a source compiles again only when it or a header is newer than
its object.
"""
import os
from glob import glob

import numpy
from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

OBJECTS_DIR = os.path.join("build", "native")
HEADERS = glob("runtime/native/*.h") + glob("runtime/bindings/*.h") + glob("runtime/include/**/*.h", recursive=True)


def needs_recompile(obj: str, src: str) -> bool:
    """Whether `obj` is older than `src` or any native header (any source may include any)."""
    built = os.stat(obj).st_mtime
    return any(os.stat(path).st_mtime > built for path in [src, *HEADERS])


class BuildWithSharedObjects(build_ext):
    """`build_ext` compiling into OBJECTS_DIR, whatever build folder the installer chose."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.build_temp = OBJECTS_DIR


native = Pybind11Extension(
    "dfir.runtime._native",
    sorted(glob("runtime/native/*.cc") + glob("runtime/bindings/*.cc")),
    include_dirs=["runtime/native", "runtime/include", numpy.get_include()],
    cxx_std=17,
    extra_compile_args=["-O2"],
    extra_link_args=["-pthread"],
    libraries=["dl", "crypto"],  # dlopen of C++ UDF libraries; OpenSSL's SHA-256 (runtime/native/sha256.cc)
)

with ParallelCompile("DFIR_BUILD_JOBS", needs_recompile=needs_recompile):
    setup(ext_modules=[native], cmdclass={"build_ext": BuildWithSharedObjects})
