"""GE graphs compiled by IREE, end to end: `dfir.compile` puts their executables into the `.om`,
`dfir.load` runs them with `IreeGraphRunner` (docs/execution-plan.md, `executables`)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest

import dfir
import dfir.ge.graph as dfir_graph
from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.ge.graph_runner import GeGraphRunner
from dfir.runtime.ge.iree_device import device_for
from dfir.runtime.ge.iree_runner import IreeGraphRunner
from dfir.runtime.om import read_om
from dfir.runtime.worker import host
from codegen_graphs import (COPY_BOOL, DOUBLE_F32, MATMUL_F64, bool_graph, codegen_pass,  # noqa: F401
                            double_graph, matmul_graph)

WAIT_MS = 30_000


def compiled_om(codegen: dict, graph, backend: str, text: str) -> bytes:
    codegen[graph.name] = (backend, text)
    return dfir.compile(graph).om


def plan_and_executables(om: bytes) -> tuple[Plan, list[memoryview]]:
    model = read_om(om).models[0]
    return (Plan.from_json(model.partition(PartitionType.FLOW_MODEL).data),
            [p.data for p in model.partitions_of(PartitionType.GE_EXECUTABLE)])


def run_once(om: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    with dfir.load(om) as model:
        assert model.feed_data(inputs) == 0
        outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == 0, ret.message
    return [output.numpy() for output in outputs]


def cuda_available() -> bool:
    try:
        device_for("iree-cuda", "-1", "probe")
    except GeError:
        return False
    return True


def test_x_plus_x_runs_compiled_on_the_cpu(codegen_pass):
    om = compiled_om(codegen_pass, double_graph(), "iree-cpu", DOUBLE_F32)
    plan, executables = plan_and_executables(om)
    graph = plan.ge_graphs[0]
    assert (graph.backend, graph.executable, len(executables)) == ("iree-cpu", 0, 1)
    assert plan.executables[0].backend == "iree-cpu" and plan.executables[0].size == len(executables[0])
    with dfir.load(om) as model:
        for size in (1, 5, 1000):
            x = np.linspace(-1, 1, size, dtype=np.float32)
            assert model.feed_data([x]) == 0
            outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
            assert ret == 0 and np.array_equal(outputs[0].numpy(), x + x)


def test_a_dynamic_batch_matmul_keeps_f64(codegen_pass):
    om = compiled_om(codegen_pass, matmul_graph(), "iree-cpu", MATMUL_F64)
    rng = np.random.default_rng(7)
    b = rng.standard_normal((3, 2))
    with dfir.load(om) as model:
        for batch in (3, 5):
            a = rng.standard_normal((batch, 3)) * (1 + 1e-12)
            assert model.feed_data([a, b]) == 0
            outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
            assert ret == 0
            result = outputs[0].numpy()
            assert result.dtype == np.float64 and result.shape == (batch, 2)
            np.testing.assert_allclose(result, a @ b, rtol=1e-13)


def test_bool_tensors_pass_through(codegen_pass):
    x = np.array([True, False, True, True])
    [result] = run_once(compiled_om(codegen_pass, bool_graph(), "iree-cpu", COPY_BOOL), [x])
    assert result.dtype == np.bool_ and result.tolist() == x.tolist()


def test_inputs_are_checked_and_outputs_bounded_as_on_the_reference_kernels(codegen_pass):
    plan, executables = plan_and_executables(compiled_om(codegen_pass, double_graph(), "iree-cpu", DOUBLE_F32))
    entry = replace(plan.ge_graphs[0], output_max_bytes=(8,))
    compiled = IreeGraphRunner(entry, executables[0], plan.executables[0].sha256)
    reference = GeGraphRunner(replace(entry, backend="reference", executable=None), None)
    assert compiled.run([np.ones(2, np.float32)])[0].tolist() == [2.0, 2.0]
    for inputs in ([np.ones(3, np.float32)], [np.ones(3, np.int32)], [np.ones((1, 3), np.float32)], []):
        with pytest.raises(GeError) as from_iree:
            compiled.run(inputs)
        with pytest.raises(GeError) as from_numpy:
            reference.run(inputs)
        assert from_iree.value.error_message == from_numpy.value.error_message
        assert from_iree.value.context == {"graph": "double"}
    assert from_iree.value.error_message == "expected 1 inputs, got 0"


@pytest.mark.parametrize("threads", [1, 2, None])
def test_a_runner_computes_alike_on_any_thread_count(codegen_pass, threads):
    """One thread runs on local-sync, more on local-task with that many workers (None: the cores)."""
    plan, executables = plan_and_executables(compiled_om(codegen_pass, double_graph(), "iree-cpu", DOUBLE_F32))
    runner = IreeGraphRunner(plan.ge_graphs[0], executables[0], plan.executables[0].sha256, threads=threads)
    assert runner.run([np.arange(3, dtype=np.float32)])[0].tolist() == [0.0, 2.0, 4.0]


def test_building_a_compiled_graph_node_needs_its_executable(codegen_pass):
    plan, executables = plan_and_executables(compiled_om(codegen_pass, double_graph(), "iree-cpu", DOUBLE_F32))
    with pytest.raises(GeError) as caught:
        host.build_nodes(plan, [], None)
    assert caught.value.error_message == ("GE graph 'double': executable: 0 is out of range [0, 0), the model's "
                                          "GE executables")
    [node] = host.build_nodes(plan, [], None, executables=executables)
    assert node.name == "double"


def test_an_output_above_its_max_size_fails_the_transaction(codegen_pass):
    codegen_pass["double"] = ("iree-cpu", DOUBLE_F32)
    om = dfir.compile(double_graph(), {"ge.outputMaxSize": "8"}).om
    with dfir.load(om) as model:
        model.feed_data([np.ones(3, np.float32)])
        _, _, failed = model.fetch_data(timeout=WAIT_MS)
        model.feed_data([np.ones(2, np.float32)])
        outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert "output 0 ([3] float32) is 12 bytes, above its outputMaxSize of 8 bytes" in failed.message
    assert ret == 0 and outputs[0].numpy().tolist() == [2.0, 2.0]


def test_a_fresh_process_loads_and_runs_without_the_compiler(codegen_pass, tmp_path):
    path = tmp_path / "double.om"
    path.write_bytes(compiled_om(codegen_pass, double_graph(), "iree-cpu", DOUBLE_F32))
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import dfir
        from dfir.om.plan import Plan
        from dfir.om.schema import PartitionType
        from dfir.runtime.ge.iree_runner import IreeGraphRunner
        from dfir.runtime.om import read_om
        with dfir.load({str(path)!r}) as model:  # runs in the model's worker process
            model.feed_data([np.arange(4, dtype=np.float32)])
            outputs, _, ret = model.fetch_data(timeout={WAIT_MS})
        om = read_om({str(path)!r}).models[0]     # and here, in this process
        plan = Plan.from_json(om.partition(PartitionType.FLOW_MODEL).data)
        vmfb = om.partitions_of(PartitionType.GE_EXECUTABLE)[0].data
        [here] = IreeGraphRunner(plan.ge_graphs[0], vmfb, plan.executables[0].sha256).run([np.ones(2, np.float32)])
        print(json.dumps([int(ret), outputs[0].numpy().tolist(), here.tolist(), "iree.runtime" in sys.modules,
                          "iree.compiler" in sys.modules]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [0, [0.0, 2.0, 4.0, 6.0], [2.0, 2.0], True, False]


def test_a_cuda_graph_cross_compiles_into_the_om(codegen_pass):
    om = compiled_om(codegen_pass, matmul_graph(), "iree-cuda", MATMUL_F64)
    plan, executables = plan_and_executables(om)
    assert plan.ge_graphs[0].backend == "iree-cuda"
    assert (plan.executables[0].backend, plan.executables[0].target) == ("iree-cuda", "cuda sm_80")
    assert len(executables) == 1 and plan.executables[0].size == len(executables[0])


@pytest.mark.skipif(cuda_available(), reason="a CUDA device exists here")
def test_a_cuda_graph_without_a_cuda_device_fails_at_load_naming_the_graph(codegen_pass):
    om = compiled_om(codegen_pass, matmul_graph(), "iree-cuda", MATMUL_F64)
    with pytest.raises(GeError) as caught:
        dfir.load(om).close()
    assert "GE graph 'mm' runs on iree-cuda, but no CUDA device was found" in str(caught.value)


@pytest.mark.skipif(not cuda_available(), reason="no CUDA device: IREE's cuda driver finds none")
def test_a_cuda_graph_runs_on_the_gpu(codegen_pass):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))
    [result] = run_once(compiled_om(codegen_pass, matmul_graph(), "iree-cuda", MATMUL_F64), [a, b])
    np.testing.assert_allclose(result, a @ b, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_unsigned_outputs_come_back_unsigned(dtype):
    g = dfir_graph.Graph("wrap")
    x = g.data(0, shape=[-1], dtype=dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.add(x, x)])
    x = np.array([1, np.iinfo(dtype).max], dtype)
    [result] = run_once(dfir.compile(g, {"dfir.ge.backend": "iree-cpu"}).om, [x])
    assert result.dtype == dtype and result.tolist() == (x + x).tolist()


def test_a_lowered_graph_matches_the_reference_kernels():
    rng = np.random.default_rng(11)
    g = dfir_graph.Graph("mlp")
    x = g.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="x")
    h = g.relu(g.add(g.matmul(x, g.const(rng.standard_normal((4, 8)).astype(np.float32))),
                     g.const(rng.standard_normal(8).astype(np.float32))))
    g.set_outputs([h])
    feed = [rng.standard_normal((3, 4)).astype(np.float32)]
    [compiled] = run_once(dfir.compile(g, {"dfir.ge.backend": "iree-cpu"}).om, feed)
    [reference] = run_once(dfir.compile(g, {"dfir.ge.backend": "reference"}).om, feed)
    np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-6)


def test_a_scalar_input_reaches_the_executable_as_a_scalar():
    g = dfir_graph.Graph("pick")
    rows = g.data(0, [3, 2], dt.DT_FLOAT, name="rows")
    at = g.data(1, [], dt.DT_INT32, name="at")
    g.set_outputs([g.gather(rows, at, 0)])
    om = dfir.compile(g, {"dfir.ge.backend": "iree-cpu"}).om
    (picked,) = run_once(om, [np.arange(6, dtype=np.float32).reshape(3, 2), np.array(-1, np.int32)])
    np.testing.assert_array_equal(picked, [4, 5])


# -- weights as named parameters ------------------------------------------------------------------

def weighted_graph(weights: np.ndarray) -> dfir_graph.Graph:
    """`x + W + W` with W a weight blob (at least BLOB_MIN_BYTES), used twice."""
    graph = dfir_graph.Graph("weighted")
    x = graph.data(0, list(weights.shape), dt.DT_FLOAT)
    w = graph.const(weights)
    graph.set_outputs([graph.add(graph.add(x, w), w)])
    return graph


def test_an_executable_reads_its_weight_blobs_from_weights_data():
    weights = np.random.default_rng(3).standard_normal((256, 256), dtype=np.float32)  # 256 KiB
    om = dfir.compile(weighted_graph(weights), {"dfir.ge.backend": "iree-cpu"}).om
    plan, executables = plan_and_executables(om)
    [const] = [op for op in plan.ge_graphs[0].ops if op.op == "const"]
    assert const.attrs["blob"].startswith("weight_") and const.weight == 0
    assert len(executables[0]) < 64 * 1024  # the weights are not in the executable
    assert len(om) < weights.nbytes + 128 * 1024  # but once, in WEIGHTS_DATA
    x = np.random.default_rng(4).standard_normal(weights.shape, dtype=np.float32)
    [got] = run_once(om, [x])
    np.testing.assert_array_equal(got, (x + weights) + weights)


def test_the_iree_input_names_each_blob_once_per_type_as_a_parameter():
    from dfir.lowering.codegen import codegen_module_text, parameter_values
    weights = np.ones((32, 32), np.float32)
    module = dfir.compile(weighted_graph(weights), {"dfir.ge.backend": "iree-cpu"}, stop_after="codegen").module
    [graph_op] = [op for op in module.ops if op.name == "ge.graph"]
    [(key, data)] = parameter_values(graph_op).items()
    assert bytes(data) == weights.tobytes()
    text = codegen_module_text(graph_op)
    assert text.count('"util.global"()') == 1 and text.count('"util.global.load"()') == 1
    assert (f'initial_value = #flow.parameter.named<"dfir"::"{key}"> : tensor<32x32xf32>' in text
            and "dense_resource" not in text and "dialect_resources" not in text)


def test_an_executable_whose_parameter_the_plan_does_not_give_fails_to_load():
    weights = np.ones((32, 32), np.float32)
    om = dfir.compile(weighted_graph(weights), {"dfir.ge.backend": "iree-cpu"}).om
    plan, executables = plan_and_executables(om)
    entry = plan.ge_graphs[0]
    ops = tuple(replace(op, attrs={"weight": op.weight}) if op.op == "const" else op for op in entry.ops)
    with pytest.raises(GeError) as caught:
        IreeGraphRunner(replace(entry, ops=ops), executables[0], "a digest no other test loads", "-1", None)
    key = next(op.attrs["blob"] for op in entry.ops if op.op == "const")
    assert caught.value.error_message.startswith("GE graph 'weighted': IREE cannot load its executable: ")
    assert f"no parameter found in index with key '{key}'" in caught.value.error_message
