"""What a Python UDF ships as: the payload a fresh process needs to rebuild and call it."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import cloudpickle


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
        return cloudpickle.dumps(self, protocol=5)

    def is_generator(self, func_name: str) -> bool:
        fn = self.target if self.kind == "function" else getattr(self.target, func_name)
        return inspect.isgeneratorfunction(fn)


def loads(data: bytes | memoryview) -> UdfPayload:
    """Rebuild a payload written by `UdfPayload.dumps` (runs the pickled code's imports)."""
    payload = cloudpickle.loads(bytes(data))
    if not isinstance(payload, UdfPayload):
        raise TypeError(f"UDF payload holds a {type(payload).__name__}, not a UdfPayload")
    return payload
