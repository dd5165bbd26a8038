"""dfir's IR is MLIR: the generic form of every lit test case and of compiled pipelines parses in
MLIR's own parser (`mlir-opt --allow-unregistered-dialect`, from Debian's mlir-19-tools, which
`.ci/run` installs). Only standard builtin attributes appear; dfir's own attributes and types are
dialect attributes (`#df.device<...>`, `!ge.tensor<...>`), which MLIR keeps opaque."""
from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import numpy as np
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.driver.job import make_context
from dfir.ge.graph import Graph

LIT = Path(__file__).resolve().parents[2] / "lit_tests"
CASES = sorted(p for p in LIT.rglob("*.mlir") if "Output" not in p.parts)
MLIR_OPT = shutil.which("mlir-opt-19") or shutil.which("mlir-opt")


def generic(text: str) -> str | None:
    """The generic form of one case; None for a case written not to parse or not to verify
    (MLIR verifies what it knows of it, the symbol tables, as it parses)."""
    try:
        module = Parser(make_context(), text, "<case>").parse_module()
        module.verify()
    except (ParseError, VerifyException, DiagnosticException):
        return None
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue()


def mlir_errors(texts: list[str]) -> str:
    """What mlir-opt says of the modules `texts` (nothing when every one parses and verifies)."""
    assert MLIR_OPT is not None, "mlir-opt is missing: apt-get install mlir-19-tools (as .ci/run does)"
    run = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--split-input-file", "-o", "/dev/null"],
                         input="\n// -----\n".join(texts), capture_output=True, text=True)
    return run.stderr if run.returncode or "error" in run.stderr else ""


def test_the_generic_form_of_every_valid_lit_case_parses_in_mlir():
    unchecked, errors = [], {}
    for path in CASES:
        texts = [text for case in path.read_text().split("// -----") if (text := generic(case)) is not None]
        if not texts:
            unchecked.append(path.name)
        elif said := mlir_errors(texts):
            errors[str(path.relative_to(LIT))] = said
    assert errors == {}
    assert all(name.endswith("invalid.mlir") for name in unchecked), unchecked  # only error cases


@df.pyflow
def inc(x):
    return x + 1


def test_the_generic_form_of_a_compiled_pipeline_parses_in_mlir():
    g = Graph("mlp")
    x = g.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.add(g.matmul(x, g.const(np.ones((4, 2), np.float32))),
                               g.const(np.ones(2, np.float32))))])
    pp = df.GraphProcessPoint(df.Framework.ONNX, g)
    node = df.FlowNode(1, 1)
    node.add_process_point(pp)
    graph = df.FlowGraph([node(inc.fnode()(df.FlowData(name="x")))])
    graph.set_inputs_align_attrs(16, 1000)
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(dfir.compile(graph).module)
    assert mlir_errors([stream.getvalue()]) == ""
