"""A `FuncProcessPoint(compile_config_path=...)` as the importer needs it: config, bytes, IR facts.

1. Read and check the compile config (`dfir.frontend.udf.config`).
2. Python project: pack `<workspace>/src_python/` (`dfir.frontend.udf.sources`), import the packed module
   as the runtime will, and check that `py_class` exists and has a method for every `func_name`.
3. C++ project: build the library with CMake when `release/<target_bin>` is missing
   (`dfir.frontend.udf.build`) and take its bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfir.core.errors import GeError
from dfir.core.udf_timeout import UDF_TIMEOUT_FACT
from dfir.frontend.flow_func.wrappers import find_proc
from dfir.frontend.udf.build import ensure_built
from dfir.frontend.udf.config import CompileConfig, load_compile_config
from dfir.frontend.udf.embedded import embedded_python_config
from dfir.frontend.udf.sources import SOURCE_FOLDER, load_project_class, pack_sources
from dfir.om.plan import METHOD_FACT


@dataclass(frozen=True)
class ProjectSpec:
    """What a UDF project contributes to its `df.func_pp`.

    `payload` is the packed Python sources (py_project) or the library's bytes (cpp_project);
    `facts` is the `project` property: `py_module`/`py_class`, or `target_bin`/`resource_type`
    (and `heavy_load`, `udf_timeout_ms` when the config gives them).
    """

    config: CompileConfig
    payload: bytes
    facts: dict[str, str]

    @property
    def kind(self) -> str:
        return self.config.kind


def load_project(compile_config_path: str | Path) -> ProjectSpec:
    """The project a compile config describes (see the module docstring for the steps)."""
    config = load_compile_config(compile_config_path)
    if not config.workspace.is_dir():
        raise GeError(f"compile config {config.path}: workspace {config.workspace} is not a folder")
    if config.kind == "py_project":
        return _python_project(config)
    return _cpp_project(config)


def _python_project(config: CompileConfig) -> ProjectSpec:
    sources = config.workspace / SOURCE_FOLDER
    if not sources.is_dir():
        raise GeError(f"compile config {config.path}: a Python project keeps its sources in "
                      f"{sources}, which is not a folder")
    payload = pack_sources(sources)
    cls, _ = load_project_class(payload, config.py_module, config.py_class,
                                f"compile config {config.path}")
    for index, func in enumerate(config.funcs):
        method = config.py_methods.get(func.name)
        if (find_proc(cls, func.name) if method is None else getattr(cls, method, None)) is None:
            raise GeError(f"compile config {config.path}: func_list[{index}].func_name "
                          f"'{func.name}' is not a method of class {config.py_class} "
                          f"({SOURCE_FOLDER}/{config.py_module}.py)")
    methods = {f"{METHOD_FACT}{func}": method for func, method in config.py_methods.items()}
    return ProjectSpec(config, payload, _config_facts({"py_module": config.py_module, "py_class": config.py_class,
                                                       **methods}, config))


def _cpp_project(config: CompileConfig) -> ProjectSpec:
    python_config = embedded_python_config(config)  # a C++ wrapper around a Python class
    if python_config is not None:
        return _python_project(python_config)
    library = ensure_built(config)
    return ProjectSpec(config, library.read_bytes(),
                       _config_facts({"target_bin": config.target_bin, "resource_type": config.resource_type}, config))


def _config_facts(facts: dict[str, str], config: CompileConfig) -> dict[str, str]:
    """`facts` with `heavy_load = "true"` when the config says so (place-nodes then puts the node
    on the host CPU of its devices' servers) and its `udf_timeout_ms` when it gives one (lowering
    makes it the node's timeout, `Plan.udf_timeouts`)."""
    if config.heavy_load:
        facts = {**facts, "heavy_load": "true"}
    if config.udf_timeout_ms is not None:
        facts = {**facts, UDF_TIMEOUT_FACT: str(config.udf_timeout_ms)}
    return facts
