"""What a `@pyflow` UDF contributes to a FuncProcessPoint: its payload and its entry points."""
from __future__ import annotations

from dataclasses import dataclass, field

from dfir.core.errors import GeError
from dfir.core.udf_payload import UdfPayload


@dataclass
class FuncSpec:
    """One entry point: its name and the node ports it owns."""

    name: str
    inputs: list[int]
    outputs: list[int]
    stream_input: bool = False


@dataclass
class UdfSpec:
    """A `@pyflow` function's or class's payload, entry points and resources."""

    payload: UdfPayload
    funcs: list[FuncSpec] = field(default_factory=list)
    resources: dict | None = None


def udf_spec_of(py_func) -> UdfSpec:
    """The UdfSpec of what `FuncProcessPoint(py_func=...)` was given: a UdfSpec, or a `@pyflow`
    function (which has `udf_spec()`)."""
    if isinstance(py_func, UdfSpec):
        return py_func
    if callable(getattr(py_func, "udf_spec", None)):
        return py_func.udf_spec()
    raise GeError(f"FuncProcessPoint py_func must be a UDF class (its procs decorated with "
                  f"@proc_wrapper(\"i0,...,o0\")) or come from @pyflow, got {type(py_func).__name__}")
