"""Builds the native runtime core (`dfir.runtime._native`); all metadata lives in pyproject.toml."""
from glob import glob

import numpy
from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

native = Pybind11Extension(
    "dfir.runtime._native",
    sorted(glob("runtime/native/*.cc") + glob("runtime/bindings/*.cc")),
    include_dirs=["runtime/native", "runtime/include", numpy.get_include()],
    cxx_std=17,
    extra_compile_args=["-O2"],
    extra_link_args=["-pthread"],
    libraries=["dl"],  # dlopen of C++ UDF libraries (runtime/native/udf_library.cc)
)

setup(ext_modules=[native], cmdclass={"build_ext": build_ext})
