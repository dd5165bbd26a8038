"""What a fed tensor must be to reach the GE graphs it feeds: their input's data type and the
range of every dimension. The driver's feed (`_native.DriverPort`) checks them at once, and
`feed_data` names the input and the rule it broke, instead of the GE graph failing the
transaction at fetch."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.om.plan import DataRef, GraphPoint, Plan


@dataclass(frozen=True)
class GraphInputRule:
    """Input `index` of GE graph `graph`, which node `node` feeds from one graph input."""

    node: str
    graph: str
    index: int
    dtype: str
    ranges: tuple[tuple[int, int], ...]   # (lo, hi) per dimension, hi -1: unbounded

    def problem(self, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
        fits = (dtype == np.dtype(dt.to_numpy(dt.from_name(self.dtype))) and len(shape) == len(self.ranges)
                and all(lo <= size and (hi == -1 or size <= hi) for size, (lo, hi) in zip(shape, self.ranges)))
        if fits:
            return None
        return (f"is {_spelled_dtype(dtype)} {list(shape)}, but it feeds input {self.index} of GE graph "
                f"{self.graph} (node {self.node}), which takes {self.dtype} [{_spelled_ranges(self.ranges)}]")


class FedInputChecks:
    """The rules of each graph input (in feed order)."""

    def __init__(self, plan: Plan):
        self.rules: list[list[GraphInputRule]] = [[] for _ in plan.inputs]
        for node in plan.nodes:
            if not isinstance(node.pp, GraphPoint):
                continue
            graph = plan.ge_graphs[node.pp.graph]
            for ref, spec in zip(node.inputs, graph.inputs):
                if isinstance(ref, DataRef):
                    self.rules[ref.data].append(
                        GraphInputRule(node.name, graph.name, spec.index, spec.dtype, spec.ranges))

    def problem(self, position: int, array: np.ndarray) -> str | None:
        """Why `array` cannot be fed as input `position`, or None."""
        return next((problem for rule in self.rules[position]
                     if (problem := rule.problem(array.dtype, array.shape)) is not None), None)


def _spelled_dtype(dtype: np.dtype) -> str:
    try:
        return dt.from_numpy(dtype).name
    except GeError:  # a numpy dtype without a GE type
        return str(dtype)


def _spelled_ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(str(lo) if lo == hi else "-1" if hi == -1 and lo <= 0 else f"{lo}~{'' if hi == -1 else hi}"
                     for lo, hi in ranges)
