"""Logical device ids as deploy files spell them: `cluster:server:device[:numa]`."""
from __future__ import annotations

import re
from typing import NamedTuple

_DEVICE_ID = re.compile(r"\d{1,5}(:\d{1,5}){2,3}")


class DeviceId(NamedTuple):
    """`cluster:server:device[:numa]`; `numa` is None when the id has three parts."""

    cluster: int
    server: int
    device: int
    numa: int | None = None

    @property
    def ids(self) -> tuple[int, ...]:
        """The three or four numbers the id has."""
        return tuple(self[:3]) if self.numa is None else tuple(self)

    def spelling(self) -> str:
        return ":".join(str(part) for part in self.ids)


def parse_device_id(text: str) -> DeviceId | str:
    """The id `text` spells, or what is wrong with it (a sentence for an error message)."""
    if "~" in text:
        return f"'{text}' is a range; device ranges are not supported yet, give one device"
    if "," in text:
        return f"'{text}' lists several devices; give one device per entry"
    if not _DEVICE_ID.fullmatch(text):
        return f"'{text}' is not a device id cluster:server:device[:numa] of numbers up to 5 digits"
    return DeviceId(*(int(part) for part in text.split(":")))
