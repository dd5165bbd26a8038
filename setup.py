"""Builds the native runtime core (`dfir.runtime._native`); all metadata lives in pyproject.toml.

The C++ sources compile in parallel (one job per core; env DFIR_BUILD_JOBS sets the count), into
objects kept in build/native/: `pip install .` and `pip install -e .` (whose own build folders are
temporary) then share them, and a source compiles again only when it or a header is newer than
its object.

The build says what it does, one step a line on stderr (shown by `python setup.py build_ext` and
`pip install -v`): how many sources compile with how many jobs, each source as it is compiled
(`[3/12] compiled runtime/native/arena.cc in 4.1 s`), then the link.
"""
import os
import sys
import threading
import time
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


def build_jobs() -> int:
    """The compile jobs ParallelCompile runs: env DFIR_BUILD_JOBS, else one per core."""
    return int(os.environ.get("DFIR_BUILD_JOBS", "0")) or os.cpu_count() or 1


class BuildSteps:
    """The native build's step lines, written to `stream` (stderr by default) as they happen;
    `clock` gives seconds (tests give a fake one)."""

    def __init__(self, stream=None, clock=time.monotonic):
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self._lock = threading.Lock()
        self._done = 0
        self._total = 0

    def say(self, line: str) -> None:
        print(f"dfir native build: {line}", file=self.stream, flush=True)

    def start(self, stale: int, total: int, jobs: int) -> None:
        self._total = stale
        self.say(f"{stale} of {total} sources to compile with {jobs} job{'' if jobs == 1 else 's'} "
                 f"({total - stale} up to date in {OBJECTS_DIR})")

    def compiling(self, compile_one):
        """`compile_one(obj, src, ...)` that says `[k/N] compiled SRC in T s` after each source."""
        def compile_and_say(obj, src, *args, **kwargs):
            started = self.clock()
            compile_one(obj, src, *args, **kwargs)
            with self._lock:
                self._done += 1
                self.say(f"[{self._done}/{self._total}] compiled {src} in {self.clock() - started:.1f} s")
        return compile_and_say

    def linking(self, link):
        """`link(objects, output, ...)` that says what it links first."""
        def link_and_say(objects, output, *args, **kwargs):
            self.say(f"linking {len(objects)} objects into {output}")
            return link(objects, output, *args, **kwargs)
        return link_and_say


def stale_sources(sources: list[str], object_of) -> list[str]:
    """The sources whose object (`object_of(src)`) is missing or older than them or a header."""
    return [src for src in sources if not os.path.exists(object_of(src)) or needs_recompile(object_of(src), src)]


class BuildWithSharedObjects(build_ext):
    """`build_ext` compiling into OBJECTS_DIR, whatever build folder the installer chose, and
    saying each step (`BuildSteps`)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.build_temp = OBJECTS_DIR

    def build_extension(self, ext) -> None:
        steps = BuildSteps()
        compiler = self.compiler

        def object_of(src: str) -> str:
            return compiler.object_filenames([src], output_dir=self.build_temp)[0]
        steps.start(len(stale_sources(ext.sources, object_of)), len(ext.sources), build_jobs())
        compiler._compile = steps.compiling(compiler._compile)
        compiler.link_shared_object = steps.linking(compiler.link_shared_object)
        try:
            super().build_extension(ext)
        finally:
            del compiler._compile, compiler.link_shared_object  # the class's methods again


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
