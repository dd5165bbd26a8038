"""`dfir.ge.offline_compile`: the seed's offline compile API, its errors, and bundles."""
from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge import offline_compile as oc
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.ge.offline_compile import (GraphWithOptions, ModelBuffer, build_finalize, build_initialize,
                                     build_model, bundle_build_model, bundle_save_model, save_model)
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om


@pytest.fixture(autouse=True)
def finalized():
    build_finalize()
    yield
    build_finalize()


def scale_graph(name: str, scale: float, variable: str | None = None) -> Graph:
    graph = Graph(name)
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    y = graph.mul(x, graph.const(np.full([2], scale, np.float32)))
    if variable is not None:
        y = graph.add(y, graph.variable(np.zeros([2], np.float32), name=variable))
    graph.set_outputs([y])
    return graph


def run(model, value: float) -> list[float]:
    model.feed_data([np.full([1, 2], value, np.float32)])
    outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()


def test_the_seed_example_builds_saves_and_runs_a_model_and_a_bundle(tmp_path):
    build_initialize({"log_level": "0"})
    model = build_model(scale_graph("double", 2.0), {"input_format": "ND"})
    save_model(str(tmp_path / "output_model"), model)
    assert model.length == model.get_length() == (tmp_path / "output_model.om").stat().st_size
    bundle = bundle_build_model([GraphWithOptions(scale_graph("double", 2.0), {"input_format": "ND"}),
                                 GraphWithOptions(scale_graph("triple", 3.0), {"input_format": "NCHW"})])
    bundle_save_model(str(tmp_path / "bundle_output"), bundle)
    build_finalize()
    with dfir.load(str(tmp_path / "output_model.om")) as single:
        assert run(single, 1.0) == [2.0, 2.0]
    loaded = dfir.load(str(tmp_path / "bundle_output.om"))
    try:
        assert list(loaded.models) == ["double", "triple"]
        assert run(loaded.models["triple"], 1.0) == [3.0, 3.0]
        assert run(loaded.models[0], 1.0) == [2.0, 2.0]
    finally:
        loaded.close()


def test_save_model_always_adds_the_om_suffix(tmp_path):
    build_initialize()
    save_model(str(tmp_path / "m.om"), build_model(scale_graph("g", 1.0)))
    assert (tmp_path / "m.om.om").is_file()


def test_build_options_win_over_global_options():
    build_initialize({"ge.inputShape": "x:1~8,2"})
    global_only = build_model(scale_graph("g", 1.0))
    overridden = build_model(scale_graph("g", 1.0), {"ge.inputShape": "x:1~4,2"})
    assert _input_ranges(global_only) == [[1, 8], [2, 2]]
    assert _input_ranges(overridden) == [[1, 4], [2, 2]]


def _input_ranges(model: ModelBuffer) -> list[list[int]]:
    plan = json.loads(bytes(read_om(model._data).models[0].partition(PartitionType.FLOW_MODEL).data))
    return plan["ge_graphs"][0]["inputs"][0]["ranges"]


def test_build_model_accepts_a_flow_graph():
    build_initialize()
    x = df.FlowData(name="x")
    flow = df.FlowGraph([df.GraphProcessPoint(df.Framework.ONNX, scale_graph("g", 5.0)).fnode(1, 1)(x)],
                        name="flow")
    with dfir.load(build_model(flow)._data) as model:
        assert run(model, 2.0) == [10.0, 10.0]


def test_the_bundle_var_info_is_the_bytes_of_its_distinct_variables():
    build_initialize()
    bundle = bundle_build_model([GraphWithOptions(scale_graph("init", 1.0, variable="w")),
                                 GraphWithOptions(scale_graph("infer", 2.0, variable="w")),
                                 GraphWithOptions(scale_graph("update", 3.0, variable="v"))])
    assert read_om(bundle._data).var_size == 2 * 2 * 4


# --- ModelBuffer -----------------------------------------------------------------------------------

def test_a_model_buffer_cannot_be_constructed_copied_or_deep_copied():
    with pytest.raises(TypeError, match="ModelBuffer cannot be constructed; build_model and "
                                        "bundle_build_model return one"):
        ModelBuffer()
    build_initialize()
    model = build_model(scale_graph("g", 1.0))
    with pytest.raises(TypeError, match="ModelBuffer cannot be copied"):
        copy.copy(model)
    with pytest.raises(TypeError, match="ModelBuffer cannot be deep-copied"):
        copy.deepcopy(model)
    with pytest.raises(TypeError, match="ModelBuffer cannot be copied or pickled"):
        pickle.dumps(model)


# --- errors ------------------------------------------------------------------------------------------

def expect(error_message: str, call, *args) -> None:
    with pytest.raises(GeError) as error:
        call(*args)
    assert isinstance(error.value, RuntimeError)
    assert str(error.value) == error_message


@pytest.mark.parametrize("call, api", [(build_model, "BuildModel"),
                                        (bundle_build_model, "BundleBuildModel")])
def test_building_before_build_initialize_is_an_error(call, api):
    argument = scale_graph("g", 1.0) if call is build_model else []
    expect(f"{api} failed; offline compilation is not initialized; call build_initialize first",
           call, argument)


def test_build_initialize_twice_is_an_error_until_build_finalize():
    build_initialize()
    expect("BuildInitialize failed; offline compilation is already initialized; call build_finalize first",
           build_initialize)
    build_finalize()
    build_initialize()


@pytest.mark.parametrize("options, message", [
    ({1: "0"}, "BuildModel failed; option key 1 is a int, expected str"),
    ({"log_level": 0}, "BuildModel failed; option=log_level; option log_level has a int value 0, expected str"),
    ({"no.such": "1"}, "BuildModel failed; option=no.such; unknown option no.such; known options: "),
    (["log_level"], "BuildModel failed; options must be a dict of str to str, got list"),
])
def test_build_options_must_be_known_strings(options, message):
    build_initialize()
    with pytest.raises(GeError) as error:
        build_model(scale_graph("g", 1.0), options)
    assert str(error.value).startswith(message)


def test_global_options_must_be_strings():
    expect("BuildInitialize failed; option=log_level; option log_level has a int value 0, expected str",
           build_initialize, {"log_level": 0})


def test_a_ge_failure_names_the_api_and_the_graph():
    build_initialize()
    called_at = f"test_offline_compile.py:{expect.__code__.co_firstlineno + 2}"  # expect's call(*args)
    expect(f"BuildModel failed; graph=empty; at={called_at}; the graph has no outputs; call set_outputs first",
           build_model, Graph("empty"))
    expect("BuildModel failed; expected a Graph or a FlowGraph, got str", build_model, "graph.onnx")


def test_a_bundle_needs_at_least_two_graphs_with_options():
    build_initialize()
    expect("BundleBuildModel failed; a bundle needs a list of at least 2 GraphWithOptions, got 1",
           bundle_build_model, [GraphWithOptions(scale_graph("g", 1.0))])
    expect("BundleBuildModel failed; member 1 must be a GraphWithOptions, got Graph",
           bundle_build_model, [GraphWithOptions(scale_graph("g", 1.0)), scale_graph("h", 1.0)])
    expect("BundleBuildModel failed; bundle models 0 and 1 are both named 'g'",
           bundle_build_model, [GraphWithOptions(scale_graph("g", 1.0)), GraphWithOptions(scale_graph("g", 2.0))])


def test_saving_checks_the_model_kind_and_the_file(tmp_path):
    build_initialize()
    model = build_model(scale_graph("g", 1.0))
    bundle = bundle_build_model([GraphWithOptions(scale_graph("g", 1.0)), GraphWithOptions(scale_graph("h", 1.0))])
    target = str(tmp_path / "out")
    expect(f"SaveModel failed; file={target}; expected a single model; save this one with bundle_save_model",
           save_model, target, bundle)
    expect(f"BundleSaveModel failed; file={target}; expected a bundle; save this one with save_model",
           bundle_save_model, target, model)
    expect("SaveModel failed; model must be a ModelBuffer, got bytes", save_model, target, b"om")
    missing = str(tmp_path / "no" / "dir" / "out")
    expect(f"SaveModel failed; file={missing}.om; cannot write the model: No such file or directory",
           save_model, missing, model)


def test_the_module_exports_the_seed_api():
    assert sorted(oc.__all__) == sorted(["build_initialize", "build_finalize", "build_model", "save_model",
                                         "bundle_build_model", "bundle_save_model", "GraphWithOptions",
                                         "ModelBuffer"])
