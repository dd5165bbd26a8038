"""docs/execution-plan.md against `dfir.om.plan`: the doc names every field of the dataclasses, and
its JSON examples have exactly the fields of the objects they show."""
from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from dfir.om import plan

DOC = Path(__file__).resolve().parents[2] / "docs" / "execution-plan.md"
DATACLASSES = [plan.Plan, plan.Input, plan.DataRef, plan.NodeRef, plan.ClosureRef, plan.FlowClosure, plan.Align,
               plan.Node, plan.Unit, plan.InputBatch, plan.Func, plan.PyUdf, plan.PyProject, plan.CppProject, plan.GraphPoint,
               plan.UdfBlob, plan.SoBin, plan.Executable, plan.GeGraph, plan.Cluster,
               plan.GeInput, plan.GeOp, plan.ArenaSlot, plan.Weight]


def examples() -> list:
    """The doc's ```json blocks, decoded."""
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", DOC.read_text(), re.DOTALL)]


def names(cls) -> set[str]:
    return {f.name for f in fields(cls)}


@pytest.mark.parametrize("cls", DATACLASSES, ids=lambda cls: cls.__name__)
def test_the_doc_names_every_field_and_class(cls):
    text = DOC.read_text()
    assert f"`{cls.__name__}`" in text
    assert [name for name in sorted(names(cls)) if f'"{name}"' not in text and f"`{name}`" not in text] == []


def test_the_plan_example_shows_the_plan_and_node_fields():
    example = examples()[0]
    # present when a C++ UDF is, when not 128, when a UDF invokes a sub-FlowGraph, when a graph is
    # compiled, when a node turns n inputs into m outputs, when not local, when ge.flowGraphMemMaxSize is set,
    # when the graph catches exceptions, when recovery is not restart, when a UDF node has a timeout,
    # when the model is traced
    assert set(example) == names(plan.Plan) - {"so_bins", "channel_depth", "closures", "executables", "n_mapping",
                                               "cluster", "shared_arena_bytes", "exception_catch", "recover",
                                               "udf_timeouts", "trace"}
    assert set(example["inputs"][0]) == names(plan.Input)
    # `batch` is present when a node batches an input; a node's devices are its units'
    assert set(example["nodes"][0]) == set(example["nodes"][1]) == names(plan.Node) - {"batch", "device", "instances"}
    assert set(example["units"][0]) == names(plan.Unit)
    assert set(example["udfs"][0]) == names(plan.UdfBlob)
    udf_pp, graph_pp = (node["pp"] for node in example["nodes"])
    assert set(udf_pp) == {"kind"} | names(plan.PyUdf) and udf_pp["kind"] == plan.PyUdf.kind
    assert set(udf_pp["funcs"][0]) == names(plan.Func)
    assert set(graph_pp) == {"kind"} | names(plan.GraphPoint) and graph_pp["kind"] == plan.GraphPoint.kind


def test_the_project_and_graph_examples_show_their_fields():
    _, cpp_pp, graph, planned, compiled, tables = examples()
    assert set(cpp_pp) == {"kind"} | names(plan.CppProject) and cpp_pp["kind"] == plan.CppProject.kind
    assert set(graph) == names(plan.GeGraph) - set(plan.OPTIONAL_GE_FIELDS) | {"weights"}
    assert set(graph["inputs"][0]) == names(plan.GeInput)
    assert set(graph["ops"][0]) == names(plan.GeOp) - {"slots"} and set(graph["weights"][0]) == names(plan.Weight)
    assert set(planned) == {"arena_bytes", "output_max_bytes", "ops"}
    assert set(planned["ops"][0]) == names(plan.GeOp)
    assert set(compiled) == {"backend", "executable", "output_dtypes", "threads", "auto"} and set(tables) == {"executables"}
    assert set(tables["executables"][0]) == names(plan.Executable)


def test_the_documented_plan_validates_and_round_trips():
    example, cpp_pp, graph, *_ = examples()
    example["ge_graphs"] = [graph]
    example["udfs"][0]["sha256"] = "0" * 64   # the doc writes "…"
    assert plan.Plan.from_json(example).to_json() == example
    assert plan.process_point_from_json(cpp_pp, "pp").to_json() == cpp_pp
