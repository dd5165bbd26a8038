"""Reference numpy kernels, one small function per GE op (`GeGraphRunner` in ge_runner.py runs them),
one module per family of ops.

A kernel is `kernel(args, attrs) -> tuple of output arrays`: `args` are the op's input arrays in
order, `attrs` the op's plan attributes. `KERNELS` maps a plan op name to its kernel; `const` has
none because the runner binds weights once, when it is built. Kernels never write to their
arguments, so outputs may share memory with inputs or weights. They are vectorized (no Python
loop over elements or pixels); run-time data a kernel cannot take (an index out of range, a
window larger than its padded input) is a GeError saying which.
"""
from __future__ import annotations

from dfir.runtime.ge.kernels import (
    activation,
    contraction,
    elementwise,
    logic,
    movement,
    normalization,
    reduction,
    resize,
    window,
)
from dfir.runtime.ge.kernels.kernel import Kernel

__all__ = ["KERNELS", "Kernel"]

FAMILIES = (elementwise, contraction, window, normalization, movement, reduction, resize, logic, activation)

KERNELS: dict[str, Kernel] = {op: kernel for family in FAMILIES for op, kernel in family.KERNELS.items()}
"""Plan op name -> its kernel."""
