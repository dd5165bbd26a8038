"""A whole `ge.graph` as one upstream `func.func @main` (see `lower_graph`)."""
from __future__ import annotations


from xdsl.dialects import func, tensor
from xdsl.ir import Block, Operation, Region

from dfir.dialects import ge
from dfir.dialects.iree_util import AssumeIntOp
from dfir.passes.ge_to_linalg import LOWERINGS
from dfir.passes.ge_to_linalg.builder import FuncBuilder, Unsupported, tensor_type

__all__ = ["NoLowering", "lower_graph"]


class NoLowering(Exception):
    """An op of the graph that has no lowering (in this form)."""

    def __init__(self, op: Operation, reason: str):
        super().__init__(f"{describe(op)}: {reason}")
        self.op = op
        self.reason = reason


def describe(op: Operation) -> str:
    """`ge.topk 'k1'`: the op and its name in the graph."""
    name = ge.op_name_of(op)
    return op.name if name is None else f"{op.name} '{name}'"


def lower_graph(graph: ge.GraphOp) -> func.FuncOp:
    """The graph as `func.func @main`: one tensor argument per `ge.data` in index order (ranged
    dimensions dynamic, their bounds stated with `util.assume.int`), one result per output.
    NoLowering for the first op that has no lowering."""
    data_ops = graph.data_ops
    block = Block(arg_types=[tensor_type(d.result.type) for d in data_ops])
    builder = FuncBuilder(block)
    for data, arg in zip(data_ops, block.args):
        builder.values[data.result] = arg
        _assume_bounds(builder, data, arg)
    for op in graph.block.ops:
        if not isinstance(op, (ge.DataOp, ge.OutputOp)):
            _lower_op(builder, op)
    results = [builder.value(v) for v in graph.output_op.outputs]
    builder.add(func.ReturnOp(*results))
    return func.FuncOp("main", (block.arg_types, [r.type for r in results]), Region(block))


def _assume_bounds(builder: FuncBuilder, data: ge.DataOp, arg) -> None:
    for axis, dim in enumerate(data.result.type.dims):
        if not dim.is_fixed:
            size = builder.add(tensor.DimOp(arg, builder.index(axis))).result
            builder.set_dim(arg, axis, builder.add(AssumeIntOp(size, dim.lo, dim.hi)).results[0])


def _lower_op(builder: FuncBuilder, op: Operation) -> None:
    lowering = LOWERINGS.get(type(op))
    if lowering is None:
        raise NoLowering(op, "no lowering")
    try:
        results = lowering(builder, op)
    except Unsupported as error:
        raise NoLowering(op, str(error)) from None
    for result, value in zip(op.results, results, strict=True):
        builder.values[result] = value
