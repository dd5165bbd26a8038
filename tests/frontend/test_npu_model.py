"""`@npu_model`: torch modules and functions as FlowGraph nodes.

The pipeline test makes the calls of GE's npu_model sample (a CenterCrop function, a bilinear
resize module run eagerly, a normalisation module exported to a GE graph, a denormalise-and-resize
function) and checks the fetched result against the same torch code run eagerly."""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transforms = pytest.importorskip("torchvision.transforms")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import dfir.dataflow as df  # noqa: E402
from dfir.frontend.dataflow.npu_model import NpuModelError  # noqa: E402
from dfir.ge.error import GeError  # noqa: E402

WAIT_MS = 60000


@df.npu_model(optimize_level=1)
class Resize(nn.Module):
    def __init__(self, size=(256, 256)):
        super().__init__()
        self.size = size

    @df.method()
    def forward(self, image):
        return F.interpolate(image, size=self.size, mode="bilinear")


@df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(dtype=df.DT_FLOAT, shape=[1, 3, 256, 256])])
class Normalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = 0.5
        self.std = 0.5

    @df.method()
    def forward(self, image):
        return (image - self.mean) / self.std


@df.npu_model()
def center_crop(image):
    return transforms.Compose([transforms.CenterCrop(512)])(image)


@df.npu_model()
def denormalize(image):
    return F.interpolate(image * 0.5 + 0.5, size=(512, 512), mode="bilinear")


def eager(image):
    cropped = transforms.CenterCrop(512)(image)
    resized = F.interpolate(cropped, size=(256, 256), mode="bilinear")
    return F.interpolate((resized - 0.5) / 0.5 * 0.5 + 0.5, size=(512, 512), mode="bilinear")


def test_the_samples_pipeline_gives_what_torch_gives_eagerly():
    data = df.FlowData()
    crop_node, resize_node = center_crop.fnode(), Resize.fnode()
    normalize_node, denormalize_node = Normalize.fnode(), denormalize.fnode()
    output = denormalize_node(normalize_node.forward(resize_node.forward(crop_node(data))))
    graph = df.FlowGraph([output])
    image = torch.randn(1, 3, 768, 768)
    assert graph.feed({data: image}) == 0
    results, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0
    (result,) = results
    assert isinstance(result, torch.Tensor) and result.shape == (1, 3, 512, 512)
    torch.testing.assert_close(result, eager(image), rtol=1e-5, atol=1e-5)
    assert [n.name for n in (crop_node, resize_node, normalize_node, denormalize_node)] == \
        ["center_crop_fnode", "Resize_fnode", "Normalize_fnode", "denormalize_fnode"]
    assert all(n.attrs == {"_npu_sched_model": 1}
               for n in (crop_node, resize_node, normalize_node, denormalize_node))
    assert type(normalize_node.process_points[0]).__name__ == "GraphProcessPoint"
    assert type(resize_node.process_points[0]).__name__ == "FuncProcessPoint"


def test_an_exported_module_with_a_bilinear_resize_matches_torch_and_takes_arrays():
    @df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [1, 3, 64, 64])])
    class Shrink(nn.Module):
        @df.method()
        def forward(self, image):
            return F.interpolate(image, size=(32, 32), mode="bilinear")

    data = df.FlowData()
    graph = df.FlowGraph([Shrink.fnode()(data)])
    image = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    assert graph.feed_data({data: image}) == 0
    outputs, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert ret == 0
    expected = F.interpolate(torch.from_numpy(image), size=(32, 32), mode="bilinear").numpy()
    np.testing.assert_allclose(outputs[0].numpy(), expected, rtol=1e-5, atol=1e-5)
    assert graph.feed({data: torch.from_numpy(image)}) == 0  # a fed torch tensor is the graph's array
    (output,), ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0
    np.testing.assert_allclose(np.asarray(output), expected, rtol=1e-5, atol=1e-5)


def test_an_eager_module_takes_constructor_arguments_and_several_outputs():
    @df.npu_model(num_returns=2)
    class Split(nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        @df.method()
        def forward(self, x):
            return x * self.scale, x + self.scale

    data = df.FlowData()
    node = Split.fnode(3.0)
    assert (node.input_num, node.output_num) == (1, 2)
    graph = df.FlowGraph(list(node.forward(data)))
    assert graph.feed({data: torch.ones(2)}) == 0
    (times, plus), ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0
    torch.testing.assert_close(times, torch.full((2,), 3.0))
    torch.testing.assert_close(plus, torch.full((2,), 4.0))


def test_a_function_that_returns_no_tensor_fails_its_transaction_naming_the_output():
    @df.npu_model()
    def not_a_tensor(x):
        return x.tolist()

    data = df.FlowData()
    graph = df.FlowGraph([not_a_tensor.fnode()(data)])
    assert graph.feed({data: torch.ones(2)}) == 0
    _, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 564000  # FLOW_FUNC_FAILED
    assert "@npu_model test_a_function_that_returns_no_tensor_fails_its_transaction_naming_the_output." \
           "<locals>.not_a_tensor: output 0 must be a torch tensor, got list" in ret.message


def test_a_dynamic_dimension_exports_and_runs_for_several_sizes():
    @df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [-1, 4])])
    class Double(nn.Module):
        @df.method()
        def forward(self, x):
            return x * 2

    data = df.FlowData()
    graph = df.FlowGraph([Double.fnode()(data)])
    for rows in (1, 3):
        x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        assert graph.feed_data({data: x}) == 0
        outputs, _, ret = graph.fetch_data(timeout=WAIT_MS)
        assert ret == 0
        np.testing.assert_array_equal(outputs[0].numpy(), x * 2)


# -- misuse -----------------------------------------------------------------------------------

def identity(x):
    return x


def _module(**options):
    class Plain(nn.Module):
        @df.method()
        def forward(self, x):
            return x
    return df.npu_model(**options)(Plain)


@pytest.mark.parametrize("build, message", [
    (lambda: df.npu_model(optimize_level=2)(identity),
     "@npu_model identity: option 'optimize_level' is not supported; supported: ['num_returns', 'resources', "
     "'env_hook_func', 'visible_device_enable']"),
    (lambda: _module(stream_input="Queue"),
     "option 'stream_input' is not supported; supported: ['num_returns', 'resources', 'env_hook_func', "
     "'visible_device_enable', 'optimize_level', 'input_descs']"),
    (lambda: _module(optimize_level=3), "optimize_level 3 is not supported; supported: [1, 2]"),
    (lambda: _module(optimize_level="1"), "optimize_level must be an int, got str"),
    (lambda: _module(optimize_level=2),
     "optimize_level is 2, but input_descs is None; give the shape and dtype of each input"),
    (lambda: _module(optimize_level=2, input_descs=[[1, 2]]), "input_descs must be a list of TensorDesc"),
    (lambda: df.npu_model(nn.Identity()), "@npu_model applies to a function or a class, got Identity"),
    (lambda: df.npu_model(1, optimize_level=1), "@npu_model takes keyword options only"),
])
def test_misuse_is_the_type_error_ge_raises(build, message):
    with pytest.raises(NpuModelError, match=re.escape(message)) as raised:
        build()
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, GeError)


def test_an_exported_module_has_one_entry_point():
    class Two(nn.Module):
        @df.method()
        def forward(self, x):
            return x

        @df.method()
        def other(self, x):
            return x

    with pytest.raises(NpuModelError, match=re.escape(
            "optimize_level 2 exports one entry point, but the class has 2 @methods: ['forward', 'other']")):
        df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [1])])(Two)


def test_a_class_without_a_method_is_refused():
    class Bare(nn.Module):
        pass

    with pytest.raises(GeError, match="@npu_model .*Bare: the class has no @method"):
        df.npu_model()(Bare)


def test_a_module_torch_cannot_export_is_an_error_naming_it():
    @df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2])])
    class Spectrum(nn.Module):
        @df.method()
        def forward(self, x):
            return torch.fft.fft(x)

    with pytest.raises(GeError, match=r"torch.onnx could not export Spectrum.forward for inputs "
                                      r"\[TensorDesc\(dtype=DT_FLOAT, shape=\[2\]\)\]: "
                                      r"UnsupportedOperatorError: .*aten::fft_fft"):
        Spectrum.fnode()


def test_a_module_that_leaves_torch_is_an_error_naming_why():
    @df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2])])
    class ThroughNumpy(nn.Module):
        @df.method()
        def forward(self, x):
            return torch.from_numpy(x.numpy() + 1)

    with pytest.raises(GeError, match=re.escape(
            "the graph torch.onnx exported for ThroughNumpy.forward cannot be imported: the model has no "
            "inputs; a dfir graph runs when fed, so it needs at least one (a method that leaves torch, "
            "e.g. through numpy, exports as constants)")):
        ThroughNumpy.fnode()


def test_input_descs_must_describe_the_exported_inputs():
    @df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2]), df.TensorDesc(df.DT_FLOAT, [2])])
    class FirstOnly(nn.Module):
        @df.method()
        def forward(self, x, unused):
            return x + 1

    with pytest.raises(GeError, match="input_descs describes 2 inputs but the exported graph takes 1"):
        FirstOnly.fnode()


def test_num_returns_must_match_the_exported_outputs():
    @df.npu_model(optimize_level=2, num_returns=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2])])
    class One(nn.Module):
        @df.method()
        def forward(self, x):
            return x + 1

    with pytest.raises(GeError, match="num_returns is 2 but the exported graph has 1 outputs"):
        One.fnode()


def test_an_input_that_is_no_tensor_fails_its_transaction_naming_it():
    data = df.FlowData()
    graph = df.FlowGraph([denormalize.fnode()(data)])
    assert graph.feed({data: "an image"}) == 0
    _, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 564000
    assert "@npu_model denormalize: input 0 is a str, which is not a tensor" in ret.message


def test_without_torch_the_decorator_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(NpuModelError, match=re.escape("@npu_model needs torch: pip install torch (or dfir's "
                                                      "bench extra)")):
        df.npu_model(identity)


def test_the_decorated_objects_are_not_called_directly():
    with pytest.raises(GeError, match=re.escape("center_crop is an @npu_model function: build a node with "
                                                "center_crop.fnode()")):
        center_crop(torch.ones(1))
    with pytest.raises(GeError, match=re.escape("Resize is an @npu_model class: build a node with "
                                                "Resize.fnode(...)")):
        Resize()
