"""The session's names, as GE's dataflow package gives them: unique default names (`FlowData`,
`FlowData_1`, ...), aliases taken as given or refused, all freed by `finalize`."""
from __future__ import annotations

import threading

from dfir.core.errors import GeError

_lock = threading.Lock()
_used: dict[str, int] = {}
_taken_at: dict[str, str] = {}  # name -> where user code took it (`path:line`)


def unique_name(name: str | None, default: str, where: str) -> str:
    """`name` if given (and not taken), else `default`, `default_1`, `default_2`, ...; the
    name returned is recorded as taken at `where`."""
    base = name or default
    with _lock:
        count = _used.get(base)
        _used[base] = (count or 0) + 1
        if count is None:
            _taken_at[base] = where
            return base
        candidate = f"{base}_{count}"
        while candidate in _used:
            count += 1
            candidate = f"{base}_{count}"
        _used[base] = count + 1
        _used[candidate] = 1
        _taken_at[candidate] = where
        return candidate


def claim(name: str, where: str) -> None:
    """Take exactly `name` (an alias) at `where`: a GeError, as GE's, if the session has it."""
    with _lock:
        if name in _used:
            raise GeError(f"{where}: name:{name} is already used, please modify. "
                          f"It was taken at {_taken_at.get(name, '<unknown>')}")
        _used[name] = 1
        _taken_at[name] = where


def reset() -> None:
    """Forget every name (called by `finalize`)."""
    with _lock:
        _used.clear()
        _taken_at.clear()
