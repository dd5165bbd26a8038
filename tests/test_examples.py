"""Every example under examples/ runs and computes what the seed says it computes."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seed_add():
    outputs, info, ret = load_example("seed_add").run()
    assert ret == 0
    assert [o.tolist() for o in outputs] == [[[3, 5]]]  # (1+1)+1, (1+2)+2
    assert (info.start_time, info.end_time, info.transaction_id) == (0, 5, 1)


@pytest.mark.parametrize("as_class", [False, True])
def test_seed_stream_input(as_class):
    example = load_example("seed_stream_input")
    node = example.Foo.fnode().func if as_class else example.func.fnode()
    assert example.run(node) == [(0, [13]), (0, [27])]  # 1+2+10, 3+4+20


@pytest.mark.parametrize("as_class", [False, True])
def test_seed_stream_output(as_class):
    example = load_example("seed_stream_output")
    node = example.Foo.fnode().func if as_class else example.func.fnode()
    assert example.run(node) == [(0, 100), (0, 101), (0, 102), (0, 103), (0, 104)]


def test_main_job_compiles_saves_loads_and_runs(tmp_path, capsys):
    results = load_example("add_pipeline").main(str(tmp_path / "pipeline"))
    assert (tmp_path / "pipeline.om").read_bytes()[:4] == b"IMOD"  # 0x444F4D49 little-endian
    assert [r.tolist() for r in results] == [[[2, 2], [2, 2]], [[4, 4], [4, 4]], [[6, 6], [6, 6]]]
    assert "transaction 3: ret=0" in capsys.readouterr().out
    assert all(r.dtype == np.int32 for r in results)


def test_seed_align_pairs_the_replicas_results_by_transaction(monkeypatch):
    monkeypatch.setenv("DFIR_GE_BACKEND", "reference")
    example = load_example("seed_align")
    try:
        results = example.run(4)
    finally:
        example.df.finalize()
    column_sums = np.arange(16, dtype=np.float32).reshape(4, 4).sum(axis=0) / 16
    for i, result in enumerate(results):  # relu(x @ w) + (-x) * 2 for x = i
        np.testing.assert_allclose(result, np.tile(i * column_sums - 2 * i, (2, 1)), rtol=1e-6)


def test_input_batching():
    example = load_example("input_batching")
    samples = np.eye(4, dtype=np.float32).repeat(2, axis=0)  # rows e0, e0, e1, e1, ...: scores 1, 1, 2, 2, ...
    assert example.count_batched(samples) == [(0, [1.0, 1.0, 2.0, 2.0], 4), (0, [3.0, 3.0, 4.0, 4.0], 8)]
    assert example.time_batched([1, 2, 3, 4]) == [(0, [3], (0, 10)), (0, [7], (10, 20))]
    example.df.finalize()
