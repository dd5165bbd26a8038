"""How a GE graph's device backend is chosen: `dfir.ge.backend` globally, per FlowGraph and per
GraphProcessPoint (most specific wins), `DFIR_GE_BACKEND` for the default, and the errors."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.dialects import ge
from dfir.frontend.dataflow import session
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

def _mlp() -> Graph:
    g = Graph("mlp")
    x = g.data(0, [-1, 2], dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.matmul(x, g.const(np.eye(2, dtype=np.float32))))])
    return g


def _integer_pow() -> Graph:
    g = Graph("ipow")
    x = g.data(0, [2], dt.DT_INT32, name="x")
    g.set_outputs([g.pow(x, x, name="p")])
    return g


_LINE_OF_POW = _integer_pow.__code__.co_firstlineno + 3


def _backends(compiled) -> dict[str, str]:
    return {op.sym_name.data: op.backend.data for op in compiled.module.ops if isinstance(op, ge.GraphOp)}


def _codegen_report(compiled) -> str:
    (line,) = [line for line in str(compiled.report).splitlines() if line.startswith("convert-ge-to-linalg")]
    return line


@pytest.fixture(autouse=True)
def _no_backend_env(monkeypatch):
    monkeypatch.delenv("DFIR_GE_BACKEND", raising=False)


def test_auto_picks_iree_for_a_graph_that_lowers():
    compiled = dfir.compile(_mlp(), stop_after="codegen")
    assert _backends(compiled) == {"mlp": "iree-cpu"}
    assert _codegen_report(compiled) == "convert-ge-to-linalg: @mlp iree-cpu"


def test_auto_falls_back_to_the_reference_kernels_naming_the_op():
    compiled = dfir.compile(_integer_pow(), stop_after="codegen")
    assert _codegen_report(compiled) == ("convert-ge-to-linalg: @ipow reference "
                                         "(auto: ge.pow 'p': no integer form for element type i32)")


def test_an_explicit_iree_backend_refuses_an_op_without_lowering_naming_its_line():
    with pytest.raises(GeError) as caught:
        dfir.compile(_integer_pow(), {"dfir.ge.backend": "iree-cpu"}, stop_after="codegen")
    assert (f"ge.graph @ipow: backend iree-cpu cannot run ge.pow 'p': no integer form for element type i32 "
            f"(test_backend_choice.py:{_LINE_OF_POW}); use backend reference or auto for this graph"
            in caught.value.error_message)


def test_the_environment_sets_the_default_and_options_win(monkeypatch):
    monkeypatch.setenv("DFIR_GE_BACKEND", "reference")
    assert _backends(dfir.compile(_mlp(), stop_after="codegen")) == {"mlp": "reference"}
    compiled = dfir.compile(_mlp(), {"dfir.ge.backend": "iree-cpu"}, stop_after="codegen")
    assert _backends(compiled) == {"mlp": "iree-cpu"}


def test_a_malformed_environment_value_is_an_error(monkeypatch):
    monkeypatch.setenv("DFIR_GE_BACKEND", "gpu")
    with pytest.raises(GeError, match=re.escape("environment variable DFIR_GE_BACKEND has malformed value 'gpu': "
                                                "expected one of ['auto', 'reference', 'iree-cpu', 'iree-cuda', 'onnxruntime']")):
        dfir.compile(_mlp(), stop_after="codegen")


def test_a_malformed_option_is_an_error():
    with pytest.raises(GeError, match=re.escape("option dfir.ge.backend has malformed value 'gpu': expected one of "
                                                "['auto', 'reference', 'iree-cpu', 'iree-cuda', 'onnxruntime']")):
        dfir.compile(_mlp(), {"dfir.ge.backend": "gpu"}, stop_after="codegen")


def _pipeline(config_path: str = "", graph_options: dict | None = None) -> df.FlowGraph:
    node = df.GraphProcessPoint(df.Framework.ONNX, _mlp(), compile_config_path=config_path).fnode(1, 1)
    return df.FlowGraph([node(df.FlowData())], graph_options)


def test_flow_graph_options_override_the_global_ones(monkeypatch):
    monkeypatch.setattr(session, "_options", {"dfir.ge.backend": "iree-cpu"})
    assert _backends(dfir.compile(_pipeline(), stop_after="codegen")) == {"mlp": "iree-cpu"}
    flow = _pipeline(graph_options={"dfir.ge.backend": "reference"})
    assert _backends(dfir.compile(flow, stop_after="codegen")) == {"mlp": "reference"}


def test_a_graph_process_points_build_options_win(tmp_path):
    config = tmp_path / "mlp.json"
    config.write_text(json.dumps({"build_options": {"dfir.ge.backend": "reference"}}))
    flow = _pipeline(str(config), {"dfir.ge.backend": "iree-cpu"})
    assert _backends(dfir.compile(flow, stop_after="codegen")) == {"mlp": "reference"}
