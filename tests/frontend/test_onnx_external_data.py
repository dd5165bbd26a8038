"""ONNX models whose weights are external data (side files next to the `.onnx`, as
`onnx.save(..., save_as_external_data=True)` writes them) load from their path; a side file that
is missing, too short or outside the model's folder, or a model in memory whose weights were
left in side files, is a GeError naming the weight and the file."""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import dfir
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, model, tensor_info, weight


def mlp() -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["a"], name="act"),
             helper.make_node("Gemm", ["a", "w2", "b2"], ["y"], name="fc2", transB=1)]
    weights = [weight("w1", (16, 64)), weight("w2", (10, 64)), weight("b2", (10,))]
    return model(nodes, [tensor_info("x", ["N", 16])], [tensor_info("y", ["N", 10])], weights, name="mlp")


def save_external(proto: onnx.ModelProto, folder, one_file: bool = True) -> str:
    path = os.path.join(folder, "mlp.onnx")
    onnx.save(proto, path, save_as_external_data=True, all_tensors_to_one_file=one_file,
              location="mlp.weights" if one_file else None, size_threshold=0)
    return path


@pytest.mark.parametrize("one_file", [True, False], ids=["one-side-file", "a-file-per-weight"])
def test_weights_in_side_files_load_from_the_path(one_file, tmp_path):
    proto = mlp()
    path = save_external(proto, tmp_path, one_file)
    assert len(os.listdir(tmp_path)) == (2 if one_file else 4)
    compiled = dfir.compile(Graph.from_onnx(path), {"dfir.ge.backend": "reference"})
    x = RNG.standard_normal((3, 16)).astype(np.float32)
    with dfir.load(compiled.om) as runtime:
        runtime.feed_data([x])
        outputs, _, ret = runtime.fetch_data(timeout=5000)
    assert ret == 0
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(outputs[0].numpy(), session.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_a_missing_side_file_names_the_weight_and_the_file(tmp_path):
    path = save_external(mlp(), tmp_path)
    os.remove(tmp_path / "mlp.weights")
    with pytest.raises(GeError) as info:
        Graph.from_onnx(path)
    assert str(info.value) == (f"ONNX model file '{path}': weight 'w1' is stored in the side file 'mlp.weights', "
                               "which does not exist next to the model")


def import_error_with_b2_cut_short(folder, keep_length: bool) -> tuple[str, str, str]:
    """(path, side file name, the import's error) of the MLP saved with a file per weight, the
    file of weight b2 (40 bytes) cut to 12 bytes and, unless `keep_length`, its length unrecorded."""
    path = save_external(mlp(), folder, one_file=False)
    proto = onnx.load(path, load_external_data=False)
    tensor = proto.graph.initializer[2]
    entries = {e.key: e.value for e in tensor.external_data}
    if not keep_length:
        del tensor.external_data[:]
        tensor.external_data.add(key="location", value=entries["location"])
        onnx.save(proto, path)
    side = folder / entries["location"]
    side.write_bytes(side.read_bytes()[:12])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(path)
    return path, side.name, str(info.value)


def test_a_short_side_file_names_the_weight(tmp_path):
    path, _, message = import_error_with_b2_cut_short(tmp_path, keep_length=True)
    assert message == (f"ONNX model file '{path}': its external data cannot be read: External data length (40) "
                       "exceeds available data (12 bytes from offset 0) for tensor 'b2'")


def test_a_short_side_file_without_a_recorded_length_names_the_weight(tmp_path):
    path, side, message = import_error_with_b2_cut_short(tmp_path, keep_length=False)
    assert message == f"ONNX model file '{path}': weight 'b2' needs 40 bytes of its side file '{side}', which holds 12"


def test_a_side_file_outside_the_model_folder_is_refused(tmp_path):
    path = save_external(mlp(), tmp_path)
    proto = onnx.load(path, load_external_data=False)
    outside = tmp_path.parent / "outside.weights"
    outside.write_bytes((tmp_path / "mlp.weights").read_bytes())
    for tensor in proto.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = "../outside.weights"
    onnx.save(proto, path)
    with pytest.raises(GeError) as info:
        Graph.from_onnx(path)
    assert str(info.value).startswith(f"ONNX model file '{path}': its external data cannot be read: ")
    assert "points outside the directory" in str(info.value)


def test_a_model_in_memory_with_weights_left_in_side_files_asks_for_the_path(tmp_path):
    proto = onnx.load(save_external(mlp(), tmp_path), load_external_data=False)
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("ONNX model 'mlp' keeps weight 'w1' in the external file 'mlp.weights'; give the "
                               "model's path so its side files are read")
