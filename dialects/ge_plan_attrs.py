"""Planning attributes of the `ge` dialect: where each op result lives at run time.

`plan-memory` puts `slots = [...]` on every tensor op, one `#ge.slot` per result:

    #ge.slot<0, 512>      bytes [0, 512) of the graph's arena (the size is the slot's, which
                          may exceed the value's when values share it)
    #ge.slot<view>        no memory of its own: a view of its operand's (reshape and the like)
    #ge.slot<fresh>       allocated when computed: a graph output (the caller keeps it), an
                          unbounded value, or an empty one

Each prints in this short form and parses back identically.
"""
from __future__ import annotations

from xdsl.dialects.builtin import IntAttr, StringAttr
from xdsl.ir import ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

__all__ = ["SlotAttr"]

_KINDS = ("arena", "view", "fresh")


@irdl_attr_definition
class SlotAttr(ParametrizedAttribute):
    """Where one value lives: an arena slot (`offset`, `size` in bytes), a view, or fresh memory."""

    name = "ge.slot"

    kind: StringAttr
    offset: IntAttr
    size: IntAttr

    def __init__(self, kind: str, offset: int = 0, size: int = 0):
        super().__init__(StringAttr(kind), IntAttr(offset), IntAttr(size))

    @staticmethod
    def arena(offset: int, size: int) -> SlotAttr:
        return SlotAttr("arena", offset, size)

    @property
    def in_arena(self) -> bool:
        return self.kind.data == "arena"

    @property
    def end(self) -> int:
        """One past the slot's last byte."""
        return self.offset.data + self.size.data

    def verify(self) -> None:
        if self.kind.data not in _KINDS:
            raise VerifyException(f"#ge.slot kind must be one of {', '.join(_KINDS)}, got {self.kind.data}")
        if self.offset.data < 0 or self.size.data < 0:
            raise VerifyException(f"#ge.slot offset and size must be >= 0, got {self.offset.data} "
                                  f"and {self.size.data}")
        if not self.in_arena and (self.offset.data or self.size.data):
            raise VerifyException(f"#ge.slot<{self.kind.data}> has no offset or size")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            kind = parser.parse_optional_keyword("view") or parser.parse_optional_keyword("fresh")
            if kind is not None:
                return (StringAttr(kind), IntAttr(0), IntAttr(0))
            offset = parser.parse_integer(allow_boolean=False, allow_negative=False,
                                          context_msg=" (a slot is <offset, size>, <view> or <fresh>)")
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (StringAttr("arena"), IntAttr(offset), IntAttr(size))

    def print_parameters(self, printer: Printer) -> None:
        if self.in_arena:
            printer.print_string(f"<{self.offset.data}, {self.size.data}>")
        else:
            printer.print_string(f"<{self.kind.data}>")
