"""ONNX Scan unrolled over its fixed sequence length, against onnxruntime: states carried, scan
inputs and outputs along any axis and in either direction, tensors of the enclosing graph used
in the body; a Scan in a function body (LinearAttention) against onnx's reference; a sequence
length that is not fixed, and the opset-8 Scan whose conversion changes the model's inputs,
are refused."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.backend.test.case import node as onnx_cases
from onnx.reference import ReferenceEvaluator

from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, model, reference, run_reference, tensor_info, weight


def running_sum_model(length: int, in_axis: int, in_reverse: int, out_axis: int, out_reverse: int, dynamic=False):
    """state' = state * decay + x_t (decay from the enclosing graph); y_t = state' - 1."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["state", "decay"], ["kept"]), helper.make_node("Add", ["kept", "x_t"], ["state_out"]),
         helper.make_node("Sub", ["state_out", "one"], ["y_t"])],
        "body", [tensor_info("state", [3]), tensor_info("x_t", [3])],
        [tensor_info("state_out", [3]), tensor_info("y_t", [3])], [weight("one", [1])])
    x_shape = [length, 3] if in_axis == 0 else [3, length]
    y_shape = [length, 3] if out_axis == 0 else [3, length]
    scan = helper.make_node("Scan", ["init", "x"], ["final", "ys"], name="scan", body=body, num_scan_inputs=1,
                            scan_input_axes=[in_axis], scan_input_directions=[in_reverse],
                            scan_output_axes=[out_axis], scan_output_directions=[out_reverse])
    x_info = tensor_info("x", ["n", 3] if dynamic else x_shape)
    return model([scan], [tensor_info("init", [3]), x_info], [tensor_info("final", [3]), tensor_info("ys", y_shape)],
                 [weight("decay", [3])], opset=16)


@settings(max_examples=8, deadline=None)
@given(length=st.integers(1, 4), in_axis=st.integers(0, 1), in_reverse=st.integers(0, 1),
       out_axis=st.integers(0, 1), out_reverse=st.integers(0, 1))
def test_scan_matches_onnxruntime(length, in_axis, in_reverse, out_axis, out_reverse):
    proto = running_sum_model(length, in_axis, in_reverse, out_axis, out_reverse)
    init = RNG.standard_normal(3).astype(np.float32)
    x = RNG.standard_normal([length, 3] if in_axis == 0 else [3, length]).astype(np.float32)
    want = reference(proto, {"init": init, "x": x})
    got = run_reference(Graph.from_onnx(proto), init, x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_scan_steps_are_graph_ops_named_after_the_scan_and_the_step():
    text = str(Graph.from_onnx(running_sum_model(2, 0, 0, 0, 0)).to_ir())
    assert '"scan/t0/Add1"' in text and '"scan/t1/Sub2"' in text and '"scan/out0"' in text


def test_a_scan_of_no_fixed_length_is_refused():
    with pytest.raises(GeError, match=r"^onnx=net; node=scan; Scan: the scan inputs need one fixed sequence length, "
                                      r"got lengths \[-1\]$"):
        Graph.from_onnx(running_sum_model(2, 0, 0, 0, 0, dynamic=True))


def _case(name: str):
    return next(c for c in onnx_cases.collect_testcases(None) if c.name == name)


def test_a_scan_in_a_function_body_runs_linear_attention():
    case = _case("test_linear_attention_linear")
    inputs = list(case.data_sets[0][0])
    want = ReferenceEvaluator(case.model).run(None, dict(zip([i.name for i in case.model.graph.input], inputs)))
    got = run_reference(Graph.from_onnx(case.model), *inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_a_conversion_that_changes_the_models_inputs_is_refused():
    with pytest.raises(GeError, match=r"^ONNX model 'test_scan_sum' cannot be converted from opset 8 to 13: the "
                                      r"converter changes input 'initial' from \[1, 2\] to \[2\] \(ops redefined in "
                                      r"between: nodes #0\)$"):
        Graph.from_onnx(_case("test_scan_sum").model)
