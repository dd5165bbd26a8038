"""The closest known name to a misspelt one, for "did you mean ...?" in error messages."""
from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["closest_name"]

_CUTOFF = 0.6
"""difflib's similarity (0..1) a known name needs to be suggested: `ge.graphKey` finds
`ge.graph_key`, `ge.bogus` finds nothing."""


def closest_name(word: str, known: Iterable[str]) -> str | None:
    """The name in `known` most like `word`, case aside (`ge.exec.deviceID` gives
    `ge.exec.deviceId`), or None when none is close enough to be what was meant."""
    by_folded: dict[str, str] = {}
    for name in known:
        by_folded.setdefault(name.lower(), name)
    matches = difflib.get_close_matches(word.lower(), list(by_folded), n=1, cutoff=_CUTOFF)
    return by_folded[matches[0]] if matches else None
