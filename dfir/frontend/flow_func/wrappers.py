"""`init_wrapper` and `proc_wrapper`: the decorators of a Python UDF project's methods.

    class Add:
        @ff.init_wrapper()
        def init_flow_func(self, meta_params): ...          # returns a FLOW_FUNC_* code

        @ff.proc_wrapper("i0,i1,o0")
        def add1(self, run_context, input_flow_msgs): ...   # returns a FLOW_FUNC_* code

As in GE, a wrapped method that raises returns `FLOW_FUNC_FAILED`; the exception is logged
(with its traceback) and noted for the transaction's error message. A config's `func_name` names
the method. `proc_wrapper`'s I/O spec is GE's: the node inputs (`iN`) and outputs (`oN`) the func
owns, plus `stream_input` for a func reading `FlowMsgQueue`s; `FuncProcessPoint(py_func=Add)`
builds the workspace and compile config from these specs (`dfir.frontend.udf.workspace`), and
`FlowFuncRegister` records them by module and class as GE's does. `proc_wrapper(func_list=["A",
"B"])` (a list) lets one method serve funcs of other names in a hand-written compile config.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
import traceback
from dataclasses import dataclass
from typing import Callable, ClassVar

from dfir.core.errors import GeError
from dfir.core.source_paths import display_path
from dfir.frontend.flow_func.logger import logger
from dfir.frontend.flow_func.scope import note_problem
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED

_ROLE = "__flow_func_role__"
_NAMES = "__flow_func_names__"
IO_SPEC = "__flow_func_io__"
_PORT = re.compile(r"([io])(\d+)")


@dataclass(frozen=True)
class IoSpec:
    """A func's ports as `proc_wrapper("i0,i1,o0")` gives them: GE's func_list I/O spec."""

    text: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream_input: bool = False


def parse_io_spec(text: str) -> IoSpec:
    """`"i0,i2,o1,stream_input"` -> inputs (0, 2), outputs (1,), stream input; ValueError (GE's
    class) for an item that is none of `iN`, `oN`, `stream_input`."""
    inputs, outputs, stream_input = [], [], False
    for item in (part.strip() for part in text.split(",")):
        match = _PORT.fullmatch(item)
        if match:
            (inputs if match.group(1) == "i" else outputs).append(int(match.group(2)))
        elif item == "stream_input":
            stream_input = True
        else:
            raise ValueError(f"proc_wrapper: I/O spec {text!r} has item {item!r}, which is none of iN "
                             f"(a node input), oN (a node output) or stream_input")
    return IoSpec(text, tuple(inputs), tuple(outputs), stream_input)


class FlowFuncInfos:
    """GE's record of one UDF class: its funcs' I/O specs by name, and the `@pyflow` options that
    shape its workspace (running resources, env hook, visible devices)."""

    def __init__(self):
        self._name_to_params: dict[str, str] = {}
        self._running_resources_info: list[dict] = []
        self._func_object = None
        self._env_hook_func = None
        self._visible_device_enable = None

    def add_func_params(self, func_name: str, func_params: str) -> None:
        self._name_to_params[func_name] = func_params

    def get_all_func_params(self) -> dict[str, str]:
        return self._name_to_params

    def add_running_resources_info(self, type: str, num) -> None:  # noqa: A002 - GE's parameter name
        self._running_resources_info.append({"type": type, "num": num})

    def get_running_resources_info(self) -> list[dict]:
        return self._running_resources_info

    def set_func_object(self, func_object) -> None:
        self._func_object = func_object

    def get_func_object(self):
        return self._func_object

    def set_env_hook_func(self, env_hook_func) -> None:
        self._env_hook_func = env_hook_func

    def get_env_hook_func(self):
        return self._env_hook_func

    def set_visible_device_enable(self, visible_device_enable) -> None:
        self._visible_device_enable = visible_device_enable

    def get_visible_device_enable(self):
        return self._visible_device_enable


class FlowFuncRegister:
    """GE's registry of `proc_wrapper` I/O specs, by (module name, class name); GE calls the module
    name `model_name`."""

    _name_dict: ClassVar[dict[tuple[str, str], FlowFuncInfos]] = {}

    @classmethod
    def register_flow_func(cls, model_name: str, clz_name: str, func_name: str, params: str) -> None:
        """Record `params`, the I/O spec of `func_name` of class `clz_name` in module `model_name`."""
        cls._name_dict.setdefault((model_name, clz_name), FlowFuncInfos()).add_func_params(func_name, params)

    @classmethod
    def get_flow_func(cls, model_name: str, clz_name: str) -> dict[str, str] | None:
        infos = cls._name_dict.get((model_name, clz_name))
        return None if infos is None else infos.get_all_func_params()

    @classmethod
    def register_flow_func_infos(cls, model_name: str, clz_name: str, flow_func_infos: FlowFuncInfos) -> None:
        cls._name_dict[(model_name, clz_name)] = flow_func_infos

    @classmethod
    def get_flow_func_infos(cls, model_name: str, clz_name: str) -> FlowFuncInfos | None:
        return cls._name_dict.get((model_name, clz_name))


def init_wrapper() -> Callable:
    """Decorate `init_flow_func(self, meta_params)`."""
    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def init_flow_func(self, meta_params):
            try:
                return method(self, meta_params)
            except Exception as error:  # noqa: BLE001 - GE's contract: any exception fails
                return _failed(method, error)
        setattr(init_flow_func, _ROLE, "init")
        return init_flow_func
    return wrap


def proc_wrapper(func_list: str | list[str] | None = None) -> Callable:
    """Decorate a proc `(self, run_context, input_flow_msgs)`. `func_list` is GE's I/O spec
    (`"i0,i1,o0"`: the node ports the func owns, see `parse_io_spec`), or a list of the func
    names the method serves in a hand-written compile config."""
    io_spec = parse_io_spec(func_list) if isinstance(func_list, str) else None
    names = () if io_spec is not None else _func_names(func_list)

    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def proc(self, run_context, input_flow_msgs):
            try:
                return method(self, run_context, input_flow_msgs)
            except Exception as error:  # noqa: BLE001 - GE's contract: any exception fails
                return _failed(method, error)
        setattr(proc, _ROLE, "proc")
        setattr(proc, _NAMES, names)
        if io_spec is not None:
            setattr(proc, IO_SPEC, io_spec)
            FlowFuncRegister.register_flow_func(method.__module__, method.__qualname__.split(".")[0],
                                                method.__name__, io_spec.text)
        return proc
    return wrap


def class_io_specs(cls: type) -> dict[str, IoSpec]:
    """The I/O spec of each `proc_wrapper("...")` method of `cls` (its bases' included), by method
    name, in definition order."""
    specs: dict[str, IoSpec] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            spec = getattr(value, IO_SPEC, None)
            if isinstance(spec, IoSpec):
                specs[name] = spec
            elif name in specs:
                del specs[name]  # overridden by an undecorated method
    return specs


def find_proc(cls: type, func_name: str) -> str | None:
    """The attribute of `cls` serving func `func_name`: a proc listing it in `func_list`, else the
    method of that name; None when there is neither."""
    for attribute in sorted(dir(cls)):
        if func_name in getattr(getattr(cls, attribute, None), _NAMES, ()):
            return attribute
    return func_name if callable(getattr(cls, func_name, None)) else None


def exception_text(error: BaseException) -> str:
    """How a UDF exception is named in a transaction's error: ``ValueError: bad shape``."""
    return f"{type(error).__name__}: {error}"


def user_frames(error: BaseException) -> str:
    """Where user code raised `error`: one ``\n  at FILE:LINE in FUNCTION`` per frame of its
    traceback outside dfir itself, innermost last (empty when every frame is dfir's)."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith(_DFIR_FOLDERS)]
    return "".join(f"\n  at {_file_name(frame.filename)}:{frame.lineno} in {frame.name}" for frame in frames)


def _file_name(filename: str) -> str:
    return filename if filename.startswith("<") else display_path(filename)


def _package_folder(name: str) -> str:
    return os.path.dirname(importlib.util.find_spec(name).origin) + os.sep


_DFIR_FOLDERS = tuple({_package_folder("dfir"), _package_folder("dfir.runtime")})


def _failed(method: Callable, error: Exception) -> int:
    text = f"{method.__qualname__} raised {exception_text(error)}{user_frames(error)}"
    logger.error("%s\n%s", text, "".join(traceback.format_exception(error)).rstrip())
    note_problem(text)
    return FLOW_FUNC_FAILED


def _func_names(func_list) -> tuple[str, ...]:
    if func_list is None:
        return ()
    names = func_list
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n for n in names):
        raise GeError(f"proc_wrapper: func_list must be an I/O spec such as \"i0,i1,o0\" or a list of func "
                      f"names, got {func_list!r}")
    return tuple(names)
