"""Which GE backend is the fastest on the machine that compiles: what `dfir.ge.backend=auto` takes."""
from __future__ import annotations

import ctypes.util
import functools

__all__ = ["fastest_backend"]


@functools.cache
def fastest_backend() -> str:
    """`iree-cuda` when IREE finds a CUDA device here, else `iree-cpu`."""
    if ctypes.util.find_library("cuda") is None:  # no CUDA driver: no need to load IREE's runtime
        return "iree-cpu"
    import iree.runtime  # lazy: IREE's runtime takes a second to load; only a CUDA machine needs it here

    try:
        devices = iree.runtime.get_driver("cuda").query_available_devices()
    except RuntimeError:
        return "iree-cpu"
    return "iree-cuda" if devices else "iree-cpu"
