"""`ge.inputShape`: the shapes (fixed sizes and ranges) of a GE graph's inputs, as GE spells them.

Two forms, entries separated by `;`:

    by name     "input_name1:8~20,3,5,-1;input_name2:5,3~9,10,-1"
    by index    "1,3,1~1728,1~1728;2"          (entry i is the input whose index is i)

An entry is a comma-separated list of dimensions, each `N` (fixed), `lo~hi` (any size from lo to
hi) or `-1` (any size); an empty list is a scalar. A name runs up to the LAST colon of its entry,
so names that contain colons (`scope:x:0`) work; spaces are ignored around tokens. The grammar is
parsed with lark; a malformed spec is a `GeError` that quotes the spec and puts a caret under the
column where it goes wrong:

    ge.inputShape "x:1,3~a" is malformed at column 7: unexpected 'a', expected a size
      x:1,3~a
            ^
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lark import Lark, Token, Transformer, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from dfir.core.errors import GeError
from dfir.dialects.ge_types import DimRange

__all__ = ["InputShape", "ShapeEntry", "input_shape_problem", "parse_input_shape", "resolve_input_shape"]

OPTION = "ge.inputShape"

_GRAMMAR = r"""
start: named_list | indexed_list
named_list: named (SEMICOLON named)*
named: NAME COLON dims
indexed_list: dims (SEMICOLON dims)*
dims: [dim (COMMA dim)*]
dim: INT                -> fixed
   | INT TILDE INT      -> span
   | UNKNOWN            -> unknown

// Greedy up to the last ':' of the entry (the lookahead backtracks to it).
NAME.2: /[^;:\s][^;]*(?=:)/
UNKNOWN: "-1"
INT: /\d+/
SEMICOLON: ";"
COLON: ":"
COMMA: ","
TILDE: "~"
%ignore " "
"""

_PARSER = Lark(_GRAMMAR, parser="lalr")

_EXPECTED = {"INT": "a size", "UNKNOWN": "-1", "TILDE": "'~'", "COMMA": "','", "SEMICOLON": "';'",
             "NAME": "an input name and ':'", "COLON": "':'", "$END": "the end"}
"""How an error message names what the grammar expected, in the order it lists them."""


@dataclass(frozen=True)
class ShapeEntry:
    """One input's dimensions; `name` is None in the by-index form."""

    name: str | None
    dims: tuple[DimRange, ...]


@dataclass(frozen=True)
class InputShape:
    """A parsed `ge.inputShape`: its entries in the order written, and the text they came from."""

    text: str
    entries: tuple[ShapeEntry, ...]

    @property
    def by_name(self) -> bool:
        return self.entries[0].name is not None


class _ToEntries(Transformer):
    """Parse tree -> ShapeEntry tuples; a range with lo > hi raises `_RangeError` at its column."""

    def fixed(self, items):
        return DimRange.fixed(int(items[0]))

    def unknown(self, items):
        return DimRange.unknown()

    def span(self, items):
        lo, _, hi = items
        if int(lo) > int(hi):
            raise _RangeError(f"range {lo}~{hi} has its lower bound above its upper bound", lo.column)
        return DimRange(int(lo), int(hi))

    def dims(self, items):
        return tuple(d for d in items if isinstance(d, DimRange))

    def named(self, items):
        name, _, dims = items
        return ShapeEntry(str(name).strip(), dims)

    def indexed_list(self, items):
        return tuple(ShapeEntry(None, dims) for dims in items if not isinstance(dims, Token))

    def named_list(self, items):
        return tuple(e for e in items if isinstance(e, ShapeEntry))

    def start(self, items):
        return items[0]


class _RangeError(Exception):
    def __init__(self, problem: str, column: int):
        super().__init__(problem)
        self.problem, self.column = problem, column


def parse_input_shape(text: str) -> InputShape:
    """Parse a `ge.inputShape` value; a GeError quoting it (with a caret when malformed)."""
    try:
        return _parse(text)
    except _SpecError as error:
        raise GeError(f'{OPTION} "{text}" {error.problem}', context={"option": OPTION}) from None


def input_shape_problem(text: str) -> str | None:
    """What is wrong with a `ge.inputShape` value ("is malformed at column 3: ..."), or None."""
    try:
        _parse(text)
    except _SpecError as error:
        return error.problem
    return None


class _SpecError(Exception):
    """A problem with a spec; `problem` reads after the quoted spec ("is empty; ...")."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def _parse(text: str) -> InputShape:
    if not text.strip():
        raise _SpecError('is empty; expected entries such as "x:1,3~8" or "1,3~8;2"')
    try:
        entries = _ToEntries().transform(_PARSER.parse(text))
    except UnexpectedInput as error:
        at_end = isinstance(error, UnexpectedToken) and error.token.type == "$END"
        raise _malformed(text, len(text) + 1 if at_end else error.column, _unexpected(error)) from None
    except Exception as error:  # lark wraps errors raised inside a transformer callback
        cause = getattr(error, "orig_exc", error)
        if not isinstance(cause, _RangeError):
            raise
        raise _malformed(text, cause.column, cause.problem) from None
    names = [e.name for e in entries if e.name is not None]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise _SpecError(f"gives input '{repeated[0]}' more than once")
    return InputShape(text, entries)


def resolve_input_shape(spec: InputShape, inputs: Sequence[tuple[str, int]],
                        graph: str) -> dict[int, tuple[DimRange, ...]]:
    """Input index -> the dimensions `spec` gives it, for a graph whose inputs are (name, index).

    By name, every name must be an input of the graph (inputs not named keep their shape); by
    index, there must be exactly one entry per input.
    """
    if spec.by_name:
        index_of = dict(inputs)
        unknown = [e.name for e in spec.entries if e.name not in index_of]
        if unknown:
            raise GeError(f"{OPTION} names input '{unknown[0]}', but graph {graph} has no input of "
                          f"that name; its inputs are {[name for name, _ in inputs]}",
                          context={"option": OPTION})
        return {index_of[e.name]: e.dims for e in spec.entries}
    if len(spec.entries) != len(inputs):
        raise GeError(f'{OPTION} "{spec.text}" gives {_count(len(spec.entries), "shape")} by index, '
                      f"but graph {graph} has {_count(len(inputs), 'input')}",
                      context={"option": OPTION})
    return {index: entry.dims for (_, index), entry in zip(sorted(inputs, key=lambda i: i[1]), spec.entries)}


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _unexpected(error: UnexpectedInput) -> str:
    if isinstance(error, UnexpectedCharacters):
        found = f"'{error.char}'"
        expected = error.allowed or set()
    else:
        assert isinstance(error, UnexpectedToken)
        found = "the end" if error.token.type == "$END" else f"'{error.token}'"
        expected = error.expected
    wanted = [spelling for terminal, spelling in _EXPECTED.items() if terminal in expected]
    return f"unexpected {found}, expected {' or '.join(wanted)}" if wanted else f"unexpected {found}"


def _malformed(text: str, column: int, problem: str) -> _SpecError:
    """The error for `text` going wrong at 1-based `column` (past the end for a premature end)."""
    column = max(1, min(column, len(text) + 1))
    return _SpecError(f"is malformed at column {column}: {problem}\n  {text}\n  {' ' * (column - 1)}^")
