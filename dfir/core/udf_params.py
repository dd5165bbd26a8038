"""Typed init params: what `FuncProcessPoint.set_init_param` accepts and how its type travels.

A value keeps its type from `set_init_param` to the UDF's `MetaParams.get_attr_*` getters, so a
getter can refuse a value of another type. The type is one of the tags below; the execution
plan carries each param as ``{"type": TAG, "value": JSON}`` (a DType as its ``DT_*`` name).

| value                                  | tag             | getter                         |
|----------------------------------------|-----------------|--------------------------------|
| int (not bool)                         | `int`           | `get_attr_int`                 |
| float                                  | `float`         | `get_attr_float`               |
| bool                                   | `bool`          | `get_attr_bool`                |
| str                                    | `str`           | `get_attr_str`                 |
| DType                                  | `dtype`         | `get_attr_tensor_dtype`        |
| list of one of those                   | `list_<tag>`    | `get_attr_<getter>_list`       |
| list of lists of int                   | `list_list_int` | `get_attr_int_list_list`       |
| []                                     | `list_empty`    | any list getter                |
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

from dfir.core import data_type as dt
from dfir.core.errors import GeError

SCALAR_TAGS = ("int", "float", "bool", "str", "dtype")
LIST_TAGS = tuple(f"list_{tag}" for tag in SCALAR_TAGS) + ("list_list_int", "list_empty")
TAGS = SCALAR_TAGS + LIST_TAGS
INT64_RANGE = (-(1 << 63), (1 << 63) - 1)


@dataclass(frozen=True)
class InitParam:
    """A validated init param: its type tag and its value normalized to plain Python types."""

    tag: str
    value: Any

    def to_plan(self) -> dict:
        """The plan's JSON form: ``{"type": tag, "value": ...}`` with DTypes as their names."""
        return {"type": self.tag, "value": _to_json(self.value)}


def typed_param(name: str, value: Any, where: str) -> InitParam:
    """`value` as an `InitParam`; a GeError naming `where` and `name` when it has no supported type."""
    if isinstance(value, (list, tuple)):
        return _typed_list(name, list(value), where)
    tag = _scalar_tag(value)
    if tag is None:
        raise GeError(f"{where}: init param '{name}' has unsupported value {value!r}; expected a "
                      f"str, int, float, bool or DType, a list of one of those, or a list of lists "
                      f"of int")
    return InitParam(tag, _normalized(name, tag, value, where))


def from_plan(name: str, entry: dict) -> InitParam:
    """The `InitParam` of a plan entry; a GeError naming `name` when the entry is malformed."""
    tag, value = entry.get("type"), entry.get("value")
    if tag not in TAGS:
        raise GeError(f"init param '{name}' has type {tag!r} in the plan; expected one of {list(TAGS)}")
    if tag == "dtype":
        value = dt.from_name(value)
    elif tag == "list_dtype":
        value = [dt.from_name(v) for v in value]
    return InitParam(tag, value)


def _scalar_tag(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dt.DType):
        return "dtype"
    if isinstance(value, str):
        return "str"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    return None


def _normalized(name: str, tag: str, value: Any, where: str) -> Any:
    if tag == "int":
        value = int(value)
        if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
            raise GeError(f"{where}: init param '{name}' value {value} does not fit in int64")
        return value
    if tag == "float":
        return float(value)
    return value


def _typed_list(name: str, items: list, where: str) -> InitParam:
    if not items:
        return InitParam("list_empty", [])
    if all(isinstance(item, (list, tuple)) for item in items):
        rows = [typed_param(name, list(item), where) for item in items]
        if any(row.tag not in ("list_int", "list_empty") for row in rows):
            raise GeError(f"{where}: init param '{name}' is a list of lists; only lists of lists "
                          f"of int are supported, got {items!r}")
        return InitParam("list_list_int", [row.value for row in rows])
    tags = {_scalar_tag(item) for item in items}
    if len(tags) != 1 or None in tags:
        raise GeError(f"{where}: init param '{name}' list {items!r} mixes types or holds an "
                      f"unsupported value; a list holds str, int, float, bool or DType values of "
                      f"one type")
    tag = tags.pop()
    return InitParam(f"list_{tag}", [_normalized(name, tag, item, where) for item in items])


def _to_json(value: Any) -> Any:
    if isinstance(value, dt.DType):
        return value.name
    if isinstance(value, list):
        return [_to_json(item) for item in value]
    return value
