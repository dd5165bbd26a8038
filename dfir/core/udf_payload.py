"""What a Python UDF ships as: the payload a fresh process needs to rebuild and call it."""
from __future__ import annotations

import importlib
import inspect
import io
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import cloudpickle

from dfir.core import ge_aliases
from dfir.core.canonical_payload import stable_tracker_ids
from dfir.core.source_paths import display_path


@dataclass
class UdfPayload:
    """A `@pyflow` function, or a `@pyflow` class with its constructor arguments.

    `kind` is ``"function"`` (`target` is the function; its one func is named after it) or
    ``"class"`` (`target` is the user's class, built once per node instance as
    ``target(*args, **kwargs)``; each func is a method of that name). `choice_output` maps a
    func name to its `choice_output` predicate and `num_returns` a func name to its output count.
    """

    kind: str
    target: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    num_returns: dict[str, int] = field(default_factory=dict)
    choice_output: dict[str, Callable[[Any], bool]] = field(default_factory=dict)

    def dumps(self) -> bytes:
        """The pickled payload, the same bytes in every process: code shipped by value names its
        file as `display_path` does, and cloudpickle's class ids are derived from the content."""
        buffer = io.BytesIO()
        _StablePickler(buffer, protocol=5).dump(self)
        return stable_tracker_ids(buffer.getvalue())

    def is_generator(self, func_name: str) -> bool:
        fn = self.target if self.kind == "function" else getattr(self.target, func_name)
        return inspect.isgeneratorfunction(fn)


class _StablePickler(cloudpickle.Pickler):
    """cloudpickle, shipping the file name of code by value (which it replaces with
    `<dynamic-code>`, so tracebacks could not name the UDF's line) and of a module's `__file__`
    among a function's globals, each named as `display_path` names it."""

    def reducer_override(self, obj):
        if isinstance(obj, type) and obj in BY_REFERENCE:
            return class_named, (obj.__module__, obj.__qualname__)
        if isinstance(obj, types.CodeType):
            constructor, args = self.dispatch_table[types.CodeType](obj)
            return constructor, tuple(_stable(obj.co_filename) if arg == _DYNAMIC_CODE else arg for arg in args)
        return super().reducer_override(obj)

    def _function_getnewargs(self, func):
        newargs = super()._function_getnewargs(func)
        base_globals = self.globals_ref[id(func.__globals__)]
        if isinstance(base_globals.get("__file__"), str):
            base_globals["__file__"] = _stable(base_globals["__file__"])
        return newargs


_DYNAMIC_CODE = "<dynamic-code>"
# Classes a payload names by reference even where their module ships by value: the user message
# types (msg_type_register), which must stay the very classes the registry's functions know.
BY_REFERENCE: set[type] = set()


def class_named(module: str, qualname: str) -> type:
    """The class `qualname` of `module` (imported if needed): how a payload names a BY_REFERENCE class."""
    found: object = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _stable(filename: str) -> str:
    """A file's name as shipped; pseudo names such as `<stdin>` stay as they are."""
    return filename if filename.startswith("<") else display_path(filename)


def loads(data: bytes | memoryview) -> UdfPayload:
    """Rebuild a payload written by `UdfPayload.dumps` (runs the pickled code's imports)."""
    ge_aliases.install_if_requested()  # code written for GE imports `dataflow` by that name
    payload = cloudpickle.loads(bytes(data))
    if not isinstance(payload, UdfPayload):
        raise TypeError(f"UDF payload holds a {type(payload).__name__}, not a UdfPayload")
    return payload
