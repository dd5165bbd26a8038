"""Python UDF workspaces laid out as GE's `create_func_ws` lays them out, for
`FuncProcessPoint(py_func=Class)`.

A class whose procs carry GE's I/O specs (`@ff.proc_wrapper("i0,i1,o0")`) gets, in its workspace
(`workspace_dir`, default `./<Class>_ws`), for `UserFunc1` (GE's snake case: `user_func1`):

    func_user_func1.json            the compile config: GE's keys (func_list, input_num,
                                    output_num, target_bin, workspace, cmakelist_path,
                                    heavy_load) plus py_module / py_class, which make dfir run
                                    the class on its Python host
    CMakeLists.txt                  builds src_cpp/ into libfunc_user_func1.so where a build is wanted
    src_cpp/func_user_func1.cpp     the C++ entry: embeds Python through pybind11
    src_python/func_user_func1.py   the class's module, copied

Several classes may share one workspace (each has its own config, C++ entry and module). The
node ports are checked as GE checks them: every input index 0..n-1 owned by exactly one func,
every output index 0..m-1 by at least one (a ValueError, GE's class, otherwise).
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2

from dfir.core.errors import DfException, GeError
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.frontend.flow_func.wrappers import class_io_specs

CMAKELIST = "CMakeLists.txt"
CPP_FOLDER = "src_cpp"
PYTHON_FOLDER = "src_python"
_TEMPLATES = Path(__file__).resolve().parents[1] / "flow_func" / "templates" / "workspace"


@dataclass(frozen=True)
class WorkspaceFunc:
    """One func of a workspace: its name (the method's) and the node ports it owns."""

    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream_input: bool = False


def snake_case(name: str) -> str:
    """GE's file-name form of a class name: `UserFunc1` -> `user_func1`, `HTTPServer` -> `http_server`."""
    words = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words).lower()


def create_class_workspace(cls: type, workspace_dir: str | Path | None = None) -> Path:
    """Write the workspace of UDF class `cls` (see the module docstring); the compile config's path."""
    where = f"FuncProcessPoint py_func {cls.__qualname__}"
    specs = class_io_specs(cls)
    if not specs:
        raise DfException(f"{where}: no method is decorated with @proc_wrapper(\"i0,...,o0\") naming the "
                          f"node ports it owns; decorate its procs that way, or make the class a @pyflow UDF",
                          FLOW_FUNC_FAILED)
    funcs = [WorkspaceFunc(name, spec.inputs, spec.outputs, spec.stream_input) for name, spec in specs.items()]
    source = _module_source(cls, where)
    workspace = Path(workspace_dir if workspace_dir is not None else f"./{cls.__name__}_ws").resolve()
    return write_workspace(funcs, cls.__name__, workspace, source, where)


def write_workspace(funcs: list[WorkspaceFunc], clz_name: str, workspace: Path, source: Path,
                    where: str) -> Path:
    """Write the files of one class `clz_name` (module copied from `source`) into `workspace`."""
    input_num = _input_num(funcs, where)
    output_num = _output_num(funcs, where)
    prj_name = f"func_{snake_case(clz_name)}"
    names = {"prj_name": prj_name, "clz_name": clz_name, "py_module": prj_name, "cfg_name": f"{prj_name}.json",
             "target_bin": f"lib{prj_name}.so", "funcs": funcs}
    for folder in (CPP_FOLDER, PYTHON_FOLDER):
        (workspace / folder).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, workspace / PYTHON_FOLDER / f"{prj_name}.py")
    (workspace / CPP_FOLDER / f"{prj_name}.cpp").write_text(_render("wrapper.cpp.j2", names))
    (workspace / CMAKELIST).write_text(_render("CMakeLists.txt.j2", names))
    config = {
        "func_list": [{"func_name": f.name, "inputs_index": list(f.inputs), "outputs_index": list(f.outputs),
                       "stream_input": f.stream_input} for f in funcs],
        "input_num": input_num, "output_num": output_num, "target_bin": names["target_bin"],
        "workspace": str(workspace), "cmakelist_path": CMAKELIST, "heavy_load": True,
        "py_module": prj_name, "py_class": clz_name,
    }
    path = workspace / names["cfg_name"]
    path.write_text(json.dumps(config, indent=4) + "\n")
    return path


def _module_source(cls: type, where: str) -> Path:
    """The source file of the module defining `cls`, which the workspace copies (as GE does)."""
    module = sys.modules.get(cls.__module__)
    if cls.__module__ == "__main__" or module is None:
        raise GeError(f"{where}: the class is defined in {cls.__module__}, which the runtime cannot import "
                      f"again; define it in a module of its own (the workspace copies that module)")
    source = getattr(module, "__file__", None)
    if not source or not source.endswith(".py") or not Path(source).is_file():
        raise GeError(f"{where}: module {cls.__module__} has no Python source file to copy into the "
                      f"workspace (got {source!r})")
    return Path(source)


def _input_num(funcs: list[WorkspaceFunc], where: str) -> int:
    indexes = sorted(index for func in funcs for index in func.inputs)
    for position, index in enumerate(indexes):
        if position < index:
            raise ValueError(f"{where}: input index {position} is not configured; the @proc_wrapper specs "
                             f"own inputs {indexes}")
        if position > index:
            raise ValueError(f"{where}: input index {index} is configured repeatedly; the @proc_wrapper specs "
                             f"own inputs {indexes}")
    return len(indexes)


def _output_num(funcs: list[WorkspaceFunc], where: str) -> int:
    indexes = sorted({index for func in funcs for index in func.outputs})
    for position, index in enumerate(indexes):
        if position != index:
            raise ValueError(f"{where}: output index {position} is not configured; the @proc_wrapper specs "
                             f"own outputs {indexes}")
    return len(indexes)


def _render(template: str, names: dict) -> str:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)), keep_trailing_newline=True,
                                     undefined=jinja2.StrictUndefined)
    return environment.get_template(template).render(names)
