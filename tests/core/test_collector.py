"""`batched_collection`: the youngest generation's threshold raised inside, restored after, once
for nested and concurrent uses; a collector switched off stays off; forked workers collect as
the driver did outside."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.core import collector
from dfir.core.collector import YOUNG_THRESHOLD, batched_collection


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_the_threshold_is_raised_inside_and_restored_after(thresholds):
    with batched_collection():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        with batched_collection():
            assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)  # the outer block still runs
    assert gc.get_threshold() == (700, 10, 10)


def test_an_exception_restores_the_threshold(thresholds):
    with pytest.raises(ValueError):
        with batched_collection():
            raise ValueError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_or_a_collector_switched_off_is_kept(thresholds):
    for young in (0, 2 * YOUNG_THRESHOLD):
        gc.set_threshold(young, 10, 10)
        with batched_collection():
            assert gc.get_threshold() == (young, 10, 10)
        assert gc.get_threshold() == (young, 10, 10)


def test_threads_share_one_raise(thresholds):
    inside, leave = threading.Barrier(2), threading.Event()
    seen = []

    def hold():
        with batched_collection():
            inside.wait()
            leave.wait()
    other = threading.Thread(target=hold)
    other.start()
    with batched_collection():
        inside.wait()
    seen.append(gc.get_threshold())  # the other thread's block still runs
    leave.set()
    other.join()
    assert seen == [(YOUNG_THRESHOLD, 10, 10)] and gc.get_threshold() == (700, 10, 10)


@df.pyflow
def young_threshold(x):
    return np.array([gc.get_threshold()[0]], np.int64)


def test_compile_and_load_collect_in_batches_and_workers_as_outside(thresholds, monkeypatch):
    from dfir.driver import compiler
    from dfir.runtime.driver import loader
    seen = {}

    def recording(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            seen[name] = gc.get_threshold()[0]
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, call)
    recording(compiler, "strategy_for")
    recording(loader, "_load")
    graph = df.FlowGraph([young_threshold.fnode()(df.FlowData(name="x"))])
    with dfir.load(dfir.compile(graph).om) as model:
        assert gc.get_threshold() == (700, 10, 10)
        assert model.feed_data([np.zeros(1, np.int64)]) == 0
        outputs, _, ret = model.fetch_data(timeout=10000)
    assert seen == {"strategy_for": YOUNG_THRESHOLD, "_load": YOUNG_THRESHOLD}
    assert (ret, outputs[0].numpy().tolist()) == (0, [700])  # the worker's, forked inside the load


def test_resetting_after_a_fork_outside_any_block_changes_nothing(thresholds):
    gc.set_threshold(900, 10, 10)
    collector.reset_after_fork()
    assert gc.get_threshold() == (900, 10, 10)
