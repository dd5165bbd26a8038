"""Attributes of the `df` dialect: UDF entry points, devices, instances, alignment and balance.

Each one prints in a short custom form that parses back identically:

    #df.func<"add"(0, 1) -> (0)>                 a UDF entry point and the node ports it owns
    #df.func<"merge"(2) -> (1), stream_input>     ... consuming its inputs as queues
    #df.device<host>   #df.device<0:0:1:0>         a logical device (cluster:server:device:numa)
    #df.instance<0 of 2>                          replica 0 of a node replicated twice
    #df.align<cache = 256, timeout = 60000, dropout>   input alignment of a graph
    #df.balance<scatter>   #df.balance<gather>    balance role of a node
    #df.count_batch<input = 0, size = 32, stride = 0, timeout = 0, padding>   a batched input
    #df.time_batch<input = 1, window = 5, dim = -1, drop_remainder>           (dfir.core.batching)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from dfir.core.batching import BatchSpec, CountBatchSpec, TimeBatchSpec


def _ints(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(v) for v in values])


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_integer)


def _print_int_list(printer: Printer, values: ArrayAttr[IntAttr]) -> None:
    printer.print_string("(" + ", ".join(str(v.data) for v in values) + ")")


@irdl_attr_definition
class FuncAttr(ParametrizedAttribute):
    """One entry point of a UDF: its name, the node inputs it consumes, the outputs it produces."""

    name = "df.func"

    func_name: StringAttr
    inputs: ArrayAttr[IntAttr]
    outputs: ArrayAttr[IntAttr]
    stream_input: IntAttr

    def __init__(self, func_name: str, inputs: Sequence[int], outputs: Sequence[int],
                 stream_input: bool = False):
        super().__init__(StringAttr(func_name), _ints(inputs), _ints(outputs), IntAttr(int(stream_input)))

    @property
    def input_ports(self) -> list[int]:
        return [v.data for v in self.inputs]

    @property
    def output_ports(self) -> list[int]:
        return [v.data for v in self.outputs]

    @property
    def is_stream_input(self) -> bool:
        return bool(self.stream_input.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            name = parser.parse_str_literal()
            ins = _parse_int_list(parser)
            parser.parse_punctuation("->")
            outs = _parse_int_list(parser)
            stream = parser.parse_optional_punctuation(",") is not None
            if stream:
                parser.parse_keyword("stream_input")
        return (StringAttr(name), _ints(ins), _ints(outs), IntAttr(int(stream)))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.func_name.data)
            _print_int_list(printer, self.inputs)
            printer.print_string(" -> ")
            _print_int_list(printer, self.outputs)
            if self.is_stream_input:
                printer.print_string(", stream_input")


@irdl_attr_definition
class DeviceAttr(ParametrizedAttribute):
    """A logical device `cluster:server:device:numa`; `host` (no ids) is the host CPU."""

    name = "df.device"

    ids: ArrayAttr[IntAttr]

    def __init__(self, ids: Sequence[int] = ()):
        super().__init__(_ints(ids))

    @property
    def is_host(self) -> bool:
        return len(self.ids) == 0

    def spelling(self) -> str:
        """`-1` for the host, else the colon-separated ids (the plan's spelling)."""
        return "-1" if self.is_host else ":".join(str(i.data) for i in self.ids)

    def verify(self) -> None:
        if len(self.ids) not in (0, 3, 4):
            raise VerifyException(f"#df.device has {len(self.ids)} ids, expected 3 or 4 "
                                  "(cluster:server:device[:numa]) or host")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            if parser.parse_optional_keyword("host") is not None:
                return (_ints([]),)
            ids = [parser.parse_integer(allow_negative=True)]
            while parser.parse_optional_punctuation(":") is not None:
                ids.append(parser.parse_integer(allow_negative=True))
        return (_ints(ids),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("host" if self.is_host else self.spelling())


@irdl_attr_definition
class InstanceAttr(ParametrizedAttribute):
    """Replica `index` of `count` replicas of one node."""

    name = "df.instance"

    index: IntAttr
    count: IntAttr

    def __init__(self, index: int, count: int):
        super().__init__(IntAttr(index), IntAttr(count))

    def verify(self) -> None:
        if not 0 <= self.index.data < self.count.data:
            raise VerifyException(f"#df.instance index {self.index.data} is outside "
                                  f"[0, {self.count.data})")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            index = parser.parse_integer()
            parser.parse_keyword("of")
            count = parser.parse_integer()
        return (IntAttr(index), IntAttr(count))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.index.data} of {self.count.data}>")


@irdl_attr_definition
class AlignAttr(ParametrizedAttribute):
    """Input alignment of a graph: cache at most `cache` groups, wait `timeout` ms (-1: forever)."""

    name = "df.align"

    cache: IntAttr
    timeout: IntAttr
    dropout: IntAttr

    def __init__(self, cache: int, timeout: int, dropout: bool = False):
        super().__init__(IntAttr(cache), IntAttr(timeout), IntAttr(int(dropout)))

    def verify(self) -> None:
        if not 0 <= self.cache.data <= 1024:
            raise VerifyException(f"#df.align cache {self.cache.data} is outside [0, 1024]")
        if self.timeout.data != -1 and not 0 < self.timeout.data <= 600_000:
            raise VerifyException(f"#df.align timeout {self.timeout.data} must be -1 or in "
                                  "(0, 600000] ms")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            parser.parse_keyword("cache")
            parser.parse_punctuation("=")
            cache = parser.parse_integer(allow_negative=True)
            parser.parse_punctuation(",")
            parser.parse_keyword("timeout")
            parser.parse_punctuation("=")
            timeout = parser.parse_integer(allow_negative=True)
            dropout = parser.parse_optional_punctuation(",") is not None
            if dropout:
                parser.parse_keyword("dropout")
        return (IntAttr(cache), IntAttr(timeout), IntAttr(int(dropout)))

    def print_parameters(self, printer: Printer) -> None:
        tail = ", dropout" if self.dropout.data else ""
        printer.print_string(f"<cache = {self.cache.data}, timeout = {self.timeout.data}{tail}>")


@irdl_attr_definition
class BalanceAttr(ParametrizedAttribute):
    """The balance role of a node: it scatters to, or gathers from, a replicated node."""

    name = "df.balance"

    role: StringAttr

    def __init__(self, role: str):
        super().__init__(StringAttr(role))

    def verify(self) -> None:
        if self.role.data not in ("scatter", "gather"):
            raise VerifyException(f"#df.balance role '{self.role.data}' is neither scatter nor gather")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            role = parser.parse_keyword_in(("scatter", "gather"))
        return (StringAttr(role),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.role.data}>")


@irdl_attr_definition
class DTypeAttr(ParametrizedAttribute):
    """A GE data type as a value (a UDF init param): `#df.dtype<DT_INT32>`."""

    name = "df.dtype"

    dtype_name: StringAttr

    def __init__(self, dtype_name: str):
        super().__init__(StringAttr(dtype_name))

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_identifier()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.dtype_name.data}>")


def _parse_fields(parser: AttrParser, names: Sequence[str], flag: str) -> tuple[list[int], bool]:
    """`name = int` for each of `names`, comma-separated, then an optional `, flag`."""
    values = []
    for k, name in enumerate(names):
        if k:
            parser.parse_punctuation(",")
        parser.parse_keyword(name)
        parser.parse_punctuation("=")
        values.append(parser.parse_integer(allow_negative=True))
    flagged = parser.parse_optional_punctuation(",") is not None
    if flagged:
        parser.parse_keyword(flag)
    return values, flagged


class _BatchAttr(ParametrizedAttribute):
    """A batched node input (its index `input`) and its batching; the spec's fields as
    (`FIELDS` names in the IR, then the flag)."""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    FLAG: ClassVar[str] = ""
    SPEC: ClassVar[type] = CountBatchSpec

    def __init__(self, input_index: int, spec: BatchSpec):
        super().__init__(IntAttr(input_index), *(IntAttr(int(value)) for value in astuple(spec)))

    @property
    def input_index(self) -> int:
        return self.parameters[0].data

    def spec(self) -> BatchSpec:
        return self.SPEC(*(p.data for p in self.parameters[1:-1]), bool(self.parameters[-1].data))

    def verify(self) -> None:
        if self.input_index < 0:
            raise VerifyException(f"#{self.name} input {self.input_index} is negative")
        problem = self.spec().problem()
        if problem is not None:
            raise VerifyException(f"#{self.name} on input {self.input_index}: {problem}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            values, flagged = _parse_fields(parser, ("input", *cls.FIELDS), cls.FLAG)
        return (*(IntAttr(v) for v in values), IntAttr(int(flagged)))

    def print_parameters(self, printer: Printer) -> None:
        fields = ", ".join(f"{name} = {p.data}" for name, p in zip(("input", *self.FIELDS), self.parameters))
        tail = f", {self.FLAG}" if self.parameters[-1].data else ""
        printer.print_string(f"<{fields}{tail}>")


@irdl_attr_definition
class CountBatchAttr(_BatchAttr):
    """Input `input` batched by count: `size` messages, sliding by `stride`, sent after `timeout` ms
    (0: never) incomplete or, with `padding`, zero-padded."""

    name = "df.count_batch"
    FIELDS: ClassVar[tuple[str, ...]] = ("size", "stride", "timeout")
    FLAG: ClassVar[str] = "padding"
    SPEC: ClassVar[type] = CountBatchSpec

    input: IntAttr
    size: IntAttr
    stride: IntAttr
    timeout: IntAttr
    padding: IntAttr


@irdl_attr_definition
class TimeBatchAttr(_BatchAttr):
    """Input `input` batched by time: `window` ms (-1: until an EOS or SEG flag), joined along `dim`
    (-1: a new leading one); `drop_remainder` drops a batch its window does not fill."""

    name = "df.time_batch"
    FIELDS: ClassVar[tuple[str, ...]] = ("window", "dim")
    FLAG: ClassVar[str] = "drop_remainder"
    SPEC: ClassVar[type] = TimeBatchSpec

    input: IntAttr
    window: IntAttr
    dim: IntAttr
    drop_remainder: IntAttr


def batch_attr(input_index: int, spec: BatchSpec) -> CountBatchAttr | TimeBatchAttr:
    """The attribute of input `input_index` batched by `spec`."""
    return CountBatchAttr(input_index, spec) if isinstance(spec, CountBatchSpec) else TimeBatchAttr(input_index, spec)


DF_ATTRIBUTES = [FuncAttr, DeviceAttr, InstanceAttr, AlignAttr, BalanceAttr, DTypeAttr, CountBatchAttr,
                 TimeBatchAttr]
