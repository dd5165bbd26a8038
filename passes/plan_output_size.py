"""`plan-output-size`: the most bytes each output of each `ge.graph` can take.

Reads: the outputs' types (after `infer-shape-ranges`) and the user's `ge.outputMaxSize`, which
the importer records on the graph as `output_max_size = array<i64: ...>` (-1 = not given).
Writes: `max_bytes = array<i64: ...>` on `ge.output`, one entry per output: the bytes the runtime
may preallocate for it and checks every result against (-1 = no bound, allocated as it comes).

    ge.graph @g {                                       ge.graph @g {
      ...                                        ==>      ...
      ge.output %y : !ge.tensor<[1:8, 4], f32>            ge.output %y {max_bytes = array<i64: 128>} : ...
    }                                                   }

Per output, with P the bound its type proves (max elements x element bytes; none when a
dimension is unbounded) and G the user's size:
1. no G: P is filled in (-1 when there is no P; the report says the output is unbounded);
2. G and no P: G (the runtime rejects a larger result, failing that transaction);
3. G >= P: P, the tighter of the two;
4. G < P: an error at the graph's `ge.output` naming the output and both numbers (a size the
   shape ranges can exceed would fail transactions at run time).
`enabled=false` plans nothing (the runtime then only enforces a given G).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from dfir.dialects import ge
from dfir.dialects.ge_types import GeTensorType

__all__ = ["MAX_BYTES_ATTR", "OutputPlan", "PlanOutputSize", "element_bytes", "max_bytes", "output_plans"]

MAX_BYTES_ATTR = "max_bytes"
"""The ge.output attribute: planned bytes per output, -1 for none."""

_GIVEN_ATTR = "output_max_size"  # written by dfir.frontend.ge.graph_config (OUTPUT_MAX_SIZE_ATTR)


def element_bytes(t: GeTensorType) -> int:
    """Bytes per element (a bool takes one byte, as in numpy)."""
    return max(1, t.element_type.bitwidth // 8)


def max_bytes(t: GeTensorType) -> int | None:
    """The most bytes a tensor of type `t` can take; None when a dimension is unbounded."""
    count = t.max_element_count()
    return None if count is None else count * element_bytes(t)


class OutputPlan(NamedTuple):
    """One output's sizes: `proved` from its type, `given` by the user, `planned` the outcome."""

    graph: str
    index: int
    proved: int | None
    given: int | None
    planned: int | None

    @property
    def too_small(self) -> bool:
        return self.given is not None and self.proved is not None and self.given < self.proved

    def describe(self) -> str:
        where = f"@{self.graph}[{self.index}]"
        if self.given is None:
            return f"{where} {self.proved} B proved" if self.proved is not None else f"{where} unbounded"
        if self.proved is None:
            return f"{where} unbounded, ge.outputMaxSize {self.given} B (checked at run time)"
        return f"{where} {self.proved} B proved (ge.outputMaxSize {self.given} B)"


def output_plans(graph: ge.GraphOp) -> list[OutputPlan]:
    """The sizes of every output of `graph`, from its types and its `output_max_size`."""
    given_attr = graph.attributes.get(_GIVEN_ATTR)
    given = list(given_attr.get_values()) if isinstance(given_attr, DenseArrayBase) else []
    plans = []
    for index, value in enumerate(graph.output_op.outputs):
        proved = max_bytes(value.type)
        user = given[index] if index < len(given) and given[index] >= 0 else None
        if user is None:
            planned = proved
        elif proved is None or user < proved:
            planned = user
        else:
            planned = proved
        plans.append(OutputPlan(graph.sym_name.data, index, proved, user, planned))
    return plans


@dataclass(frozen=True)
class PlanOutputSize(ModulePass):
    name = "plan-output-size"

    enabled: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.enabled:
            return
        for graph in op.walk():
            if isinstance(graph, ge.GraphOp):
                plans = output_plans(graph)
                for plan in plans:
                    if plan.too_small:
                        message = (f"ge.outputMaxSize of output {plan.index} of graph {plan.graph} is "
                                   f"{plan.given} bytes, below the {plan.proved} bytes its shape ranges "
                                   "allow; give at least that, or narrow the input shapes (ge.inputShape)")
                        graph.output_op.emit_error(message, DiagnosticException(message))
                graph.output_op.attributes[MAX_BYTES_ATTR] = DenseArrayBase.from_list(
                    i64, [-1 if p.planned is None else p.planned for p in plans])

    def summary(self, op: ModuleOp) -> str:
        if not self.enabled:
            return "off"
        plans = [p for g in op.walk() if isinstance(g, ge.GraphOp) for p in output_plans(g)]
        return "; ".join(p.describe() for p in plans) if plans else "no ge graphs"
