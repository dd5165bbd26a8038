"""`dfir.load` and `dfir inspect` on what the container allows: bundles (indexed by name and
position, never nested) and names longer than the header's 32-byte `name` field."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dfir
import dfir.data_type as dt
from dfir.ge import offline_compile as oc
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.om_writer import write_bundle
from dfir.om.schema import NAME_SIZE, PartitionType
from dfir.runtime.driver.loader import Bundle
from dfir.runtime.om import read_om
from dfir.tools.inspect_om import inspect_om
from test_container import raw_bundle


def scale_graph(name: str, scale: float) -> Graph:
    graph = Graph(name)
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.mul(x, graph.const(np.full([2], scale, np.float32)))])
    return graph


def run(model, value: float) -> list[float]:
    assert model.feed_data([np.full([1, 2], value, np.float32)]) == 0
    outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()


def load_error(data) -> str:
    with pytest.raises(GeError) as caught:
        dfir.load(data)
    return caught.value.error_message


@pytest.fixture(scope="module")
def scaled() -> dict[str, bytes]:
    return {name: dfir.compile(scale_graph(name, scale)).om for name, scale in (("double", 2.0), ("triple", 3.0))}


# ---------------------------------------------------------------- a bundle is indexed by name and position


def test_a_bundle_is_indexed_by_name_and_by_position(scaled):
    with dfir.load(write_bundle(list(scaled.values()), list(scaled)), trust="any") as bundle:  # unsigned
        assert isinstance(bundle, Bundle) and len(bundle) == 2 and list(bundle) == ["double", "triple"]
        assert "triple" in bundle and "quadruple" not in bundle and 0 not in bundle
        assert bundle["triple"] is bundle[1] is bundle[-1] is bundle.models["triple"] is bundle.models[1]
        assert bundle[0] is bundle.models["double"] and bundle[0].name == "double"
        assert [run(bundle[name], 1.0) for name in bundle] == [[2.0, 2.0], [3.0, 3.0]]
        assert repr(bundle) == "<Bundle of 2 models: 'double', 'triple'>"
        for key, message in [("quadruple", "bundle has no model named 'quadruple'; it has ['double', 'triple']"),
                             (2, "bundle has 2 models, index 2 is out of range"),
                             (-3, "bundle has 2 models, index -3 is out of range"),
                             (True, "bundle has no model named True; it has ['double', 'triple']")]:
            for lookup in (bundle, bundle.models):
                with pytest.raises(GeError) as caught:
                    lookup[key]
                assert caught.value.error_message == message


# ---------------------------------------------------------------- bundles do not nest


def test_dfir_load_and_inspect_refuse_a_nested_bundle_with_the_readers_message(scaled):
    inner = write_bundle([scaled["double"]], ["leaf"], name="inner")
    nested = raw_bundle([inner])
    message = ("bundle model 0: model type 5 (BUNDLE) is not allowed in a bundle: bundles do not nest, a bundle's "
               "members are flow models (model type 3)")
    assert load_error(nested) == message
    with pytest.raises(GeError) as caught:
        inspect_om(nested)
    assert caught.value.error_message == message
    with pytest.raises(GeError) as caught:
        write_bundle([inner], ["inner"])
    assert caught.value.error_message == ("bundle model 0 ('inner') is itself a bundle: bundles do not nest, a "
                                          "bundle's members are flow models")


# ---------------------------------------------------------------- names longer than the header holds

STEM = "resnet50_v1_preprocessed_classifier"  # 35 bytes: the flow graph is named STEM + "_flow"


def onnx_file(folder, stem: str, scale: float) -> str:
    """An ONNX model y = x * scale (x [N, 2]) in `folder`/`stem`.onnx: its graph is named `stem`."""
    weights = helper.make_tensor("s", TensorProto.FLOAT, [2], [scale, scale])
    graph = helper.make_graph([helper.make_node("Mul", ["x", "s"], ["y"], name="scale")], "net",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])], [weights])
    path = folder / f"{stem}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return str(path)


def test_a_long_graph_name_compiles_loads_and_is_inspected_by_its_full_name(tmp_path):
    graph = Graph.from_onnx(onnx_file(tmp_path, STEM, 2.0))
    om = dfir.compile(graph).om
    full = STEM + "_flow"
    assert len(full.encode()) > NAME_SIZE
    header = read_om(om).header
    assert header.name == full[:NAME_SIZE]
    with dfir.load(om) as model:
        assert model.name == full and run(model, 1.5) == [3.0, 3.0]
    report = inspect_om(om)
    assert f'  name "{full[:NAME_SIZE]}"\n' in report and f'  plan "{full}" format=2\n' in report


def test_a_member_name_is_cut_on_a_character_boundary_and_found_in_full(scaled):
    name = "m" + "\u00fc" * 20  # 41 bytes: byte 32 is inside a character
    om = write_bundle([scaled["double"], scaled["triple"]], [name, "triple"])
    assert read_om(om).bundle[0].om.name == "m" + "\u00fc" * 15
    with dfir.load(om, trust="any") as loaded:  # write_bundle signs nothing
        assert list(loaded) == [name, "triple"] and loaded[name].name == name and run(loaded[name], 1.0) == [2.0, 2.0]


def test_a_bundle_finds_long_member_names_in_full(tmp_path):
    first, second = STEM + "_a", STEM + "_b"  # the same first 32 bytes
    oc.build_initialize()
    try:
        bundle = oc.bundle_build_model([oc.GraphWithOptions(Graph.from_onnx(onnx_file(tmp_path, first, 2.0))),
                                        oc.GraphWithOptions(Graph.from_onnx(onnx_file(tmp_path, second, 3.0))),
                                        oc.GraphWithOptions(scale_graph("short", 4.0))])
    finally:
        oc.build_finalize()
    path = tmp_path / "bundle"
    oc.bundle_save_model(str(path), bundle)
    om = read_om(f"{path}.om")
    assert om.bundle_names == (first, second, "short")
    assert [member.om.name for member in om.bundle] == [first[:NAME_SIZE], first[:NAME_SIZE], "short"]
    assert om.models[0].partitions[-1].type == PartitionType.BUNDLE_MODEL_NAMES
    with dfir.load(f"{path}.om") as loaded:
        assert list(loaded) == [first, second, "short"] and loaded[second].name == second
        assert [run(loaded[name], 1.0) for name in loaded] == [[2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]
    report = inspect_om(f"{path}.om")
    assert f'bundle model 1 "{second}"\n' in report
    assert '  partition 4 BUNDLE_MODEL_NAMES offset=' in report
