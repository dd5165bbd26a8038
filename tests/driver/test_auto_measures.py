"""`auto` that measures (dfir.driver.backend_choice) and the `onnxruntime` backend, through
`dfir.compile` and `dfir.load`: what is chosen, what is dropped and why, what is reported, what the
compile cache keeps, and the errors."""
from __future__ import annotations

import os
import re
import signal
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dfir
import dfir.data_type as dt
from dfir.dialects import ge
from dfir.driver import backend_choice
from dfir.driver.backend_choice import disagreement, drawn_inputs
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.om.plan import GeInput, Plan
from dfir.om.schema import PartitionType
from dfir.passes.convert_ge_to_linalg import AUTO_ATTR
from dfir.runtime.ge.ort_runner import OrtGraphRunner
from dfir.runtime.om import read_om

_W = np.random.default_rng(3).standard_normal((8, 4)).astype(np.float32)


def _mlp(name: str = "mlp") -> Graph:
    g = Graph(name)
    x = g.data(0, [-1, 8], dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.matmul(x, g.const(_W)))])
    return g


def _bitcast() -> Graph:
    """A graph IREE runs and onnxruntime cannot (ONNX has no bitcast)."""
    g = Graph("bits")
    x = g.data(0, [4], dt.DT_FLOAT, name="x")
    g.set_outputs([g.bitcast(x, dt.DT_INT32, name="b")])
    return g


def _nothing_compiles() -> Graph:
    """A graph neither IREE (top_k has no lowering) nor onnxruntime (bitcast) runs."""
    g = Graph("stuck")
    x = g.data(0, [6], dt.DT_FLOAT, name="x")
    values, _ = g.top_k(x, 2, name="best")
    g.set_outputs([g.bitcast(values, dt.DT_INT32, name="b")])
    return g


@pytest.fixture(autouse=True)
def _no_backend_env(monkeypatch, tmp_path):
    """No backend from the environment; a store of choices of the test's own: every test measures."""
    monkeypatch.delenv("DFIR_GE_BACKEND", raising=False)
    monkeypatch.setenv("DFIR_AUTO_STORE", str(tmp_path / "auto"))


def _auto_lines(compiled) -> list[str]:
    return [line for line in str(compiled.report).splitlines() if line.startswith("auto: ")]


def _model(compiled):
    return read_om(compiled.om).models[0]


def _plan(compiled) -> Plan:
    return Plan.from_json(bytes(_model(compiled).partition(PartitionType.FLOW_MODEL).data))


def _entries(compiled) -> list:
    return list(_plan(compiled).ge_graphs)


def _run(compiled, tmp_path, *inputs):
    path = compiled.save(tmp_path / "model")
    with dfir.load(path) as model:
        model.feed_data(list(inputs))
        outputs, _, ret = model.fetch_data(timeout=20000)
    assert ret == 0
    return [t.numpy() for t in outputs]


def test_auto_times_every_candidate_and_keeps_the_fastest(tmp_path):
    compiled = dfir.compile(_mlp())
    (line,) = _auto_lines(compiled)
    (entry,) = _entries(compiled)
    timed = dict(re.findall(r"([\w/-]+) ([\d.e+-]+) ms", entry.auto))
    assert {"iree-cpu", "onnxruntime"} <= set(timed)
    fastest = min(timed, key=lambda label: float(timed[label]))
    assert entry.backend == fastest.partition("/")[0]
    assert line == f"auto: @mlp {fastest} ({entry.auto})"
    (graph_op,) = [op for op in compiled.module.ops if isinstance(op, ge.GraphOp)]
    assert graph_op.attributes[AUTO_ATTR].data == entry.auto and graph_op.backend.data == entry.backend
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    (y,) = _run(compiled, tmp_path, x)
    np.testing.assert_allclose(y, np.maximum(x @ _W, 0), rtol=1e-5, atol=1e-5)


def test_a_candidate_that_disagrees_with_the_reference_is_dropped_with_the_difference(monkeypatch):
    real = backend_choice.load_ge_runner

    class OffByOne:
        def __init__(self, runner):
            self.runner = runner

        def run(self, inputs):
            return [out + 1 for out in self.runner.run(inputs)]

    def miscompiled(entry, *args):
        runner = real(entry, *args)
        return OffByOne(runner) if entry.backend == "onnxruntime" else runner

    monkeypatch.setattr(backend_choice, "load_ge_runner", miscompiled)
    (entry,) = _entries(dfir.compile(_mlp()))
    assert entry.backend == "iree-cpu"
    assert "onnxruntime dropped: output 0 differs by up to 1 (largest magnitude " in entry.auto


def test_a_candidate_that_cannot_build_is_skipped_with_its_reason(tmp_path):
    compiled = dfir.compile(_bitcast())
    (entry,) = _entries(compiled)
    assert entry.backend == "iree-cpu"
    assert entry.auto.endswith("; onnxruntime dropped: ge.graph @bits: backend onnxruntime cannot run "
                               "ge.bitcast 'b': ONNX has no bitcast; use backend reference or auto for this graph")
    x = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    (y,) = _run(compiled, tmp_path, x)
    np.testing.assert_array_equal(y, x.view(np.int32))


def test_the_reference_kernels_run_a_graph_only_when_nothing_else_can():
    (entry,) = _entries(dfir.compile(_nothing_compiles()))
    assert entry.backend == "reference" and entry.executable is None
    assert entry.auto == ("reference: nothing else runs it; onnxruntime dropped: ge.graph @stuck: backend "
                          "onnxruntime cannot run ge.bitcast 'b': ONNX has no bitcast; use backend reference "
                          "or auto for this graph")


@pytest.mark.parametrize("backend", ["onnxruntime", "iree-cpu", "reference"])
def test_an_explicit_backend_is_never_measured(backend, tmp_path):
    compiled = dfir.compile(_mlp(), {"dfir.ge.backend": backend})
    assert _auto_lines(compiled) == []
    (entry,) = _entries(compiled)
    assert entry.backend == backend and entry.auto is None
    x = np.ones((2, 8), np.float32)
    (y,) = _run(compiled, tmp_path, x)
    np.testing.assert_allclose(y, np.maximum(x @ _W, 0), rtol=1e-5, atol=1e-5)


def test_the_environment_can_ask_for_onnxruntime(monkeypatch):
    monkeypatch.setenv("DFIR_GE_BACKEND", "onnxruntime")
    (entry,) = _entries(dfir.compile(_mlp()))
    assert entry.backend == "onnxruntime" and entry.auto is None


def test_an_onnxruntime_graph_stores_its_model_once_and_no_weight_bytes(tmp_path):
    weight = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)
    g = Graph("wide")
    x = g.data(0, [1, 256], dt.DT_FLOAT, name="x")
    g.set_outputs([g.matmul(x, g.const(weight))])
    compiled = dfir.compile(g, {"dfir.ge.backend": "onnxruntime"})
    (executable,) = _plan(compiled).executables
    assert executable.backend == "onnxruntime" and executable.target == "onnx opset 21"
    assert executable.size < 1024  # the weight is served from WEIGHTS_DATA, not stored again
    assert len(compiled.om) < weight.nbytes + 16384
    x = np.ones((1, 256), np.float32)
    (y,) = _run(compiled, tmp_path, x)
    np.testing.assert_allclose(y, x @ weight, rtol=1e-4, atol=1e-4)


def test_onnxruntime_cannot_run_an_op_without_an_onnx_form():
    with pytest.raises(GeError) as caught:
        dfir.compile(_bitcast(), {"dfir.ge.backend": "onnxruntime"})
    assert caught.value.error_message.endswith(
        "ge.graph @bits: backend onnxruntime cannot run ge.bitcast 'b': ONNX has no bitcast; use backend "
        "reference or auto for this graph")


def test_threads_reach_the_plan_and_the_session(tmp_path):
    compiled = dfir.compile(_mlp(), {"dfir.ge.backend": "onnxruntime", "dfir.ge.threads": "1"})
    (entry,) = _entries(compiled)
    assert entry.threads == 1
    model = _model(compiled)
    runner = OrtGraphRunner(entry, model.partition(PartitionType.GE_EXECUTABLE).data,
                            model.partition(PartitionType.WEIGHTS_DATA).data)
    assert runner.threads == 1


def test_a_malformed_thread_count_is_an_error():
    with pytest.raises(GeError, match=re.escape("option dfir.ge.threads has malformed value '0': expected a "
                                                "thread count in [1, 1024]")):
        dfir.compile(_mlp(), {"dfir.ge.threads": "0"})


def test_a_warm_compile_measures_nothing(tmp_path, monkeypatch):
    options = {"ge.graph_compiler_cache_dir": str(tmp_path), "ge.graph_key": "auto_warm"}
    cold = dfir.compile(_mlp(), options)
    assert len(_auto_lines(cold)) == 1

    def measured(*_):
        raise AssertionError("a warm compile measured a graph")

    monkeypatch.setattr(backend_choice.MeasuringChooser, "__call__", measured)
    monkeypatch.setenv("DFIR_AUTO_STORE", str(tmp_path / "another store"))
    warm = dfir.compile(_mlp(), options)
    assert warm.om == cold.om


def test_a_choice_is_remembered_on_this_machine_and_compiles_the_same_bytes(tmp_path, monkeypatch):
    first = dfir.compile(_mlp())
    assert len(list((tmp_path / "auto").glob("*.json"))) == 1

    def measured(*_):
        raise AssertionError("a remembered graph was measured again")

    monkeypatch.setattr(backend_choice._Measurement, "choice", measured)
    again = dfir.compile(_mlp())
    assert again.om == first.om
    (line,) = _auto_lines(again)
    assert line == _auto_lines(first)[0] + "; measured before on this machine"


def test_another_thread_count_is_measured_again(tmp_path):
    dfir.compile(_mlp())
    dfir.compile(_mlp(), {"dfir.ge.threads": "1"})
    assert len(list((tmp_path / "auto").glob("*.json"))) == 2


def test_a_choice_ranked_another_way_is_measured_again(tmp_path, monkeypatch):
    dfir.compile(_mlp())
    monkeypatch.setattr(backend_choice, "_METHOD", backend_choice._METHOD + 1)
    dfir.compile(_mlp())
    assert len(list((tmp_path / "auto").glob("*.json"))) == 2


class _Clocked:
    """A runner whose calls take the next of `seconds`, on a fake clock."""

    def __init__(self, clock: list[float], seconds: list[float]):
        self.clock, self.seconds = clock, iter(seconds)

    def run(self, _inputs):
        self.clock[0] += next(self.seconds)


def test_candidates_rank_by_mean_time_so_a_slow_third_of_calls_counts(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(backend_choice, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    # median 4.5 ms, but a third of the calls take 8 ms: mean 5.67 ms
    tailed = _Clocked(clock, [0.0045, 0.0045, 0.008] * 7)
    steady = _Clocked(clock, [0.0046] * 21)
    seconds = backend_choice._timed({"tailed": tailed, "steady": steady}, [])
    assert seconds["steady"] == pytest.approx(0.0046)
    assert seconds["tailed"] > seconds["steady"]


def test_the_slowest_tenth_of_calls_is_left_out_as_noise():
    samples = [0.001] * 18 + [0.5, 0.9]
    assert backend_choice._expected_seconds(samples) == pytest.approx(0.001)
    assert backend_choice._expected_seconds([0.002, 0.004]) == pytest.approx(0.003)


def test_drawn_inputs_take_each_dimension_at_its_lower_bound():
    descs = [GeInput("x", 0, "DT_FLOAT", (-1, 3), ((0, -1), (3, 3)), 0),
             GeInput("ids", 1, "DT_INT64", (-1,), ((4, 9),), 1),
             GeInput("mask", 2, "DT_BOOL", (2,), ((2, 2),), 2)]
    x, ids, mask = drawn_inputs(descs, np.random.default_rng(0))
    assert (x.shape, x.dtype) == ((1, 3), np.float32)
    assert (ids.shape, ids.dtype) == ((4,), np.int64) and set(ids.tolist()) <= {0, 1}
    assert (mask.shape, mask.dtype) == ((2,), np.bool_)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, width=32), min_size=1, max_size=8), st.floats(0, 2))
def test_disagreement_allows_only_a_small_error_relative_to_the_largest_magnitude(values, shift):
    want = np.array(values, np.float32)
    got = want + np.float32(shift)
    scale = max(float(np.max(np.abs(want))), 1.0)
    problem = disagreement([got], [want])
    error = float(np.max(np.abs(got - want)))
    assert (problem is None) == (error <= backend_choice.TOLERANCE * scale)


def test_disagreement_names_dtype_shape_and_integer_differences():
    a = np.arange(4, dtype=np.int32)
    assert disagreement([a.astype(np.int64)], [a]) == "output 0 is int64 [4], expected int32 [4]"
    assert disagreement([a + (a == 2)], [a]) == "output 0 differs in 1 elements"
    assert disagreement([a, a], [a]) == "2 outputs, expected 1"
    assert disagreement([np.array([np.nan], np.float32)], [np.array([1.0], np.float32)]) == (
        "output 0 has non-finite values where the reference has none, or the reverse")


def _int_div() -> Graph:
    g = Graph("idiv")
    x = g.data(0, [4], dt.DT_INT32, name="x")
    y = g.data(1, [4], dt.DT_INT32, name="y")
    g.set_outputs([g.div(x, y, name="q")])
    return g


def test_a_failing_onnxruntime_run_fails_the_transaction_naming_the_graph(tmp_path):
    compiled = dfir.compile(_int_div(), {"dfir.ge.backend": "onnxruntime"})
    path = compiled.save(tmp_path / "idiv")
    x = np.array([4, 6, 8, 9], np.int32)
    with dfir.load(path) as model:
        model.feed_data([x, np.array([2, 3, 4, 3], np.int32)])
        outputs, _, ret = model.fetch_data(timeout=20000)
        assert ret == 0 and outputs[0].numpy().tolist() == [2, 2, 2, 3]
        model.feed_data([x, np.array([2, 0, 4, 3], np.int32)])
        _, _, ret = model.fetch_data(timeout=20000)
    assert ret != 0 and "onnxruntime could not run the graph: " in ret.message and "idiv" in ret.message


def test_a_candidate_whose_run_raises_is_dropped_with_the_error(monkeypatch):
    real = backend_choice.load_ge_runner

    class Raising:
        def run(self, inputs):
            raise RuntimeError("engine exploded")

    monkeypatch.setattr(backend_choice, "load_ge_runner",
                        lambda entry, *args: Raising() if entry.backend == "onnxruntime" else real(entry, *args))
    (entry,) = _entries(dfir.compile(_mlp()))
    assert entry.backend == "iree-cpu"
    assert "onnxruntime dropped: RuntimeError: engine exploded" in entry.auto


def test_a_measuring_process_that_dies_leaves_the_static_pick(monkeypatch):
    monkeypatch.setattr(backend_choice, "_measured", lambda *args: os.kill(os.getpid(), signal.SIGKILL))
    (entry,) = _entries(dfir.compile(_mlp()))
    assert (entry.backend, entry.auto) == ("iree-cpu", "iree-cpu: not measured: the measuring process died")


def test_a_graph_the_reference_cannot_run_on_drawn_inputs_is_not_measured(monkeypatch):
    def refused(self, inputs):
        raise GeError("index 7 is out of range")

    monkeypatch.setattr(backend_choice.GeGraphRunner, "run", refused)
    (entry,) = _entries(dfir.compile(_mlp()))
    assert entry.backend == "iree-cpu"
    assert entry.auto.startswith("iree-cpu: not measured: the reference kernels cannot run inputs drawn from its "
                                 "shape ranges: ")
