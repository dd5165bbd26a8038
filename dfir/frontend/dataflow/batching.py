"""`TimeBatch` and `CountBatch`: the input attributes `FlowNode.map_input` takes to batch one node
input (semantics: dfir.core.batching). Their fields may be set after construction, as in GE;
`map_input` checks them and keeps a frozen copy."""
from __future__ import annotations

from dfir.core.batching import BatchSpec, CountBatchSpec, TimeBatchSpec
from dfir.core.errors import GeError


def _checked(owner: str, field: str, value, kind: type):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise GeError(f"{owner}.{field} must be {'a bool' if kind is bool else 'an int'}, got {value!r}")
    return value


class TimeBatch:
    """Batch an input by FlowInfo time: `time_window` ms (-1: until an EOS or SEG flag),
    concatenated along `batch_dim` (-1: a new leading dimension)."""

    def __init__(self, time_window: int = 0, batch_dim: int = -1, drop_remainder: bool = False):
        self.time_window = time_window
        self.batch_dim = batch_dim
        self.drop_remainder = drop_remainder

    def spec(self) -> TimeBatchSpec:
        return TimeBatchSpec(_checked("TimeBatch", "time_window", self.time_window, int),
                             _checked("TimeBatch", "batch_dim", self.batch_dim, int),
                             _checked("TimeBatch", "drop_remainder", self.drop_remainder, bool))


class CountBatch:
    """Batch an input by count: `batch_size` messages stacked along a new leading dimension,
    sliding by `slide_stride`, sent incomplete (or zero-padded with `padding`) after `timeout` ms."""

    def __init__(self, batch_size: int = 0, slide_stride: int = 0, timeout: int = 0, padding: bool = False):
        self.batch_size = batch_size
        self.slide_stride = slide_stride
        self.timeout = timeout
        self.padding = padding

    def spec(self) -> CountBatchSpec:
        return CountBatchSpec(_checked("CountBatch", "batch_size", self.batch_size, int),
                              _checked("CountBatch", "slide_stride", self.slide_stride, int),
                              _checked("CountBatch", "timeout", self.timeout, int),
                              _checked("CountBatch", "padding", self.padding, bool))


def batch_spec(node_name: str, index: int, input_attrs) -> BatchSpec | None:
    """The batching `map_input(index, ..., input_attrs)` asks of node `node_name`'s input, or None;
    GeError for anything but a list of at most one TimeBatch or CountBatch with valid fields."""
    if input_attrs is None:
        return None
    where = f"node {node_name}: map_input input {index}"
    if not isinstance(input_attrs, list | tuple):
        raise GeError(f"{where}: input_attrs must be a list of TimeBatch or CountBatch, "
                      f"got {type(input_attrs).__name__}")
    for attr in input_attrs:
        if not isinstance(attr, TimeBatch | CountBatch):
            raise GeError(f"{where}: input_attrs must hold TimeBatch or CountBatch, got {type(attr).__name__}")
    kinds = {type(attr) for attr in input_attrs}
    if len(kinds) > 1:
        raise GeError(f"{where}: CountBatch and TimeBatch cannot be set on one input at the same time")
    if len(input_attrs) > 1:
        raise GeError(f"{where}: input_attrs holds {len(input_attrs)} {input_attrs[0].__class__.__name__}s, "
                      "expected at most one")
    if not input_attrs:
        return None
    try:
        spec = input_attrs[0].spec()
    except GeError as error:
        raise GeError(f"{where}: {error.error_message}") from None
    problem = spec.problem()
    if problem is not None:
        raise GeError(f"{where}: {problem}")
    return spec
