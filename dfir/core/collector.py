"""Python's garbage collector while dfir builds large structures.

A compile builds its IR, and a load its plan and wiring: hundreds of thousands of objects that
all stay alive. With the default thresholds the collector runs every 700 allocations and, every
hundred runs, walks the whole heap, the compiled module included: a third of a 10,000-node
compile and load went there (benchmarks/compile_scaling.py). `batched_collection()` raises the
youngest generation's threshold for its duration, so the collector runs about a hundred times
less often and still frees the cycles a compile leaves behind. Nested and threaded uses share one
raise; the thresholds in force when the outermost began come back when it ends (a change made
in between is lost). A collector switched off (threshold 0) stays off.
"""
from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

YOUNG_THRESHOLD = 100_000  # allocations between runs of the youngest generation (Python: 700)

_lock = threading.Lock()
_depth = 0
_outside: tuple[int, ...] = gc.get_threshold()  # the thresholds the outermost use will restore


@contextlib.contextmanager
def batched_collection() -> Iterator[None]:
    """Collect less often inside the block (see the module docstring)."""
    global _depth, _outside
    with _lock:
        if _depth == 0:
            _outside = gc.get_threshold()
            if 0 < _outside[0] < YOUNG_THRESHOLD:
                gc.set_threshold(YOUNG_THRESHOLD, *_outside[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_outside)


def reset_after_fork() -> None:
    """In a child forked inside `batched_collection()` (a worker process, which never leaves the
    block it was forked in): the thresholds from outside it. Outside any block: nothing to do."""
    global _depth
    if _depth:
        _depth = 0
        gc.set_threshold(*_outside)
