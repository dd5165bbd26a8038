"""The JSON text of a config file, decoded once for every reader of one: a syntax error, text
that is not UTF-8 and a document nested deeper than any config needs are all `NotJson`, whose
message completes "... is not valid JSON: ", so no reader lets a RecursionError or a
UnicodeDecodeError escape unnamed.

    try:
        document = decode_json(path.read_bytes())
    except NotJson as error:
        raise GeError(f"compile config {path} is not valid JSON: {error}") from None
"""
from __future__ import annotations

import json
from typing import Any

MAX_NESTING = 64
"""How deep a config document may nest arrays and objects: far deeper than any config needs
(a resource config, the deepest, nests 7)."""


class NotJson(ValueError):
    """Why a text is no JSON document dfir reads."""


def decode_json(text: str | bytes) -> Any:
    """The document in `text`; NotJson saying why when there is none to read."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotJson(f"{error.msg} at line {error.lineno} column {error.colno}") from None
    except UnicodeDecodeError as error:
        raise NotJson(f"byte {error.start} is not UTF-8 text ({error.reason})") from None
    except RecursionError:
        raise NotJson(_too_deep()) from None
    if _nesting(document) > MAX_NESTING:
        raise NotJson(_too_deep())
    return document


def _too_deep() -> str:
    return f"arrays and objects nest deeper than {MAX_NESTING} levels"


def _nesting(document: Any) -> int:
    """How many levels of arrays and objects `document` nests (0 for a scalar), counted without
    recursion."""
    deepest, pending = 0, [(document, 1)]
    while pending:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_NESTING:
            pending.extend((child, depth + 1) for child in children)
    return deepest
