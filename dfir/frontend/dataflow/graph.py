"""FlowData, FlowOutput and FlowNode: how users wire a dataflow graph (`FlowGraph` holds its
outputs). A node runs one `ProcessPoint`."""
from __future__ import annotations

from typing import Any, Sequence

from dfir.core.errors import GeError
from dfir.om.flow_attrs import check_flow_attr
from dfir.core.tensor import Tensor, TensorDesc
from dfir.frontend.dataflow import names
from dfir.frontend.dataflow.batching import batch_spec
from dfir.frontend.source import user_location


class ProcessPoint:
    """What a node runs: a UDF (`FuncProcessPoint`), a GE graph (`GraphProcessPoint`) or a
    FlowGraph (`FlowGraphProcessPoint`)."""


class FlowData:
    """A graph input. Inputs are ordered by name (`FlowData`, `FlowData_1`, ...)."""

    def __init__(self, data_cls=Tensor, schema: TensorDesc | None = None, name: str | None = None):
        if data_cls is not Tensor:
            raise GeError(f"FlowData data_cls must be Tensor, got {data_cls!r}")
        if schema is not None and not isinstance(schema, TensorDesc):
            raise GeError(f"FlowData schema must be a TensorDesc, got {type(schema).__name__}")
        self.schema = schema
        self.loc = user_location()
        self.name = names.unique_name(name, "FlowData", self.loc)

    def __repr__(self) -> str:
        return f"FlowData({self.name!r})"


class FlowOutput:
    """Output `index` of `node`."""

    def __init__(self, node: "FlowNode", index: int):
        self.node = node
        self.index = index

    def __repr__(self) -> str:
        return f"FlowOutput({self.node.name!r}, {self.index})"


class FlowNode:
    """A node with `input_num` inputs and `output_num` outputs, running one process point."""

    def __init__(self, input_num: int, output_num: int, name: str | None = None):
        for what, value in (("input_num", input_num), ("output_num", output_num)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise GeError(f"FlowNode {what} must be a non-negative int, got {value!r}")
        self.input_num = input_num
        self.output_num = output_num
        self.loc = user_location()
        self.name = names.unique_name(name, "FlowNode", self.loc)
        self.alias: str | None = None
        self.process_points: list = []
        self.input_map: dict[int, tuple[Any, int]] = {}
        self.input_batches: dict[int, Any] = {}  # node input -> its dfir.core.batching spec
        self.output_map: dict[int, tuple[Any, int]] = {}
        self.attrs: dict[str, bool | int | str] = {}
        self.balance: str | None = None
        self.input_anchors: list[FlowData | FlowOutput | None] = [None] * input_num

    def __repr__(self) -> str:
        return f"FlowNode({self.name!r}, {self.input_num} -> {self.output_num})"

    def __call__(self, *inputs: FlowData | FlowOutput):
        if len(inputs) != self.input_num:
            raise GeError(f"node {self.name} ({self.loc}) has input_num={self.input_num} but was "
                          f"called with {len(inputs)} inputs")
        return self._connect(inputs, range(self.input_num), range(self.output_num))

    def _connect(self, inputs: Sequence, input_indexes: Sequence[int], output_indexes: Sequence[int]):
        for position, (index, anchor) in enumerate(zip(input_indexes, inputs)):
            if not isinstance(anchor, FlowData | FlowOutput):
                raise GeError(f"node {self.name} ({self.loc}): input {position} must be a FlowData "
                              f"or FlowOutput, got {type(anchor).__name__}")
            if isinstance(anchor, FlowOutput) and anchor.node is self:
                raise GeError(f"node {self.name} ({self.loc}): input {position} is an output of the "
                              "node itself")
            self.input_anchors[index] = anchor
        outputs = tuple(FlowOutput(self, i) for i in output_indexes)
        return None if not outputs else outputs[0] if len(outputs) == 1 else outputs

    def add_process_point(self, pp) -> None:
        if not isinstance(pp, ProcessPoint):
            raise GeError(f"node {self.name}: add_process_point expects a FuncProcessPoint, "
                          f"GraphProcessPoint or FlowGraphProcessPoint, got {type(pp).__name__}")
        if self.process_points:
            raise GeError(f"node {self.name} already has process point {self.process_points[0].name}; "
                          "a node runs exactly one process point")
        self.process_points.append(pp)

    def map_input(self, node_input_index: int, pp, pp_input_index: int, input_attrs=None) -> None:
        if not 0 <= node_input_index < self.input_num:
            raise GeError(f"node {self.name}: map_input node_input_index {node_input_index} is "
                          f"outside [0, {self.input_num})")
        spec = batch_spec(self.name, node_input_index, input_attrs)
        self.input_map[node_input_index] = (pp, pp_input_index)
        if spec is None:
            self.input_batches.pop(node_input_index, None)
        else:
            self.input_batches[node_input_index] = spec

    def map_output(self, node_output_index: int, pp, pp_output_index: int) -> None:
        if not 0 <= node_output_index < self.output_num:
            raise GeError(f"node {self.name}: map_output node_output_index {node_output_index} is "
                          f"outside [0, {self.output_num})")
        self.output_map[node_output_index] = (pp, pp_output_index)

    def set_balance_scatter(self) -> None:
        self._set_balance("scatter")

    def set_balance_gather(self) -> None:
        self._set_balance("gather")

    def _set_balance(self, role: str) -> None:
        if self.balance not in (None, role):
            raise GeError(f"node {self.name}: set_balance_scatter and set_balance_gather are mutually "
                          f"exclusive (already {self.balance})")
        self.balance = role

    def set_attr(self, attr_name: str, attr_value: bool | str | int) -> None:
        """Set attribute `attr_name`. GE's flow attributes (`dfir.om.flow_attrs`) shape the
        node's input channels: `_flow_attr_depth` their depth, `_flow_attr_enqueue_policy`
        FIFO or OVERWRITE; their values are checked here."""
        if not isinstance(attr_value, bool | str | int):
            raise GeError(f"node {self.name}: attribute {attr_name} must be a bool, str or int, "
                          f"got {type(attr_value).__name__}")
        check_flow_attr(attr_name, attr_value, f"node {self.name} ({self.loc})")
        self.attrs[attr_name] = attr_value

    def set_alias(self, name: str) -> "FlowNode":
        """Name the node `name` in deploy files. An alias is taken as given, never renamed: one
        the session has (a name or an alias, until `finalize`) is a GeError naming where it was
        taken."""
        if not isinstance(name, str) or not name:
            raise GeError(f"node {self.name}: set_alias needs a non-empty str, got {name!r}")
        if name != self.name:
            name = names.claim(name, user_location())
        self.alias = name
        return self
