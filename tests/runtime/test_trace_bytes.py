"""The bytes a traced call took and put (TraceRecord.bytes_in / bytes_out, counted by ByteMeter in
runtime/native/channel_io.h): per slice on every path a firing takes (a lean chain, the set
loop of a GE node, the aligned loop, the driver's feed and fetch), over local and shared
channels, and per node instance in `model.stats()`."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dfir.dataflow as df
from dfir.runtime import _native
from dfir.runtime.driver import tracing
from dfir.runtime.driver.trace_model import DRIVER
from test_tracing import WAIT_MS, three_stages, traced_meet

WIDE = 256  # int32 values a message of three_stages carries here: 1 KiB


@pytest.fixture(autouse=True)
def no_trace_env(monkeypatch):
    monkeypatch.delenv(tracing.TRACE_ENV, raising=False)


def per_transaction(trace) -> dict[int, list]:
    slices: dict[int, list] = {}
    for s in trace.slices:
        slices.setdefault(s.transaction, []).append(s)
    return slices


def test_every_slice_of_a_shared_channel_pipeline_counts_the_bodies_it_took_and_put():
    """three_stages: one on 0:0:0, two on 0:0:0 and 0:0:1, three on the host; every message 1 KiB."""
    feeds = 12
    with three_stages(1.0) as model:
        for k in range(feeds):
            assert model.feed_data([np.arange(k, k + WIDE, dtype=np.int32)]) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(feeds)]
        trace = model._scheduler.tracer.collect()
        stats = model.stats()
    assert [int(ret) for _, _, ret in results] == [0] * feeds
    kib = 4 * WIDE
    for transaction, slices in per_transaction(trace).items():
        got = sorted((s.name.split(" instance")[0], s.bytes_in, s.bytes_out) for s in slices)
        assert got == [("feed", 0, kib), ("fetch", kib, 0), ("node 'one'", kib, kib), ("node 'three'", kib, kib),
                       ("node 'two'", kib, kib)], transaction
    nodes = {(n["node"], n["instance"]): n for n in stats["nodes"]}
    assert all(n["bytes_in"] == n["bytes_out"] == n["calls"] * kib for n in nodes.values())
    assert sum(nodes["two", k]["bytes_in"] for k in (0, 1)) == feeds * kib


def test_a_lean_chain_hands_each_function_s_result_to_the_next_and_counts_it_on_both_sides():
    image = df.FlowData(name="x")
    double = df.pyflow(lambda a: a * 2).fnode(name="dbl")
    half = df.pyflow(lambda a: a[: a.shape[0] // 2]).fnode(name="half")
    graph = df.FlowGraph([half(double(image))], {"dfir.runtime.trace": "on"})
    try:
        for _ in range(3):
            graph.feed_data({image: np.arange(1000, dtype=np.float32)})
            tensors, _, ret = graph.fetch_data(timeout=WAIT_MS)
            assert ret == 0 and tensors[0].numpy().shape == (500,)
        trace = tracing.traces()[-1]
    finally:
        df.finalize()
    for slices in per_transaction(trace).values():
        assert sorted((s.name, s.bytes_in, s.bytes_out) for s in slices) == [
            ("feed", 0, 4000), ("fetch", 2000, 0), ("node 'dbl' instance 0", 4000, 4000),
            ("node 'half' instance 0", 4000, 2000)]


def matmul_onnx(path) -> str:
    """y[1, 3] = x[1, 4] @ w[4, 3]."""
    weight = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])], [weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_a_ge_node_s_set_loop_slice_counts_its_input_and_output_tensors(tmp_path):
    x = df.FlowData(name="x")
    net = df.GraphProcessPoint(df.Framework.ONNX, matmul_onnx(tmp_path / "mm.onnx")).fnode(1, 1, name="mm")
    graph = df.FlowGraph([net(x)], {"dfir.runtime.trace": "on", "dfir.ge.backend": "reference",
                                    "ge.graph_compiler_cache_dir": str(tmp_path)})
    try:
        for k in range(3):
            graph.feed_data({x: np.full((1, 4), k, np.float32)})
            _, _, ret = graph.fetch_data(timeout=WAIT_MS)
            assert ret == 0
        trace = tracing.traces()[-1]
    finally:
        df.finalize()
    node_slices = [s for s in trace.slices if s.worker != DRIVER]
    assert len(node_slices) == 3
    assert {(s.name, s.bytes_in, s.bytes_out) for s in node_slices} == {("node 'mm' instance 0", 16, 12)}


def test_an_aligned_node_counts_the_messages_it_aligned():
    with traced_meet() as model:
        for k in range(4):
            assert model.feed_data([np.full(8, k, np.int64), np.full(8, 10 * k, np.int64)]) == 0
            assert int(model.fetch_data(timeout=WAIT_MS)[2]) == 0
        trace = model._scheduler.tracer.collect()
    met = [s for s in trace.slices if s.name == "node 'meet' instance 0"]
    assert [(s.bytes_in, s.bytes_out) for s in met] == [(128, 64)] * 4


def test_a_byte_meter_counts_what_its_thread_puts_and_message_bytes_reads_a_payload():
    assert _native.message_bytes(type("M", (), {"payload": np.zeros((3, 5), np.float64)})()) == 120
    assert _native.message_bytes(type("M", (), {"payload": b"abcd"})()) == 4
    assert _native.message_bytes(type("M", (), {"payload": {"an": "object"}})()) == 0
    assert _native.message_bytes(object()) == 0  # not a message: nothing to count
    with _native.ByteMeter() as meter:
        assert (meter.bytes_in, meter.bytes_out) == (0, 0)
    assert (meter.bytes_in, meter.bytes_out) == (0, 0)
