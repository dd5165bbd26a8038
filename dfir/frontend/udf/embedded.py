"""C++ UDF projects that only embed Python: GE's Python UDF workspaces (`create_func_ws`, the
`udf_py_ws_sample`) wrap a Python class in a C++ MetaMultiFunc that starts an interpreter through
pybind11 (`pybind11/embed.h`, `py::module_::import`, `PyGILState_Ensure`) and forwards each proc
to a method of the class. Inside dfir the runtime is already a Python process, so dfir does not
build that wrapper: it recognises it and serves the class with its own Python host.

`find_embedded_python(config)` gives, for such a project, the Python sources folder
(`src_python/` beside the CMakeLists), the module and class the wrapper imports (its
`py_module_name` / `py_clz_name` constants, or `py::module_::import("m").attr("C")()`) and the
method each func calls (`RegProcFunc("Add1", &Cls::Add1Proc)` whose body calls `.attr("add1")`);
None for any other project. `as_python_config` turns the C++ config into the Python project dfir
serves, and `notice` is the line the build log shows. `embedded_python_config(config)` does all
three: the Python config to serve, announced on stderr and logger `dfir.frontend.udf.build`, or
None.
"""
from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from dfir.frontend.udf.config import CompileConfig
from dfir.frontend.udf.sources import SOURCE_FOLDER

_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx")
_EMBEDS_PYTHON = re.compile(r'#\s*include\s*[<"]pybind11/embed\.h[>"]|py::module_?::import\s*\(')
_CONSTANT = r'\b{name}\s*(?:\[\s*\])?\s*=\s*"([^"]+)"'
_IMPORT = re.compile(r'py::module_?::import\s*\(\s*"([^"]+)"\s*\)')
_IMPORTED_CLASS = re.compile(r'py::module_?::import\s*\(\s*"[^"]+"\s*\)\s*\.attr\s*\(\s*"([^"]+)"\s*\)\s*\(')
_STANDARD_MODULES = frozenset({"gc", "sys", "os", "threading", "pickle", "builtins"})
_REGISTRATION = re.compile(r'RegProcFunc\s*\(\s*"([^"]+)"\s*,\s*&\s*(?:\w+::)*(\w+)\s*\)')
_ATTRIBUTE = re.compile(r'\.attr\s*\(\s*"([^"]+)"\s*\)')
_LOGGER = logging.getLogger("dfir.frontend.udf.build")


@dataclass(frozen=True)
class EmbeddedPython:
    """A C++ wrapper's Python class: where its sources are and which method serves each func."""

    sources: Path
    wrapper: Path
    module: str
    class_name: str
    methods: dict[str, str]

    def as_python_config(self, config: CompileConfig) -> CompileConfig:
        """`config` as the Python project dfir serves: the class of `src_python/<module>.py`."""
        renamed = {func: method for func, method in self.methods.items() if func != method}
        return replace(config, workspace=self.sources.parent, py_module=self.module, py_class=self.class_name,
                       py_methods=renamed)

    def notice(self, config: CompileConfig) -> str:
        """The build log's line about this project."""
        return (f"dfir: C++ UDF {config.target_bin} ({config.cmakelist.resolve()}): {self.wrapper.name} embeds Python "
                f"through pybind11; dfir serves class {self.class_name} of {SOURCE_FOLDER}/{self.module}.py "
                f"with its own Python host instead of building the wrapper")


def embedded_python_config(config: CompileConfig) -> CompileConfig | None:
    """The Python project dfir serves for a C++ project that only embeds Python (announced), or None."""
    embedded = find_embedded_python(config)
    if embedded is None:
        return None
    _LOGGER.info(embedded.notice(config))
    print(embedded.notice(config), file=sys.stderr, flush=True)
    return embedded.as_python_config(config)


def find_embedded_python(config: CompileConfig) -> EmbeddedPython | None:
    """The Python class a C++ project only wraps (see the module docstring), or None."""
    folder = config.cmakelist.parent.resolve()
    sources = folder / SOURCE_FOLDER
    if not sources.is_dir():
        return None
    for wrapper in sorted(p for p in folder.rglob("*") if p.suffix in _SOURCE_SUFFIXES and p.is_file()):
        text = wrapper.read_text(errors="replace")
        if not _EMBEDS_PYTHON.search(text):
            continue
        module, class_name = _module(text), _class_name(text)
        if module and class_name and (sources / f"{module}.py").is_file():
            return EmbeddedPython(sources, wrapper, module, class_name, _methods(text, config))
    return None


def _constant(text: str, name: str) -> str | None:
    found = re.search(_CONSTANT.format(name=name), text)
    return found.group(1) if found else None


def _class_name(text: str) -> str | None:
    """The `py_clz_name` constant, or the class of `py::module_::import("m").attr("C")()`."""
    named = _constant(text, "py_clz_name")
    if named:
        return named
    called = _IMPORTED_CLASS.search(text)
    return called.group(1) if called else None


def _module(text: str) -> str | None:
    named = _constant(text, "py_module_name")
    if named:
        return named
    imported = [module for module in _IMPORT.findall(text) if module not in _STANDARD_MODULES]
    return imported[0] if imported else None


def _methods(text: str, config: CompileConfig) -> dict[str, str]:
    """func name -> the method its proc calls (the func name itself when the body names none)."""
    procs = dict(_REGISTRATION.findall(text))
    return {func.name: _called_method(text, procs.get(func.name)) or func.name for func in config.funcs}


def _called_method(text: str, proc: str | None) -> str | None:
    """The first `.attr("name")` in the body of C++ member function `proc`."""
    if proc is None:
        return None
    start = re.search(rf"\b{re.escape(proc)}\s*\([^;{{]*\)\s*{{", text)
    if start is None:
        return None
    depth, end = 1, start.end()
    while end < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    called = _ATTRIBUTE.search(text, start.end(), end)
    return called.group(1) if called else None
