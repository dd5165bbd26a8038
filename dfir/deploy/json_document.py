"""A JSON document being read by a loader: typed field access whose errors name the file and the
JSON path (`$.batch_deploy_info[0].logic_device_list: expected a string, got a list`)."""
from __future__ import annotations

import json
from typing import Any

from dfir.ge.error import GeError

_KINDS = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
          bool: "a boolean", type(None): "null"}


def kind_of(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


class JsonDocument:
    """`root`, the document read from `path` (`what` names it in errors: "deploy info")."""

    def __init__(self, path: str, root: Any):
        self.path = path
        self.root = root

    @classmethod
    def read(cls, path: str, what: str) -> JsonDocument:
        try:
            with open(path, "rb") as file:
                return cls(path, json.loads(file.read()))
        except OSError as error:
            raise GeError(f"cannot read the {what}: {error.strerror}", context={"file": path}) from None
        except ValueError as error:
            raise GeError(f"the {what} is not valid JSON: {error}", context={"file": path}) from None

    def error(self, where: str, problem: str) -> GeError:
        return GeError(f"{where}: {problem}", context={"file": self.path})

    def expect(self, value: Any, kind: type, where: str) -> Any:
        """`value` when it is a `kind` (bool is no int here), else a GeError at `where`."""
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(where, f"expected {_KINDS[kind]}, got {kind_of(value)}")
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
