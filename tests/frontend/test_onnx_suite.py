"""The ONNX test suites (benchmarks/onnx_suite.py: every node test case and shipped model test of
the installed onnx package, Graph.from_onnx -> dfir.compile -> dfir.load -> feed/fetch on the reference backend)
keeps what it has: every case named in the baseline still matches, and over the whole suite no
case is wrong or crashes, and every refusal says which node (or which input) is at fault.

The whole suite runs once per session (about two minutes on two loaded cores). After a change that
matches more cases, `python benchmarks/onnx_suite.py --write-baseline` records them."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "onnx_suite.py"


def _suite_module():
    spec = importlib.util.spec_from_file_location("onnx_suite", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


suite = _suite_module()


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    return {o.name: o for o in suite.run_suite(suite.collect_cases())}


def test_every_baseline_case_still_matches(outcomes):
    baseline = suite.BASELINE.read_text().split()
    assert len(baseline) >= 1623
    lost = [f"{name}: {outcomes[name].status}: {outcomes[name].reason}" if name in outcomes else f"{name}: gone"
            for name in baseline if name not in outcomes or outcomes[name].status != "matched"]
    assert not lost, "\n".join(lost)


def test_the_model_suites_match_three_quarters_and_every_light_cnn(outcomes):
    """The models the onnx package ships (opsets 1 to 12): pytorch-converted, pytorch-operator and
    simple match at least 75% in all; the nine light CNNs all match."""
    models = [o for o in outcomes.values() if suite.suite_of(o.name) != "node"]
    assert {suite.suite_of(o.name) for o in models} == {"simple", "pytorch-converted", "pytorch-operator", "light"}
    assert sum(o.status == "matched" for o in models) >= 0.75 * len(models)
    light = [o.name for o in models if suite.suite_of(o.name) == "light" and o.status == "matched"]
    assert len(light) == 9


def test_no_case_is_wrong_or_crashes(outcomes):
    bad = [f"{o.name}: {o.status}: {o.reason}" for o in outcomes.values() if o.status in ("wrong", "crashed")]
    assert not bad, "\n".join(bad)


def test_every_refusal_names_the_node_or_the_model_input_at_fault(outcomes):
    model_level = ("has element type", "expected a tensor", "the model has no inputs", "of the default domain")
    vague = [f"{o.name}: {o.reason}" for o in outcomes.values() if o.status == "refused"
             and "node" not in o.reason and not any(words in o.reason for words in model_level)]
    assert not vague, "\n".join(vague)


def test_refusals_are_counted_by_op():
    refused = suite.Outcome("t", "refused", "import: ONNX model 't' has ops dfir does not support: Neg (nodes 'a', "
                                            "'b'), ai.onnx.ml.Binarizer (node #2)")
    assert suite.refusal_reasons(refused) == ["unsupported op Neg", "unsupported op ai.onnx.ml.Binarizer"]
    other = suite.Outcome("t", "refused", "import: onnx=t; node=r; Reshape: the shape [dim(x, 2), 3] has more")
    assert suite.refusal_reasons(other) == ["import: Reshape: the shape [dim(x, N), N] has more"]
