"""One tiny network per architecture family of benchmarks/real_models.py (tests/data/models, made by
its make_models.py with torch's ONNX exporter): each imports with `Graph.from_onnx`, compiles on
every backend, runs through `dfir.load` and matches onnxruntime on the original file.

The families and what each brings: ResNet (residual basic blocks, max pool), MobileNetV2/V3
(depthwise convs, ReLU6 as Clip, squeeze-excite, HardSwish, HardSigmoid), EfficientNet (SiLU as
x * Sigmoid, squeeze-excite), ShuffleNetV2 (channel split as Slice, concat, shuffle as Reshape,
Transpose, Reshape), DenseNet (concats, average pool), ConvNeXt (depthwise 7x7, LayerNorm
channels-last between Transposes, GELU as Erf), RegNetY (grouped convs), BERT and GPT-2 (embedding
Gathers, masks built from comparisons and Where, LayerNorm, attention as MatMul and Softmax).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import dfir
from dfir.ge.graph import Graph

MODELS = Path(__file__).resolve().parent.parent / "data" / "models"
NAMES = ("resnet", "mobilenet", "efficientnet", "shufflenet", "densenet", "convnext", "regnet", "bert", "gpt2")
BACKENDS = ("reference", "iree-cpu", "onnxruntime")
VOCAB = 64  # make_models.py's vocabulary of the token models


def _input(path: Path) -> np.ndarray:
    (value,) = onnx.load(str(path)).graph.input
    shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    if value.type.tensor_type.elem_type == onnx.TensorProto.INT64:
        return rng.integers(0, VOCAB, shape, dtype=np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def test_every_model_is_small():
    assert sorted(p.stem for p in MODELS.glob("*.onnx")) == sorted(NAMES)
    assert all(p.stat().st_size < 200_000 for p in MODELS.glob("*.onnx"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_architecture_matches_onnxruntime(name, backend):
    path = MODELS / f"{name}.onnx"
    x = _input(path)
    (expected,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    compiled = dfir.compile(Graph.from_onnx(str(path)), {"dfir.ge.backend": backend})
    with dfir.load(compiled.om) as model:
        model.feed_data([x])
        outputs, _, ret = model.fetch_data(timeout=60_000)
    assert ret == 0, ret
    (got,) = [t.numpy() for t in outputs]
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
