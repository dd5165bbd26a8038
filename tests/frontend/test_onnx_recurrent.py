"""ONNX RNN, GRU and LSTM unrolled into graph ops, against onnxruntime: directions, layouts,
biases, initial states, peepholes, linear_before_reset, activations with their parameters; and
the variants that are refused, with the node named."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from ge_lowering import assert_lowering_matches
from onnx_models import model, reference, run_reference, tensor_info

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ACTIVATIONS = {"RNN": 1, "GRU": 2, "LSTM": 3}
FUNCTIONS = ["Relu", "Tanh", "Sigmoid", "LeakyRelu", "ThresholdedRelu", "HardSigmoid", "Elu", "Softsign", "Softplus"]


def recurrent_model(op: str, seq: int, batch: int, inputs: int, hidden: int, directions: int, layout: int = 0,
                    seed: int = 0, bias: bool = False, initial: bool = False, peepholes: bool = False,
                    outputs=("Y", "Y_h", "Y_c"), dynamic_batch: bool = False, **attrs):
    """A one-node model: X is the graph input, the weights (and states) initializers."""
    rng = np.random.default_rng(seed)
    gates = GATES[op]

    def array(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.7).astype(np.float32), name)

    state = [batch, directions, hidden] if layout else [directions, batch, hidden]
    weights = [array("W", [directions, gates * hidden, inputs]), array("R", [directions, gates * hidden, hidden])]
    names = ["X", "W", "R", "B" if bias else "", "", "initial_h" if initial else ""]
    weights += [array("B", [directions, 2 * gates * hidden])] if bias else []
    weights += [array("initial_h", state)] if initial else []
    if op == "LSTM":
        names += ["initial_c" if initial else "", "P" if peepholes else ""]
        weights += ([array("initial_c", state)] if initial else []) + ([array("P", [directions, 3 * hidden])]
                                                                       if peepholes else [])
    outputs = [o for o in outputs if o != "Y_c" or op == "LSTM"]
    direction = {1: "forward", 2: "bidirectional"}[directions] if "direction" not in attrs else attrs.pop("direction")
    node = helper.make_node(op, [n for n in names], outputs, name="cell", hidden_size=hidden, layout=layout,
                            direction=direction, **attrs)
    x_shape = [batch, seq, inputs] if layout else [seq, batch, inputs]
    if dynamic_batch:
        x_shape[0 if layout else 1] = "batch"
    y_shape = [batch, seq, directions, hidden] if layout else [seq, directions, batch, hidden]
    infos = [tensor_info(o, y_shape if o == "Y" else state) for o in outputs if o]
    return model([node], [tensor_info("X", x_shape)], infos, weights)


def assert_matches_onnxruntime(proto, x: np.ndarray) -> None:
    """onnxruntime's outputs; for batch first layouts, which onnxruntime refuses, onnx's reference."""
    batch_first = any(a.name == "layout" and a.i for a in proto.graph.node[0].attribute)
    expected = ReferenceEvaluator(proto).run(None, {"X": x}) if batch_first else reference(proto, {"X": x})
    actual = run_reference(Graph.from_onnx(proto), x)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@st.composite
def layers(draw):
    op = draw(st.sampled_from(sorted(GATES)))
    directions = draw(st.integers(1, 2))
    config = dict(op=op, seq=draw(st.integers(1, 3)), batch=draw(st.integers(1, 3)), inputs=draw(st.integers(1, 3)),
                  hidden=draw(st.integers(1, 4)), directions=directions, layout=draw(st.integers(0, 1)),
                  bias=draw(st.booleans()), initial=draw(st.booleans()), seed=draw(st.integers(0, 2**16)))
    if directions == 1:
        config["direction"] = draw(st.sampled_from(["forward", "reverse"]))
    if op == "LSTM":
        config["peepholes"] = draw(st.booleans())
    if op == "GRU":
        config["linear_before_reset"] = draw(st.integers(0, 1))
    if not config["layout"] and draw(st.booleans()):  # (onnx's reference, which checks batch first, has its own)
        config["activations"] = draw(st.lists(st.sampled_from(FUNCTIONS), min_size=ACTIVATIONS[op] * directions,
                                              max_size=ACTIVATIONS[op] * directions))
        # Enough parameters for every activation: where the lists run short, ONNX's defaults apply
        # (as dfir does), while onnxruntime takes 0.
        config["activation_alpha"] = draw(st.lists(st.floats(0.1, 0.9), min_size=6, max_size=6))
        config["activation_beta"] = draw(st.lists(st.floats(0.1, 0.9), min_size=6, max_size=6))
    return config


@given(config=layers())
@settings(max_examples=15, deadline=None)
def test_recurrent_layers_match_onnxruntime(config):
    proto = recurrent_model(**config)
    shape = [config["batch"], config["seq"], config["inputs"]] if config["layout"] else \
        [config["seq"], config["batch"], config["inputs"]]
    assert_matches_onnxruntime(proto, np.random.default_rng(config["seed"] + 1).standard_normal(shape)
                               .astype(np.float32))


@pytest.mark.parametrize("op", sorted(GATES))
def test_a_dynamic_batch_without_initial_states_runs_every_batch_size(op):
    proto = recurrent_model(op, seq=3, batch=2, inputs=3, hidden=2, directions=2, bias=True, dynamic_batch=True)
    graph = Graph.from_onnx(proto)
    for batch in (1, 4):
        x = np.random.default_rng(batch).standard_normal((3, batch, 3)).astype(np.float32)
        for got, want in zip(run_reference(graph, x), reference(proto, {"X": x}), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_only_the_outputs_used_are_computed():
    proto = recurrent_model("LSTM", seq=2, batch=1, inputs=2, hidden=3, directions=1, outputs=("", "Y_h"))
    assert_matches_onnxruntime(proto, np.ones((2, 1, 2), np.float32))
    ir = str(Graph.from_onnx(proto).to_ir())
    assert ir.count("ge.unsqueeze") == 1 and "ge.concat" not in ir  # Y_h of one direction: nothing to stack


def test_full_constant_sequence_lens_are_accepted():
    proto = recurrent_model("RNN", seq=2, batch=2, inputs=2, hidden=2, directions=1)
    proto.graph.node[0].input[4] = "lengths"
    proto.graph.initializer.append(numpy_helper.from_array(np.array([2, 2], np.int32), "lengths"))
    assert_matches_onnxruntime(proto, np.ones((2, 2, 2), np.float32))


def _refusal(proto) -> str:
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    return str(info.value)


def test_sequence_lens_shorter_than_the_sequence_are_refused():
    proto = recurrent_model("GRU", seq=3, batch=2, inputs=2, hidden=2, directions=1)
    proto.graph.node[0].input[4] = "lengths"
    proto.graph.initializer.append(numpy_helper.from_array(np.array([3, 1], np.int32), "lengths"))
    assert _refusal(proto) == "onnx=net; node=cell; GRU: sequence_lens [3, 1] must all be the sequence length 3"


def test_sequence_lens_known_only_at_run_time_are_refused():
    proto = recurrent_model("LSTM", seq=1, batch=2, inputs=2, hidden=2, directions=1)
    proto.graph.node[0].input[4] = "lengths"
    proto.graph.input.append(tensor_info("lengths", [2], TensorProto.INT32))
    assert _refusal(proto) == ("onnx=net; node=cell; LSTM: sequence_lens (input 'lengths') must be known when the "
                               "model is imported: a constant, or computed from shapes; it is the model input "
                               "'lengths': give its value with Graph.from_onnx(..., constant_inputs={'lengths': ...})")


@pytest.mark.parametrize("attrs, message", [
    (dict(clip=3.0), "RNN: clip 3.0 is not supported"),
    (dict(activations=["Tanh", "Tanh"]),
     "RNN: activations must name 1 functions (1 per direction), got ['Tanh', 'Tanh']"),
    (dict(activations=["Affine"]), "RNN: activation 'Affine' is not supported, expected one of elu, hardsigmoid, "
                                   "leakyrelu, relu, sigmoid, softplus, softsign, tanh, thresholdedrelu (any case)"),
    (dict(direction="sideways"), "RNN: direction 'sideways' is not one of forward, reverse, bidirectional"),
])
def test_unsupported_attributes_are_refused(attrs, message):
    proto = recurrent_model("RNN", seq=2, batch=1, inputs=2, hidden=2, directions=1, **attrs)
    assert _refusal(proto) == f"onnx=net; node=cell; {message}"


def test_lstm_input_forget_is_refused():
    proto = recurrent_model("LSTM", seq=2, batch=1, inputs=2, hidden=2, directions=1, input_forget=1)
    assert _refusal(proto) == "onnx=net; node=cell; LSTM: input_forget 1 is not supported"


def test_a_dynamic_sequence_length_is_refused():
    proto = recurrent_model("RNN", seq=2, batch=1, inputs=2, hidden=2, directions=1)
    proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "time"
    assert _refusal(proto) == ("onnx=net; node=cell; RNN: the sequence length must be fixed to unroll the steps, "
                               "got X of shape [-1, 1, 2]")


@pytest.mark.parametrize("op, attrs", [("GRU", dict(linear_before_reset=1)), ("LSTM", dict(peepholes=True))])
def test_an_unrolled_layer_lowers_through_iree_like_the_reference(op, attrs):
    proto = recurrent_model(op, seq=2, batch=2, inputs=3, hidden=2, directions=2, bias=True, initial=True, **attrs)
    x = np.random.default_rng(9).standard_normal((2, 2, 3)).astype(np.float32)
    assert_lowering_matches(Graph.from_onnx(proto), [x], rtol=1e-5, atol=1e-5)
