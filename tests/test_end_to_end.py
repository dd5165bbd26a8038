"""FlowGraphs compiled to `.om`, loaded and run: results, transaction errors, options, lifecycle."""
import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.flow_func import FLOW_FUNC_FAILED
from dfir.ge.error import GeError


@df.pyflow
def checked_double(x):
    if int(x.sum()) < 0:
        raise ValueError(f"negative input {x.tolist()}")
    return x * 2


@df.pyflow(num_returns=2)
def bad_pair(x):
    return x, x, x


@df.pyflow
def inc(x):
    return x + 1


def int32(*values):
    return np.array(values, dtype=np.int32)


def test_udf_error_reaches_its_transaction_only(tmp_path):
    x = df.FlowData(name="x")
    graph = df.FlowGraph([inc.fnode()(checked_double.fnode()(x))])
    path = dfir.compile(graph).save(tmp_path / "m")
    with dfir.load(path) as model:
        for value in (1, -5, 3):
            assert model.feed_data({"x": int32(value)}) == 0
        results = [model.fetch_data(timeout=5000) for _ in range(3)]
    (ok1, info1, ret1), (bad, info2, ret2), (ok3, _, ret3) = results
    assert (ret1, ok1[0].numpy().tolist()) == (0, [3])
    assert ret2 == FLOW_FUNC_FAILED and bad == [] and info2.transaction_id == 2
    assert "checked_double_fnode.checked_double raised ValueError: negative input [-5]" in ret2.message
    assert (ret3, ok3[0].numpy().tolist()) == (0, [7])


def test_wrong_number_of_outputs_fails_the_transaction():
    x = df.FlowData()
    a, b = bad_pair.fnode()(x)
    graph = df.FlowGraph([a, b])
    graph.feed_data({x: int32(1)})
    outputs, _, ret = graph.fetch_data(timeout=5000)
    assert outputs == [] and ret == FLOW_FUNC_FAILED
    assert "returned 3 values but num_returns is 2" in ret.message


def test_feed_by_position_and_by_name_agree():
    a, b = df.FlowData(name="a"), df.FlowData(name="b")

    @df.pyflow
    def minus(p, q):
        return p - q
    model = dfir.load(dfir.compile(df.FlowGraph([minus.fnode()(a, b)])).om)
    assert model.input_names == ["a", "b"]
    model.feed_data([int32(10), int32(4)])
    model.feed_data({"b": int32(4), "a": int32(10)})
    assert [model.fetch_data(timeout=5000)[0][0].numpy().tolist() for _ in range(2)] == [[6], [6]]
    model.close()


def test_missing_input_returns_param_invalid_naming_it():
    a, b = df.FlowData(name="a"), df.FlowData(name="b")

    @df.pyflow
    def both(p, q):
        return p + q
    graph = df.FlowGraph([both.fnode()(a, b)])
    ret = graph.feed_data({a: int32(1)})
    assert (ret, ret.message) == (145000, "feed is missing input 'b'; expected inputs ['a', 'b']")


def test_run_flag_zero_compiles_only():
    x = df.FlowData()
    graph = df.FlowGraph([inc.fnode()(x)], {"ge.runFlag": "0"})
    assert graph.feed_data({x: int32(1)}) == 0
    assert graph.compile().om[:4] == b"IMOD"
    with pytest.raises(GeError, match=r"has no loaded model: feed data first"):
        graph.fetch_data()


def test_python_objects_with_feed_and_fetch():
    x = df.FlowData()

    @df.pyflow
    def describe(obj):
        return {"keys": sorted(obj), "n": len(obj)}
    graph = df.FlowGraph([describe.fnode()(x)])
    assert graph.feed({x: {"b": 1, "a": 2}}) == 0
    outputs, ret = graph.fetch(timeout=5000)
    assert ret == 0 and outputs == [{"keys": ["a", "b"], "n": 2}]


def test_finalize_closes_models_and_fetch_never_waits_past_timeout():
    import time
    x = df.FlowData()
    graph = df.FlowGraph([inc.fnode()(x)])
    graph.feed_data({x: int32(1)})
    assert graph.fetch_data(timeout=5000)[2] == 0
    start = time.monotonic()
    outputs, _, ret = graph.fetch_data(timeout=100)
    assert outputs == [] and ret != 0 and time.monotonic() - start < 1.0
    df.finalize()
    with pytest.raises(GeError):
        graph.fetch_data(timeout=100)


def test_same_graph_gives_same_bytes():
    def build():
        from dfir.frontend.dataflow import names
        names.reset()
        x = df.FlowData()
        return df.FlowGraph([inc.fnode()(inc.fnode()(x))])
    first, second = dfir.compile(build()), dfir.compile(build())
    assert first.ir == second.ir
    assert first.om == second.om


def mlp_graph(rng):
    from dfir.ge.graph import Graph
    import dfir.data_type as dt
    w = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    g = Graph("mlp")
    x = g.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.add(g.matmul(x, g.const(w)), g.const(b)))])
    return g, lambda a: np.maximum(a @ w + b, 0)


def test_ge_graph_compiles_on_its_own():
    rng = np.random.default_rng(0)
    graph, reference = mlp_graph(rng)
    compiled = dfir.compile(graph)
    assert "ge.matmul" in compiled.ir and 'df.node "mlp"(%0) pp @mlp_pp' in compiled.ir
    with dfir.load(compiled.om) as model:
        assert model.input_names == ["x"]
        for rows in (1, 3, 7):
            batch = rng.standard_normal((rows, 4)).astype(np.float32)
            model.feed_data([batch])
            outputs, _, ret = model.fetch_data(timeout=5000)
            assert ret == 0
            np.testing.assert_allclose(outputs[0].numpy(), reference(batch), rtol=1e-5, atol=1e-6)


def test_graph_process_point_inside_a_flow_graph():
    rng = np.random.default_rng(1)
    graph, reference = mlp_graph(rng)

    @df.pyflow
    def double(a):
        return a * 2
    x = df.FlowData()
    ge_node = df.GraphProcessPoint(df.Framework.ONNX, graph).fnode(1, 1, name="mlp_node")
    flow = df.FlowGraph([ge_node(double.fnode()(x))])
    batch = rng.standard_normal((2, 4)).astype(np.float32)
    flow.feed_data({x: batch})
    outputs, _, ret = flow.fetch_data(timeout=5000)
    assert ret == 0
    np.testing.assert_allclose(outputs[0].numpy(), reference(2 * batch), rtol=1e-5, atol=1e-6)


def test_graph_node_arity_must_match_the_graph():
    graph, _ = mlp_graph(np.random.default_rng(2))
    node = df.GraphProcessPoint(df.Framework.ONNX, graph).fnode(2, 1, name="wrong")
    flow = df.FlowGraph([node(df.FlowData(), df.FlowData())])
    with pytest.raises(GeError, match=r"node wrong \(.*\) has 2 inputs and 1 outputs but GE graph mlp "
                                      r"has 1 inputs and 1 outputs"):
        dfir.compile(flow)


def test_missing_graph_files_are_rejected_naming_them():
    with pytest.raises(GeError, match=r"^GraphProcessPoint: TENSORFLOW graph file 'model.pb' cannot be read: "
                                      r"No such file or directory$"):
        df.GraphProcessPoint(df.Framework.TENSORFLOW, "model.pb")
    with pytest.raises(GeError, match=r"ONNX model file 'model.onnx' does not exist"):
        df.GraphProcessPoint(df.Framework.ONNX, "model.onnx")


def test_alignment_is_recorded_in_the_plan():
    import json
    from dfir.om.schema import PartitionType
    from dfir.runtime.om import read_om
    graph = df.FlowGraph([inc.fnode()(df.FlowData())], name="aligned")
    graph.set_inputs_align_attrs(256, 60000, True)
    plan = json.loads(bytes(read_om(dfir.compile(graph).om).models[0].partition(PartitionType.FLOW_MODEL).data))
    assert plan["align"] == {"cache": 256, "timeout": 60000, "dropout": True}
