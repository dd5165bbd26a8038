"""`align-inputs`: put the graph's input alignment on every node that pairs several inputs.

Reads: each graph's `align` property (`set_inputs_align_attrs`: `#df.align<cache = C, timeout =
T[, dropout]>`, C in [0, 1024], T -1 or in (0, 600000] ms, checked by the attribute) and the
funcs of each node's process point. Writes `align = #df.align<...>` on every node with >= 2
inputs whose process point is a GE graph (which takes all its inputs at once) or has a plain
(not `stream_input`) func with >= 2 inputs: the runtime then pairs those inputs by (transaction
id, data label) instead of in arrival order. A node whose multi-input funcs all take their inputs
as queues (`stream_input`) pairs them itself and is skipped. Cache 0 switches alignment off: no
attribute is written.

    df.graph @g attributes {align = #df.align<cache = 256, timeout = 60000>} {
      %2 = df.node "c"(%0, %1) pp @add_pp : 2 -> 1
  ==>
      %2 = df.node "c"(%0, %1) pp @add_pp {align = #df.align<cache = 256, timeout = 60000>} : 2 -> 1

The summary says how many nodes were aligned and how many stream-input nodes were skipped
(instances of one replicated node count once).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from dfir.dialects.df import FuncPpOp, GraphOp, GraphPpOp, NodeOp


class Pairing(Enum):
    """How a node pairs the messages of its inputs."""

    NONE = "none"           # no func takes 2 inputs or more: nothing to align
    PLAIN = "plain"         # a GE graph or a plain func with >= 2 inputs: the runtime pairs them
    STREAM = "stream"       # only stream-input funcs take >= 2 inputs: the UDF pairs them itself


def pairing(node: NodeOp, pps: dict[str, Operation]) -> Pairing:
    """How `node` pairs its inputs, given the module's process points by symbol."""
    pp = pps.get(node.pp.root_reference.data)
    if node.input_num.value.data < 2:
        return Pairing.NONE
    if isinstance(pp, GraphPpOp):
        return Pairing.PLAIN
    if not isinstance(pp, FuncPpOp):
        return Pairing.NONE
    multi = [func for func in pp.funcs if len(func.input_ports) >= 2]
    if any(not func.is_stream_input for func in multi):
        return Pairing.PLAIN
    return Pairing.STREAM if multi else Pairing.NONE


def _process_points(module: ModuleOp) -> dict[str, Operation]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, FuncPpOp | GraphPpOp)}


def _aligned_graphs(module: ModuleOp) -> list[GraphOp]:
    """The graphs whose alignment is on (an `align` with a cache of at least 1)."""
    return [graph for graph in module.walk()
            if isinstance(graph, GraphOp) and graph.align is not None and graph.align.cache.data > 0]


@dataclass(frozen=True)
class AlignInputs(ModulePass):
    name = "align-inputs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pps = _process_points(op)
        for graph in _aligned_graphs(op):
            for node in graph.node_ops:
                if pairing(node, pps) is Pairing.PLAIN:
                    node.align = graph.align

    def summary(self, op: ModuleOp) -> str:
        graphs = [g for g in op.walk() if isinstance(g, GraphOp) and g.align is not None]
        if not graphs:
            return "no graph sets input alignment"
        aligned = _aligned_graphs(op)
        if not aligned:
            return "input alignment is off (cache 0)"
        pps = _process_points(op)
        counts = {kind: 0 for kind in Pairing}
        for node in (n for g in aligned for n in g.node_ops if _first_instance(n)):
            counts[pairing(node, pps)] += 1
        stream = counts[Pairing.STREAM]
        skipped = f"; {stream} stream-input node{'s' if stream != 1 else ''} skipped" if stream else ""
        return f"aligned {counts[Pairing.PLAIN]} node{'s' if counts[Pairing.PLAIN] != 1 else ''}{skipped}"


def _first_instance(node: NodeOp) -> bool:
    """Whether `node` is unreplicated or instance 0 of its node (so that a node counts once)."""
    return node.instance is None or node.instance.index.data == 0
