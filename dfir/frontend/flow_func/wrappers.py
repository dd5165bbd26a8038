"""`init_wrapper` and `proc_wrapper`: the decorators of a Python UDF project's methods.

    class Add:
        @ff.init_wrapper()
        def init_flow_func(self, meta_params): ...      # returns a FLOW_FUNC_* code

        @ff.proc_wrapper()
        def Add1(self, run_context, input_flow_msgs): ... # returns a FLOW_FUNC_* code

As in the seeds, a wrapped method that raises returns `FLOW_FUNC_FAILED`; the exception is logged
(with its traceback) and noted for the transaction's error message. A config's `func_name` names
the method; `proc_wrapper(func_list=["A", "B"])` lets one method serve funcs of other names.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import traceback
from typing import Callable

from dfir.core.errors import GeError
from dfir.core.source_paths import display_path
from dfir.frontend.flow_func.logger import logger
from dfir.frontend.flow_func.scope import note_problem
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED

_ROLE = "__flow_func_role__"
_NAMES = "__flow_func_names__"


def init_wrapper() -> Callable:
    """Decorate `init_flow_func(self, meta_params)`."""
    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def init_flow_func(self, meta_params):
            try:
                return method(self, meta_params)
            except Exception as error:  # noqa: BLE001 - the seeds' contract: any exception fails
                return _failed(method, error)
        setattr(init_flow_func, _ROLE, "init")
        return init_flow_func
    return wrap


def proc_wrapper(func_list: str | list[str] | None = None) -> Callable:
    """Decorate a proc `(self, run_context, input_flow_msgs)`; `func_list` names funcs it serves."""
    names = _func_names(func_list)

    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def proc(self, run_context, input_flow_msgs):
            try:
                return method(self, run_context, input_flow_msgs)
            except Exception as error:  # noqa: BLE001 - the seeds' contract: any exception fails
                return _failed(method, error)
        setattr(proc, _ROLE, "proc")
        setattr(proc, _NAMES, names)
        return proc
    return wrap


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
    names = [func_list] if isinstance(func_list, str) else func_list
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n for n in names):
        raise GeError(f"proc_wrapper: func_list must be a func name or a list of them, got {func_list!r}")
    return tuple(names)
