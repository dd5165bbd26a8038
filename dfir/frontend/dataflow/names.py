"""The session's names, as GE's dataflow package gives them: unique default names (`FlowData`,
`FlowData_1`, ...), name scopes, aliases taken as given or refused, all freed by `finalize`.

As in GE, names are unique within a namespace: nodes (and their aliases) have their own, every
other kind (FlowData, process points, FlowGraph, scopes) shares the other one. Inside
`with name_scope("stage"):` every name is prefixed `stage/` (`stage/FlowData`, `stage/FlowNode`,
`stage/inner/FlowData` in a nested scope); a scope name taken again becomes `stage_1`, as any
name does, and its names `stage_1/...`.
"""
from __future__ import annotations

import threading

from dfir.core.errors import GeError
from dfir.frontend.source import user_location

NODE_NAMESPACE = "FlowNode"
"""The namespace of node names and aliases (GE's); every other name is in namespace None."""
_NAMESPACE_OF_DEFAULT = {"FlowNode": NODE_NAMESPACE}

_lock = threading.Lock()
_used: dict[str | None, dict[str, int]] = {}  # namespace -> name -> the next suffix to try
_taken_at: dict[tuple[str | None, str], str] = {}  # (namespace, name) -> where user code took it (`path:line`)
_scopes = threading.local()  # .stack: the enclosing scope names of this thread, outermost first


class NameTakenError(GeError, ValueError):
    """A name that must be taken as given (an alias, a scope with `auto_name=False`) is taken:
    a ValueError as GE's, and a GeError as dfir's."""


def unique_name(name: str | None, default: str, where: str) -> str:
    """`name` if given (and not taken), else `default`, `default_1`, `default_2`, ..., under the
    enclosing scopes; the name returned is recorded as taken at `where`."""
    return _take(name or default, _NAMESPACE_OF_DEFAULT.get(default), True, where)


def claim(name: str, where: str) -> str:
    """Take exactly `name` (an alias), under the enclosing scopes, in the node namespace: a
    NameTakenError, as GE's, if the session has it. Returns the name taken."""
    return _take(name, NODE_NAMESPACE, False, where)


def _take(base: str, namespace: str | None, auto_name: bool, where: str) -> str:
    full = "/".join([*_stack(), base])
    with _lock:
        used = _used.setdefault(namespace, {})
        count = used.get(full)
        if count is None:
            used[full] = 1
            _taken_at[namespace, full] = where
            return full
        if not auto_name:
            raise NameTakenError(f"{where}: name:{full} is already used, please modify. "
                                 f"It was taken at {_taken_at.get((namespace, full), '<unknown>')}")
        candidate = f"{full}_{count}"
        while candidate in used:
            count += 1
            candidate = f"{full}_{count}"
        used[full] = count + 1
        used[candidate] = 1
        _taken_at[namespace, candidate] = where
        return candidate


def _stack() -> list[str]:
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


class NameScope:
    """`with name_scope(...) as scope_name:`: the names made in the block are under the scope."""

    def __init__(self, name: str, namespace: str | None, auto_name: bool):
        self.name = name
        self.namespace = namespace
        self.auto_name = auto_name
        self._entered: list[list[str]] = []  # the stack each (nested) entry pushed onto

    def __enter__(self) -> str:
        full = _take(self.name, self.namespace, self.auto_name, user_location())
        stack = _stack()
        stack.append(full.rpartition("/")[2])
        self._entered.append(stack)
        return full

    def __exit__(self, *exc_info) -> None:
        self._entered.pop().pop()  # the stack it entered, even if `reset` has made a fresh one since


def name_scope(name: str | None, default_name: str | None = None, namespace: str | None = None,
               auto_name: bool = True) -> NameScope:
    """GE's `name_scope`: a context manager that puts the names made in its block under `name`
    (`default_name` when None), made unique in `namespace` like any name, or, with
    `auto_name=False`, refused when taken. Entering it gives the scope's full name."""
    name = default_name if name is None else name
    if not isinstance(name, str):
        raise TypeError("name for name_scope must be a string.")
    if namespace is not None and not isinstance(namespace, str):
        raise TypeError("namespace for name_scope must be a string.")
    return NameScope(name, namespace, bool(auto_name))


def reset() -> None:
    """Forget every name and scope (called by `finalize`; GE's `reset_name_scope`)."""
    global _scopes
    with _lock:
        _used.clear()
        _taken_at.clear()
        _scopes = threading.local()
