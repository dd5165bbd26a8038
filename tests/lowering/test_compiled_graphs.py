"""`lowering.plan` for GE graphs an IREE backend runs: their executables in the plan's table,
shared by graphs with the same code, and the errors of graphs that cannot be compiled."""
from __future__ import annotations

import pytest

import dfir
import dfir.dataflow as df
from xdsl.dialects.builtin import StringAttr

from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.lowering.plan import lower_graph
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from dfir.tools.inspect_om import inspect_om
from codegen_graphs import DOUBLE_F32, codegen_pass, double_graph  # noqa: F401


def twice_doubled() -> df.FlowGraph:
    """x -> d1 -> d2 -> out, two GE graphs of the same code."""
    x = df.FlowData(name="x")
    first = df.GraphProcessPoint(df.Framework.ONNX, double_graph("d1"), name="first").fnode(1, 1, name="n1")(x)
    return df.FlowGraph([df.GraphProcessPoint(df.Framework.ONNX, double_graph("d2"), name="second")
                         .fnode(1, 1, name="n2")(first)], name="twice")


def test_graphs_of_the_same_code_share_one_executable(codegen_pass):
    codegen_pass.update({"d1": ("iree-cpu", DOUBLE_F32), "d2": ("iree-cpu", DOUBLE_F32)})
    om = dfir.compile(twice_doubled()).om
    model = read_om(om).models[0]
    plan = Plan.from_json(model.partition(PartitionType.FLOW_MODEL).data)
    assert [(g.name, g.backend, g.executable) for g in plan.ge_graphs] == [("d1", "iree-cpu", 0),
                                                                           ("d2", "iree-cpu", 0)]
    assert len(plan.executables) == len(model.partitions_of(PartitionType.GE_EXECUTABLE)) == 1
    size = plan.executables[0].size
    assert inspect_om(om).splitlines()[-2:] == [
        f'    ge_graph 0 "d1" backend=iree-cpu executable=0 target="{plan.executables[0].target}" size={size}',
        f'    ge_graph 1 "d2" backend=iree-cpu executable=0 target="{plan.executables[0].target}" size={size}']


def test_a_graph_an_iree_backend_runs_needs_a_codegen_region():
    module = dfir.compile(double_graph(), {"dfir.ge.backend": "reference"}, stop_after="place").module
    [graph] = [op for op in module.walk() if isinstance(op, ge.GraphOp)]
    graph.backend = StringAttr("iree-cpu")
    with pytest.raises(GeError) as caught:
        lower_graph(module)
    assert caught.value.error_message == ("ge.graph @double: backend 'iree-cpu' runs compiled code, but the graph "
                                          "has no codegen region (convert-ge-to-linalg makes it)")
