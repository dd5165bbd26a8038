"""Unique default names, as GE's dataflow package gives them: `FlowData`, `FlowData_1`, ..."""
from __future__ import annotations

import threading

_lock = threading.Lock()
_used: dict[str, int] = {}


def unique_name(name: str | None, default: str) -> str:
    """`name` if given (and not taken), else `default`, `default_1`, `default_2`, ..."""
    base = name or default
    with _lock:
        count = _used.get(base)
        _used[base] = (count or 0) + 1
        if count is None:
            return base
        candidate = f"{base}_{count}"
        while candidate in _used:
            count += 1
            candidate = f"{base}_{count}"
        _used[base] = count + 1
        _used[candidate] = 1
        return candidate


def reset() -> None:
    """Forget every name (called by `finalize`)."""
    with _lock:
        _used.clear()
