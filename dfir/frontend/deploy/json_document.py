"""A JSON document being read by a loader: typed field access whose errors name the file, the
JSON path and the value (`$.keep_logic_device_order: expected a boolean, got a string "yes"`)."""
from __future__ import annotations

import json
from typing import Any

from dfir.core.errors import GeError
from dfir.core.json_text import NotJson, decode_json

_KINDS = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
          bool: "a boolean", type(None): "null"}
_SHOWN_CHARS = 60


def kind_of(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def shown(value: Any) -> str:
    """`value` as JSON, cut to a readable length for an error message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 3] + "..."


def is_kind(value: Any, kind: type | tuple[type, ...]) -> bool:
    """Whether `value` is a `kind` in JSON's sense: a boolean is no integer."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any(isinstance(value, k) and not (k is int and isinstance(value, bool)) for k in kinds)


class JsonDocument:
    """`root`, the document read from `path` (`what` names it in errors: "deploy info")."""

    def __init__(self, path: str, root: Any):
        self.path = path
        self.root = root

    @classmethod
    def read(cls, path: str, what: str) -> JsonDocument:
        try:
            with open(path, "rb") as file:
                return cls(path, decode_json(file.read()))
        except OSError as error:
            raise GeError(f"cannot read the {what}: {error.strerror}", context={"file": path}) from None
        except NotJson as error:
            raise GeError(f"the {what} is not valid JSON: {error}", context={"file": path}) from None

    def error(self, where: str, problem: str) -> GeError:
        return GeError(f"{where}: {problem}", context={"file": self.path})

    def expect(self, value: Any, kind: type | tuple[type, ...], where: str) -> Any:
        """`value` when it is a `kind`, else a GeError at `where` naming the value."""
        if not is_kind(value, kind):
            kinds = " or ".join(_KINDS[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.error(where, f"expected {kinds}, got {kind_of(value)} {shown(value)}")
        return value

    def field(self, parent: dict, where: str, key: str, kind: type, default: Any = ...) -> Any:
        """`parent[key]` checked to be a `kind`; missing: `default`, or a GeError without one."""
        if key not in parent:
            if default is ...:
                raise self.error(where, f"missing '{key}'")
            return default
        return self.expect(parent[key], kind, f"{where}.{key}")

    def objects(self, parent: dict, where: str, key: str, default: Any = ...) -> list[tuple[str, dict]]:
        """The objects listed at `parent[key]`, each with its JSON path."""
        items = self.field(parent, where, key, list, default)
        return [(f"{where}.{key}[{i}]", self.expect(item, dict, f"{where}.{key}[{i}]"))
                for i, item in enumerate(items)]
