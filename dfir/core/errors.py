"""The one exception family of dfir: every user-facing failure is a `GeError`."""
from __future__ import annotations


class GeError(RuntimeError):
    """A failure a user can act on.

    `error_message` says what is wrong and what was expected; `api_name` names the entry point
    that failed (``"dfir.load"``, ``"BuildModel"``, ...) and `context` carries the key/value
    facts that locate the problem (node, option, file, JSON path, IR location).
    """

    def __init__(self, error_message: str, api_name: str = "", context: dict[str, str] | None = None):
        self.error_message = error_message
        self.api_name = api_name
        self.context = dict(context or {})
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [f"{self.api_name} failed" if self.api_name else ""]
        parts += [f"{k}={v}" for k, v in self.context.items()]
        parts.append(self.error_message)
        return "; ".join(p for p in parts if p)
