"""Declared shapes of JSON documents, checked whole before a loader reads them.

A shape is a `Value` (a scalar of some kind, with an optional rule), a `ListOf` another shape or an
`Obj` with required and optional keys. `check` walks a value against its shape and raises the first
defect as a GeError naming the file, the JSON path and the value: a missing key, an unknown key
(nothing is silently ignored; the closest known key is suggested), a wrong kind, an empty list
where one is required, a broken rule.

    Obj({"node_id": NON_NEGATIVE}, {"is_local": Value(bool)})
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

from dfir.core.closest import closest_name
from dfir.frontend.deploy.json_document import JsonDocument, shown


@dataclass(frozen=True)
class Value:
    """A JSON scalar of `kind`; `rule(value)` says what is wrong with it, or returns None."""

    kind: type | tuple[type, ...]
    rule: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class ListOf:
    item: Shape
    non_empty: bool = False


@dataclass(frozen=True)
class Obj:
    required: Mapping[str, Shape]
    optional: Mapping[str, Shape] = field(default_factory=dict)


Shape = Union[Value, ListOf, Obj]


def check(document: JsonDocument, value: Any, shape: Shape, where: str = "$") -> None:
    """Raise the first way `value` (at JSON path `where` of `document`) departs from `shape`."""
    if isinstance(shape, Value):
        document.expect(value, shape.kind, where)
        problem = shape.rule(value) if shape.rule else None
        if problem:
            raise document.error(where, f"{problem}, got {shown(value)}")
    elif isinstance(shape, ListOf):
        document.expect(value, list, where)
        if shape.non_empty and not value:
            raise document.error(where, "expected a non-empty list, got []")
        for index, item in enumerate(value):
            check(document, item, shape.item, f"{where}[{index}]")
    else:
        _check_object(document, value, shape, where)


def _check_object(document: JsonDocument, value: Any, shape: Obj, where: str) -> None:
    document.expect(value, dict, where)
    missing = [key for key in shape.required if key not in value]
    if missing:
        raise document.error(where, f"missing '{missing[0]}'")
    known = {**shape.required, **shape.optional}
    for key, item in value.items():
        if key not in known:
            closest = closest_name(key, known)
            hint = f" (did you mean '{closest}'?)" if closest else ""
            raise document.error(where, f"unknown key '{key}'{hint}; expected one of {', '.join(sorted(known))}")
        check(document, item, known[key], f"{where}.{key}")


def _non_negative(value: int) -> str | None:
    return "expected a non-negative integer" if value < 0 else None


def _port(value: int) -> str | None:
    return None if 0 < value <= 65535 else "expected a port number in [1, 65535]"


def _ipv4(value: str) -> str | None:
    try:
        ipaddress.IPv4Address(value)
        return None
    except ValueError:
        return "expected a dotted IPv4 address such as \"192.168.1.2\""


NON_NEGATIVE = Value(int, _non_negative)
PORT = Value(int, _port)
IPV4 = Value(str, _ipv4)
STRING = Value(str)
BOOLEAN = Value(bool)
