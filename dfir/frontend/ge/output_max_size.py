"""`ge.outputMaxSize`: the byte bound of each graph output, as GE spells it (`1024;;2048`)."""
from __future__ import annotations

_INT64_MAX = 2**63 - 1


def parse_output_max_size(text: str) -> list[int | None]:
    """`ge.outputMaxSize` as GE reads it: `;`-separated byte counts, spaces ignored, an empty
    entry for an output without one. ValueError saying what is wrong."""
    entries = text.replace(" ", "").split(";")
    if not any(entries):
        raise ValueError("expected byte counts such as '1024' or '1024;;2048'")
    sizes: list[int | None] = []
    for i, entry in enumerate(entries):
        if entry and not entry.isdigit():
            raise ValueError(f"entry {i} '{entry}' is not a byte count")
        if entry and int(entry) > _INT64_MAX:
            raise ValueError(f"entry {i} {entry} is above the int64 maximum {_INT64_MAX}")
        sizes.append(int(entry) if entry else None)
    return sizes
