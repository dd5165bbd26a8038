"""The machine that compiles, as GE backends see it: what `dfir.ge.backend=auto` takes
(`fastest_backend`), and which CPU `iree-cpu` code is compiled for (`host_cpu`)."""
from __future__ import annotations

import ctypes.util
import functools
import hashlib
import platform

from dfir.core.backends import IREE_CPU, IREE_CUDA

__all__ = ["fastest_backend", "host_cpu"]


@functools.cache
def fastest_backend() -> str:
    """`iree-cuda` when IREE finds a CUDA device here, else `iree-cpu`."""
    if ctypes.util.find_library("cuda") is None:  # no CUDA driver: no need to load IREE's runtime
        return IREE_CPU
    import iree.runtime  # lazy: IREE's runtime takes a second to load; only a CUDA machine needs it here

    try:
        devices = iree.runtime.get_driver("cuda").query_available_devices()
    except RuntimeError:
        return IREE_CPU
    return IREE_CUDA if devices else IREE_CPU


@functools.cache
def host_cpu() -> str:
    """The CPU `iree-cpu` executables are compiled for (IREE's `host` target): the architecture
    and a digest of the CPU's model and features, so that a compile cache shared between machines
    keys each CPU's executables apart."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            lines = [line for line in cpuinfo if line.startswith(("model name", "flags", "Features"))]
    except OSError:  # no /proc: the platform's own description
        lines = [platform.processor()]
    return f"{platform.machine()} {hashlib.sha256(''.join(sorted(set(lines))).encode()).hexdigest()[:16]}"
