"""Logical device ids and the device lists deploy files spell with them.

A device id is `cluster:server:device[:numa]`: the cluster's position in the resource config, the
server's `node_id`, the device's position in that server's `item_list` and, optionally, a compute
unit (die) inside the device. The device `-1` is the server's host CPU (`0:0:-1:0`); `-1` alone is
the host, the same device as `0:0:-1`.

A device list is comma-separated ids whose parts may be ranges `a~b` (a <= b); an id with ranges
stands for the Cartesian product of its parts in lexicographic order:

    "0:0:0~1:0~1,0:0:3:0"  ->  0:0:0:0, 0:0:0:1, 0:0:1:0, 0:0:1:1, 0:0:3:0

Limits (those of GE's parser): numbers of at most 5 digits, values at most 32767 (INT16_MAX), at
most 65535 devices in one list, no device twice.
"""
from __future__ import annotations

import itertools
import math
from typing import NamedTuple

from lark import Lark, Transformer, UnexpectedInput
from lark.exceptions import VisitError

MAX_DIGITS = 5
MAX_VALUE = 32767
MAX_DEVICES = 65535

_GRAMMAR = r"""
    start: HOST_ONLY -> host
         | device ("," device)* -> devices
    device: part ":" part ":" device_part (":" part)?
    ?device_part: part | HOST_CPU
    part: NUMBER ("~" NUMBER)?
    HOST_ONLY.2: /-1(?![0-9:,~])/
    HOST_CPU: "-1"
    NUMBER: /[0-9]+/
"""
_PARSER = Lark(_GRAMMAR, parser="lalr")
_EXPECTED = ("expected comma-separated ids cluster:server:device[:numa], each part a number or a "
             "range a~b, the device -1 for a server's host CPU, or -1 alone for the host")


class DeviceId(NamedTuple):
    """`cluster:server:device[:numa]`; `numa` is None when the id has three parts."""

    cluster: int
    server: int
    device: int
    numa: int | None = None

    @property
    def is_host(self) -> bool:
        """A server's host CPU rather than an accelerator device."""
        return self.device == -1

    @property
    def ids(self) -> tuple[int, ...]:
        """The three or four numbers the id has."""
        return tuple(self[:3]) if self.numa is None else tuple(self)

    def spelling(self) -> str:
        """`0:0:1:0`, `0:0:1`; the host (`-1` alone, also spelled `0:0:-1`) is `-1`."""
        return "-1" if self == HOST else ":".join(str(part) for part in self.ids)


HOST = DeviceId(0, 0, -1)


class DeviceListError(ValueError):
    """What is wrong with a device list, as a sentence naming the text."""


class _Ranges(Transformer):
    """Parse tree -> a list of ids, each a list of (low, high) ranges, one per part."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def host(self, _):
        return None

    def devices(self, ids):
        return ids

    def device(self, parts):
        return [(-1, -1) if isinstance(part, str) else part for part in parts]

    def part(self, numbers):
        low, high = (self._number(n) for n in (numbers * 2)[:2])
        if low > high:
            raise DeviceListError(f"'{self.text}': the range {low}~{high} runs backwards; "
                                  f"its start must not be greater than its end")
        return low, high

    def _number(self, digits: str) -> int:
        if len(digits) > MAX_DIGITS:
            raise DeviceListError(f"'{self.text}': the number {digits} has more than {MAX_DIGITS} digits")
        if int(digits) > MAX_VALUE:
            raise DeviceListError(f"'{self.text}': {int(digits)} is more than {MAX_VALUE} (INT16_MAX)")
        return int(digits)


def parse_device_list(text: str) -> tuple[DeviceId, ...] | str:
    """The devices `text` lists, in its order with ranges expanded; or what is wrong with it (a
    sentence naming the text, for an error message)."""
    try:
        ids = _Ranges(text).transform(_parser_tree(text))
        return (HOST,) if ids is None else _expand(text, ids)
    except VisitError as error:
        return str(error.orig_exc)
    except DeviceListError as error:
        return str(error)


def _parser_tree(text: str):
    try:
        return _PARSER.parse(text)
    except UnexpectedInput as error:
        raise DeviceListError(f"'{text}' is not a device list ({_what_breaks(text, error)}); "
                              f"{_EXPECTED}") from None


def _what_breaks(text: str, error: UnexpectedInput) -> str:
    found = getattr(error, "char", None) or getattr(getattr(error, "token", None), "value", None)
    if found and error.column > 0:
        return f"unexpected '{found}' at column {error.column}"
    return "it ends early" if text else "it is empty"


def _expand(text: str, ids: list[list[tuple[int, int]]]) -> tuple[DeviceId, ...]:
    count = sum(math.prod(high - low + 1 for low, high in parts) for parts in ids)
    if count > MAX_DEVICES:
        raise DeviceListError(f"'{text}' expands to {count} devices; at most {MAX_DEVICES} are allowed")
    devices: list[DeviceId] = []
    seen: set[DeviceId] = set()
    for parts in ids:
        for numbers in itertools.product(*(range(low, high + 1) for low, high in parts)):
            device = DeviceId(*numbers)
            if device in seen:
                raise DeviceListError(f"'{text}' lists device {device.spelling()} twice")
            seen.add(device)
            devices.append(device)
    return tuple(devices)


def spell_device_list(devices: tuple[DeviceId, ...]) -> str:
    """The comma-separated spelling of `devices`, which parses back to them (no ranges)."""
    return ",".join(device.spelling() for device in devices)
