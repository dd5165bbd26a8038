"""The UDF call the current thread is in: which node, func and instance, and what went wrong.

The runtime enters a `CallScope` around every `init_flow_func` and proc call of a UDF project;
`logger` stamps its node and instance on each record, and the wrappers and `MetaRunContext` note
problems in it (an exception, an output index out of range), which the runtime puts into the
transaction's error message when the call fails.
"""
from __future__ import annotations

from contextvars import ContextVar


class CallScope:
    """One UDF call: `problems` explain a failure; `last_error` is the last ERROR record it logged."""

    __slots__ = ("node", "func", "instance", "problems", "last_error")

    def __init__(self, node: str, func: str, instance: int = 0):
        self.node = node
        self.func = func
        self.instance = instance
        self.problems: list[str] = []
        self.last_error = ""

    def note(self, problem: str) -> None:
        self.problems.append(problem)

    def explanation(self) -> str:
        """``; <problem>...; last error logged: <text>`` for a failure message ('' if nothing)."""
        parts = list(self.problems)
        if self.last_error and not any(p in self.last_error or self.last_error in p for p in parts):
            parts.append(f"last error logged: {self.last_error}")
        return "".join(f"; {part}" for part in parts)


_CURRENT: ContextVar[CallScope | None] = ContextVar("dfir_flow_func_call", default=None)


def current_scope() -> CallScope | None:
    """The scope of the UDF call running in this thread, or None outside one."""
    return _CURRENT.get()


class call_scope:  # noqa: N801 - used like a function: `with call_scope(scope):`
    """Make `scope` current for the duration of the block (a class: it runs on every UDF call)."""

    __slots__ = ("_scope", "_token")

    def __init__(self, scope: CallScope):
        self._scope = scope

    def __enter__(self) -> CallScope:
        self._token = _CURRENT.set(self._scope)
        return self._scope

    def __exit__(self, *exc_info: object) -> None:
        _CURRENT.reset(self._token)


# What `call_scope` does, as two calls, for the runtime's per-call path (a `with` block costs more):
# `token = enter_scope(scope)` ... `leave_scope(token)`.
enter_scope = _CURRENT.set
leave_scope = _CURRENT.reset


def note_problem(problem: str) -> None:
    """Record `problem` in the current scope (no-op outside a UDF call)."""
    scope = _CURRENT.get()
    if scope is not None:
        scope.note(problem)
