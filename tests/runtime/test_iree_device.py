"""`runtime.iree_device`: which IREE device a compiled graph runs on, and one loaded module per
executable and device in a process."""
from __future__ import annotations

import pytest

from dfir.runtime import iree_device
from dfir.runtime.iree_device import CPU_DRIVER, device_for


def test_cpu_graphs_run_on_the_one_cpu_device():
    assert CPU_DRIVER == "local-sync"
    assert device_for("iree-cpu", "0:0:3", "g") == device_for("iree-cpu", "-1", "g") == ("local-sync", 0)


@pytest.mark.parametrize("device, index", [("-1", 0), ("0:0:0", 0), ("0:0:1", 1), ("0:0:3", 1), ("0:1:4:0", 0),
                                           ("0:0:-1:0", 0)])
def test_cuda_graphs_run_on_the_logical_device_modulo_the_gpus(monkeypatch, device, index):
    monkeypatch.setattr(iree_device, "_cuda_devices", lambda graph: [{"device_id": 10}, {"device_id": 11}])
    assert device_for("iree-cuda", device, "g") == ("cuda", index)


def test_an_executable_loads_once_per_process_and_device(monkeypatch):
    loads = []
    monkeypatch.setattr(iree_device, "_config", lambda state, driver, index, graph: (driver, index))
    monkeypatch.setattr(iree_device, "_load", lambda vmfb, config, graph, parameters: loads.append(config) or object())
    monkeypatch.setattr(iree_device, "_state", iree_device._ProcessState())
    first = iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "0:0:0", "g")
    assert iree_device.loaded_module(b"vmfb", "a" * 64, "iree-cpu", "0:0:1", "h") is first
    iree_device.loaded_module(b"other", "b" * 64, "iree-cpu", "-1", "g")
    assert loads == [("local-sync", 0), ("local-sync", 0)]
