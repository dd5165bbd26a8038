"""The compile config of a UDF project: parse the JSON, check every key, resolve paths.

    {"func_list": [{"func_name": "Add1", "inputs_index": [0, 1], "outputs_index": [0]}],
     "input_num": 2, "output_num": 1, "workspace": "./udf_ws", "target_bin": "libadd.so",
     "py_module": "func_add", "py_class": "Add"}

`py_module` and `py_class` make it a Python project (the class in
`<workspace>/src_python/<py_module>.py`); without them it is a C++ project that CMake builds
into `target_bin`. Relative paths count from the config file's folder (`workspace`; when no
folder is there, from the current folder, as GE counts it) or from the workspace
(`cmakelist_path`). `udf_timeout_ms` (1 to 86400000) is the timeout of one call of a node built
from the config, over its deploy entry's and the option `dfir.runtime.udf_timeout_ms`. Every
defect is a GeError naming the file and the key, e.g.
``compile config ./add.json: func_list[0].inputs_index must be a list of ints >= 0, got "0"``.
"""
from __future__ import annotations

import json
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from dfir.core.errors import GeError
from dfir.core.json_text import NotJson, decode_json
from dfir.core.udf_timeout import MAX_UDF_TIMEOUT_MS

RESOURCE_TYPES = ("X86", "Aarch", "Ascend")
DEFAULT_TOOLCHAIN = "g++"
DEFAULT_CMAKELIST = "CMakeLists.txt"
_KEYS = ("func_list", "input_num", "output_num", "workspace", "target_bin", "heavy_load",
         "py_module", "py_class", "cmakelist_path", "resource_type", "toolchain", "udf_timeout_ms")
_UNSUPPORTED_KEYS = ("built_in_flow_func", "compiler", "buf_cfg", "running_resources_info",
                     "visible_device_enable")
_FUNC_KEYS = ("func_name", "inputs_index", "outputs_index", "stream_input")
_TARGET_BIN = re.compile(r"lib([A-Za-z0-9_.+-]+)\.so")
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class FuncEntry:
    """One entry of `func_list`: a func name and the node ports it owns."""

    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream_input: bool = False


@dataclass(frozen=True)
class CompileConfig:
    """A checked compile config; paths are resolved, `kind` is py_project or cpp_project."""

    path: Path
    funcs: tuple[FuncEntry, ...]
    input_num: int
    output_num: int
    workspace: Path
    target_bin: str | None
    heavy_load: bool
    py_module: str | None
    py_class: str | None
    cmakelist: Path
    resource_type: str
    toolchain: str
    py_methods: Mapping[str, str] = field(default_factory=dict)  # func -> method, where not the func's name
    udf_timeout_ms: int | None = None  # the timeout of one call of the node (None: the config gives none)

    @property
    def kind(self) -> str:
        return "py_project" if self.py_module is not None else "cpp_project"

    @property
    def target_lib(self) -> str:
        """`add` for `target_bin` `libadd.so` (CMake's UDF_TARGET_LIB)."""
        match = _TARGET_BIN.fullmatch(self.target_bin or "")
        assert match, "load_compile_config checks target_bin of C++ projects"
        return match.group(1)


def host_resource_type() -> str:
    """The resource type of this host's CPU: X86 or Aarch (another CPU has none: '')."""
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i686", "i386"):
        return "X86"
    if machine in ("aarch64", "arm64"):
        return "Aarch"
    return ""


def load_compile_config(path: str | Path) -> CompileConfig:
    """Read and check the compile config at `path` (see the module docstring)."""
    path = Path(path)
    reader = _Reader(path, _read_json(path))
    return reader.config()


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise GeError(f"compile config {path}: cannot be read: {reason}") from None
    try:
        return decode_json(text)
    except NotJson as error:
        raise GeError(f"compile config {path} is not valid JSON: {error}") from None


class _Reader:
    """Checks one config's keys; `fail` names the file and the key."""

    def __init__(self, path: Path, document: Any):
        self.path = path
        self.doc = document

    def fail(self, key: str, problem: str) -> GeError:
        return GeError(f"compile config {self.path}: {key} {problem}")

    def config(self) -> CompileConfig:
        if not isinstance(self.doc, dict):
            raise GeError(f"compile config {self.path}: the top level must be a JSON object, got "
                          f"{_json_type(self.doc)}")
        self._check_keys("", self.doc, _KEYS, _UNSUPPORTED_KEYS)
        input_num = self._count("input_num")
        output_num = self._count("output_num")
        funcs = self._funcs(input_num, output_num)
        workspace = self._workspace(self._text("workspace", required=True))
        py_module, py_class = self._python_names()
        kind_is_python = py_module is not None
        resource_type = self._resource_type(kind_is_python)
        cmakelist = self._text("cmakelist_path") or DEFAULT_CMAKELIST
        return CompileConfig(
            path=self.path, funcs=funcs, input_num=input_num, output_num=output_num,
            workspace=workspace, target_bin=self._target_bin(required=not kind_is_python),
            heavy_load=self._flag("heavy_load", self.doc, "heavy_load"), py_module=py_module,
            py_class=py_class, cmakelist=workspace / cmakelist, resource_type=resource_type,
            toolchain=self._text("toolchain") or DEFAULT_TOOLCHAIN, udf_timeout_ms=self._udf_timeout())

    def _workspace(self, text: str) -> Path:
        """`text` from the config's folder; when no folder is there, from the current folder
        (GE's rule: its compiler `cd`s into the workspace from where the script runs)."""
        beside_config = (self.path.parent / text).resolve()
        from_cwd = Path(text).resolve()
        if not beside_config.is_dir() and from_cwd.is_dir():
            return from_cwd
        return beside_config

    def _check_keys(self, prefix: str, obj: dict, known: tuple[str, ...],
                    unsupported: tuple[str, ...] = ()) -> None:
        for key in obj:
            if key in unsupported:
                raise self.fail(f"{prefix}{key}", "is not supported yet")
            if key not in known:
                raise self.fail(f"{prefix}{key}", f"is not a known key; expected one of {list(known)}")

    def _count(self, key: str) -> int:
        if key not in self.doc:
            raise self.fail(key, "is missing; it gives the number of node " +
                            ("inputs" if key == "input_num" else "outputs"))
        value = self.doc[key]
        if not _is_int(value) or value < 0:
            raise self.fail(key, f"must be an int >= 0, got {json.dumps(value)}")
        return value

    def _text(self, key: str, required: bool = False) -> str | None:
        if key not in self.doc:
            if required:
                raise self.fail(key, "is missing")
            return None
        value = self.doc[key]
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"must be a non-empty string, got {json.dumps(value)}")
        return value

    def _udf_timeout(self) -> int | None:
        if "udf_timeout_ms" not in self.doc:
            return None
        value = self.doc["udf_timeout_ms"]
        if not _is_int(value) or not 1 <= value <= MAX_UDF_TIMEOUT_MS:
            raise self.fail("udf_timeout_ms", f"must be a timeout in [1, {MAX_UDF_TIMEOUT_MS}] (milliseconds), "
                                              f"got {json.dumps(value)}")
        return value

    def _flag(self, key: str, obj: dict, where: str) -> bool:
        value = obj.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, got {json.dumps(value)}")
        return value

    def _funcs(self, input_num: int, output_num: int) -> tuple[FuncEntry, ...]:
        items = self.doc.get("func_list")
        if not isinstance(items, list) or not items:
            got = json.dumps(items) if "func_list" in self.doc else "nothing"
            raise self.fail("func_list", f"must be a non-empty list of funcs, got {got}")
        single = len(items) == 1
        funcs = tuple(self._func(i, item, single, input_num, output_num) for i, item in enumerate(items))
        names = [f.name for f in funcs]
        for name in names:
            if names.count(name) > 1:
                raise self.fail("func_list", f"names func '{name}' twice")
        self._check_owned("inputs_index", [p for f in funcs for p in f.inputs], input_num, "input_num")
        self._check_owned("outputs_index", [p for f in funcs for p in f.outputs], output_num, "output_num")
        return funcs

    def _func(self, i: int, item: Any, single: bool, input_num: int, output_num: int) -> FuncEntry:
        where = f"func_list[{i}]"
        if not isinstance(item, dict):
            raise self.fail(where, f"must be an object, got {_json_type(item)}")
        self._check_keys(f"{where}.", item, _FUNC_KEYS)
        name = item.get("func_name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{where}.func_name", f"must be a non-empty string, got "
                                                  f"{json.dumps(name) if 'func_name' in item else 'nothing'}")
        inputs = self._ports(f"{where}.inputs_index", item, "inputs_index", single, input_num)
        if not inputs:
            raise self.fail(f"{where}.inputs_index", f"is empty; func '{name}' needs at least one input")
        outputs = self._ports(f"{where}.outputs_index", item, "outputs_index", single, output_num)
        stream = self._flag("stream_input", item, f"{where}.stream_input")
        return FuncEntry(name, inputs, outputs, stream)

    def _ports(self, where: str, item: dict, key: str, single: bool, count: int) -> tuple[int, ...]:
        if key not in item:
            if single:
                return tuple(range(count))
            raise self.fail(where, "is missing; with several funcs each func lists its ports")
        ports = item[key]
        if not isinstance(ports, list) or not all(_is_int(p) and p >= 0 for p in ports):
            raise self.fail(where, f"must be a list of ints >= 0, got {json.dumps(ports)}")
        return tuple(ports)

    def _check_owned(self, key: str, owned: list[int], count: int, count_key: str) -> None:
        if sorted(owned) != list(range(count)):
            raise self.fail(f"func_list[*].{key}", f"cover ports {sorted(owned)}; with {count_key} "
                                                   f"{count} each of 0..{count - 1} must be owned by "
                                                   f"exactly one func")

    def _python_names(self) -> tuple[str | None, str | None]:
        module, cls = self._text("py_module"), self._text("py_class")
        if (module is None) != (cls is None):
            missing = "py_class" if cls is None else "py_module"
            raise self.fail(missing, "is missing; a Python project gives both py_module and py_class")
        if module is not None:
            module = module[:-3] if module.endswith(".py") else module
            if not _MODULE_NAME.fullmatch(module):
                raise self.fail("py_module", f"must name a Python file of src_python (e.g. "
                                             f"\"func_add\"), got {json.dumps(self.doc['py_module'])}")
        return module, cls

    def _resource_type(self, is_python: bool) -> str:
        host = host_resource_type()
        value = self._text("resource_type") or host
        if value not in RESOURCE_TYPES:
            raise self.fail("resource_type", f"must be one of {list(RESOURCE_TYPES)}, got "
                                             f"{json.dumps(value)}")
        if is_python and value != host:
            raise self.fail("resource_type", f"is {value}, but a Python UDF runs on the host "
                                             f"({host or platform.machine()})")
        return value

    def _target_bin(self, required: bool) -> str | None:
        value = self._text("target_bin", required=required)
        if value is not None and not _TARGET_BIN.fullmatch(value):
            raise self.fail("target_bin", f"must name a library lib<name>.so, got {json.dumps(value)}")
        return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)
