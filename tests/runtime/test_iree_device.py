"""`runtime.iree_device`: which IREE device a compiled graph runs on, and one loaded module per
executable and device in a process."""
from __future__ import annotations

import os

import numpy as np
import pytest

from dfir.core.errors import GeError
from dfir.runtime.ge import iree_device
from dfir.runtime.ge.iree_device import CPU_DRIVER, TASK_DRIVER, cpu_threads, device_for


def test_cpu_graphs_run_on_the_one_cpu_device_of_their_thread_count():
    assert (CPU_DRIVER, TASK_DRIVER) == ("local-sync", "local-task")
    assert device_for("iree-cpu", "0:0:3", "g", 1) == device_for("iree-cpu", "-1", "g", 1) == ("local-sync", 0)
    assert device_for("iree-cpu", "0:0:3", "g", 2) == device_for("iree-cpu", "-1", "g", 4) == ("local-task", 0)


def test_no_thread_count_means_the_cores_this_process_may_use():
    assert cpu_threads(None) == len(os.sched_getaffinity(0))
    assert device_for("iree-cpu", "-1", "g")[0] == ("local-sync" if cpu_threads(None) == 1 else "local-task")
    assert cpu_threads(3) == 3
    with pytest.raises(GeError) as caught:
        cpu_threads(0)
    assert caught.value.error_message == "an IREE CPU device needs at least 1 thread, got 0"


@pytest.mark.parametrize("device, index", [("-1", 0), ("0:0:0", 0), ("0:0:1", 1), ("0:0:3", 1), ("0:1:4:0", 0),
                                           ("0:0:-1:0", 0)])
def test_cuda_graphs_run_on_the_logical_device_modulo_the_gpus(monkeypatch, device, index):
    monkeypatch.setattr(iree_device, "_cuda_devices", lambda graph: [{"device_id": 10}, {"device_id": 11}])
    assert device_for("iree-cuda", device, "g") == ("cuda", index)


def test_an_executable_loads_once_per_process_device_and_thread_count(monkeypatch):
    loads = []
    monkeypatch.setattr(iree_device, "_config", lambda state, driver, index, graph, workers: (driver, index, workers))
    monkeypatch.setattr(iree_device, "_load", lambda vmfb, config, graph, parameters: loads.append(config) or object())
    monkeypatch.setattr(iree_device, "_state", iree_device._ProcessState())
    first = iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "0:0:0", "g", threads=1)
    assert iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "0:0:1", "h", threads=1) is first
    iree_device.loaded_module(b"other", "b" * 64, "iree-cpu", "-1", "g", threads=1)
    two = iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "-1", "g", threads=2)
    assert two is not first and iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "-1", "g", threads=2) is two
    iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "-1", "g", threads=3)
    assert loads == [("local-sync", 0, 1), ("local-sync", 0, 1), ("local-task", 0, 2), ("local-task", 0, 3)]


def _task_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def test_each_thread_count_gets_a_task_device_with_that_many_workers():
    """Two counts in one process: each device starts its own workers (the flag is read when the
    driver is created), and both compute."""
    from dfir.lowering.iree_executable import compile_executable
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %e = tensor.empty() : tensor<4xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                           iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%a: f32, %o: f32):
        %d = arith.addf %a, %a : f32
        linalg.yield %d : f32
      } -> tensor<4xf32>
      return %y : tensor<4xf32>
    }"""
    vmfb = compile_executable(text, "iree-cpu", graph="double").vmfb
    state = iree_device._current()
    made = []
    for workers in (2, 3):
        before = _task_threads()
        module = iree_device.loaded_module(vmfb, f"{workers}" * 64, "iree-cpu", "-1", "double", threads=workers)
        [y] = module.call([np.arange(4, dtype=np.float32)])
        np.testing.assert_array_equal(y, [0, 2, 4, 6])
        made.append(_task_threads() - before)
        assert ("local-task", 0, workers) in state.configs
    assert made[1] == made[0] + 1  # one more worker; the rest (IREE's coordinator) is the same
