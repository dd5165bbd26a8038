"""The IREE devices of this process, and the executables loaded on them.

Each worker process is one logical device (runtime/worker/executor.py), so each process keeps, per IREE
driver and thread count, one runtime instance and HAL device (`device_for`), and per executable
(by SHA-256), device and thread count one loaded module (`loaded_module`), whatever number of
nodes run it. The state belongs to the process that made it: a forked worker starts its own
rather than use its parent's (IREE's devices and threads do not survive a fork).

Drivers:

- CPU (`iree-cpu`), by the thread count `threads` a call may use (None: the cores this process
  may run on, `os.sched_getaffinity`): one thread runs on `local-sync`, IREE's single-threaded
  driver, in the calling thread; more run on `local-task`, IREE's threaded driver, with that many
  workers. IREE reads the worker count from a process-global flag
  (`--task_topology_group_count`) when a driver is created, so each count gets its own driver
  (`create_hal_driver`, not IREE's per-process cached one), made under a lock right after the
  flag is set: a process may hold devices of several counts, each with its own workers.
  Measured (IREE 3.13, batch 1, direct calls, median ms of 12 interleaved rounds, the 2-core
  build machine shared with other work; `benchmarks/ge_exec.py --cnns`):

      model / variant          local-sync (1)   local-task (2)   onnxruntime 1 / 2 threads
      EfficientNet-B0 default        93.5             73.0          13.6 / 26.9
      EfficientNet-B0 im2col         44.6             46.3
      MobileNetV2 default            71.6             52.9           8.1 / 14.1
      MobileNetV2 im2col             29.1             30.0
      ResNet-18 tiled                71.9             70.9          39.6 / 61.3

  Two workers make default code 20-36% faster and tuned code no faster here, where onnxruntime's
  second thread costs it 1.5-2.5x: the second core is seldom free. A model's devices and nodes
  also run in parallel (processes and threads): a graph that shares its cores with them is
  better run with `threads=1`.

- CUDA (`iree-cuda`): `cuda`, on GPU `logical device index % GPU count` (the host: GPU 0);
  `threads` does not apply.

`iree.runtime` is imported on first use (`# lazy:` below): it takes a second to import, and only
models with IREE-compiled graphs need it.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Mapping

import numpy as np

from dfir.core.backends import IREE_CPU, IREE_CUDA
from dfir.core.errors import GeError
from dfir.om.plan import IREE_PARAMETER_SCOPE, device_id
from dfir.runtime.ge.graph_runner import available_cores

__all__ = ["CPU_DRIVER", "TASK_DRIVER", "DeviceModule", "cpu_threads", "device_for", "loaded_module",
           "parameters_module", "share_one_malloc_arena"]

CPU_DRIVER = "local-sync"
"""The driver of one thread."""
TASK_DRIVER = "local-task"
"""The driver of more threads than one (its workers)."""
_DRIVERS = {IREE_CPU: CPU_DRIVER, IREE_CUDA: "cuda"}
_TOPOLOGY_FLAG = "--task_topology_group_count"
_topology_lock = threading.Lock()  # the flag is process-global: set it and create the driver as one step
_VMFB_ALIGNMENT = 64  # IREE maps a vmfb in place only at this alignment; it copies others


_M_ARENA_MAX = -8  # glibc's mallopt parameter number


def share_one_malloc_arena() -> None:
    """Make the threads this process starts from now on (and its workers', which fork from it)
    share glibc's main malloc arena.

    An IREE executable called from a thread that has an arena of its own ran 8x slower: an MLP
    (784-512-256-10) at batch 1 took 4.7 ms a call against 0.6 ms on the main thread, or on a
    thread with `MALLOC_ARENA_MAX=1`; every GE node runs on a thread of its device's worker. The
    runtime calls this when it is imported, before it starts any thread: threads that have an
    arena keep it, and later ones are handed the existing arenas in turn. A `MALLOC_ARENA_MAX`
    in the environment is the user's choice and is left alone; without glibc there is no such
    setting, and nothing to do.
    """
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_ARENA_MAX, 1)


class DeviceModule:
    """An executable loaded on one device: its `main` function, called under a lock (IREE
    contexts are not safe to call from several threads at once)."""

    def __init__(self, main: Any):
        self._main = main
        self._lock = threading.Lock()

    def call(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """`main(*arrays)`'s results as numpy arrays."""
        with self._lock:
            results = self._main(*arrays)
        results = results if isinstance(results, (tuple, list)) else (results,)
        return [result.to_host() for result in results]


class _ProcessState:
    """What this process has made: configs by (driver, device index, threads), modules by
    (digest, driver, device index, threads)."""

    def __init__(self):
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.configs: dict[tuple[str, int, int], Any] = {}
        self.modules: dict[tuple[str, str, int, int], DeviceModule] = {}


_state = _ProcessState()


_inherited: list[_ProcessState] = []
"""The states a forked child inherited, never released: releasing a `local-task` device joins its
worker threads, which a forked child does not have, so it would wait forever."""


def _current() -> _ProcessState:
    global _state
    if _state.pid != os.getpid():  # a forked child: the parent's devices are not ours
        _inherited.append(_state)
        _state = _ProcessState()
    return _state


def cpu_threads(threads: int | None) -> int:
    """The threads a CPU call uses: `threads`, or when None the cores this process may run on."""
    if threads is None:
        return available_cores()
    if threads < 1:
        raise GeError(f"an IREE CPU device needs at least 1 thread, got {threads}")
    return threads


def device_for(backend: str, device: str, graph: str, threads: int | None = None) -> tuple[str, int]:
    """The (driver, device index) a graph of `backend` runs on at logical device `device`
    (`cluster:server:device[:numa]` or "-1") with `threads` CPU threads (`cpu_threads`); GeError
    naming `graph` when there is none."""
    driver = _DRIVERS[backend]
    if driver != "cuda":
        return (CPU_DRIVER if cpu_threads(threads) == 1 else TASK_DRIVER), 0
    count = len(_cuda_devices(graph))
    return driver, max(device_id(device), 0) % count


def loaded_module(vmfb: bytes | memoryview, sha256: str, backend: str, device: str, graph: str,
                  parameters: Mapping[str, Any] | None = None, threads: int | None = None) -> DeviceModule:
    """The executable `vmfb` (SHA-256 `sha256`) loaded on the device `device_for` gives, once
    per process and thread count, with the named `parameters` it reads (scope
    IREE_PARAMETER_SCOPE; their keys name their contents, so one executable always reads the
    same ones); GeError naming `graph` if IREE refuses it."""
    driver, index = device_for(backend, device, graph, threads)
    workers = cpu_threads(threads) if driver == TASK_DRIVER else 1
    state = _current()
    with state.lock:
        key = (sha256, driver, index, workers)
        if key not in state.modules:
            state.modules[key] = _load(vmfb, _config(state, driver, index, graph, workers), graph, parameters or {})
        return state.modules[key]


def parameters_module(config: Any, parameters: Mapping[str, Any]) -> Any:
    """IREE's `io_parameters` module serving `parameters` (key -> array or bytes, not copied)
    under the scope IREE_PARAMETER_SCOPE to the modules of a context made with `config`."""
    rt = _runtime()
    index = rt.ParameterIndex()
    for key, value in parameters.items():
        index.add_buffer(key, memoryview(np.ascontiguousarray(value)).cast("B"))
    return rt.create_io_parameters_module(config.vm_instance, index.create_provider(scope=IREE_PARAMETER_SCOPE))


def _runtime():
    import iree.runtime  # lazy: a second to import, and only IREE-compiled graphs need it
    return iree.runtime


def _config(state: _ProcessState, driver: str, index: int, graph: str, workers: int = 1) -> Any:
    key = (driver, index, workers)
    if key not in state.configs:
        rt = _runtime()
        if driver == "cuda":
            hal_driver = rt.get_driver("cuda")
            device_id = _cuda_devices(graph)[index]["device_id"]
            state.configs[key] = rt.Config(device=hal_driver.create_device(device_id))
        elif driver == TASK_DRIVER:
            state.configs[key] = rt.Config(device=_task_device(workers))
        else:
            state.configs[key] = rt.Config(driver)
    return state.configs[key]


def _task_device(workers: int) -> Any:
    """A new `local-task` device of its own driver, whose executor has `workers` workers."""
    from iree.runtime._binding import create_hal_driver  # lazy: as _runtime; not re-exported by iree.runtime

    with _topology_lock:
        _runtime().flags.parse_flags(f"{_TOPOLOGY_FLAG}={workers}")
        return create_hal_driver(TASK_DRIVER).create_default_device()


def _cuda_devices(graph: str) -> list[dict]:
    """The CUDA devices IREE sees; GeError naming `graph` when there are none."""
    try:
        devices = _runtime().get_driver("cuda").query_available_devices()
    except RuntimeError as error:
        detail = str(error).partition("; ")[2] or str(error)  # IREE's text after its source location
        raise GeError(f"GE graph '{graph}' runs on iree-cuda, but no CUDA device was found: {detail}") from None
    if not devices:
        raise GeError(f"GE graph '{graph}' runs on iree-cuda, but no CUDA device was found")
    return devices


def _load(vmfb: bytes | memoryview, config: Any, graph: str, parameters: Mapping[str, Any]) -> DeviceModule:
    rt = _runtime()
    view = np.frombuffer(vmfb, dtype=np.uint8)
    try:
        if view.ctypes.data % _VMFB_ALIGNMENT == 0:
            module = rt.VmModule.wrap_buffer(config.vm_instance, vmfb)  # no copy: the .om's memory
        else:
            module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
        context = rt.SystemContext(vm_modules=[parameters_module(config, parameters), module], config=config)
        return DeviceModule(getattr(context.modules, module.name).main)
    except (RuntimeError, ValueError, AttributeError) as error:
        raise GeError(f"GE graph '{graph}': IREE cannot load its executable: {error}") from None
