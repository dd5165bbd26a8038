"""The per-op lowerings of `convert-ge-to-linalg`, one module per family of ops.

A lowering is `lowering(builder, op) -> results`: it appends upstream ops through the
`FuncBuilder` and returns the upstream values of the op's results, in order; it raises
`Unsupported` for a form it cannot express. `LOWERINGS` maps each `ge` op class to its lowering;
`lower_graph` builds a graph's `func.func @main` with them.
"""
from __future__ import annotations

from typing import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from dfir.passes.ge_to_linalg import (activation, constants, contraction, elementwise, logic, movement, reduction,
                                      resize, window)
from dfir.passes.ge_to_linalg.builder import FuncBuilder

Lowering = Callable[[FuncBuilder, Operation], Sequence[SSAValue]]

LOWERINGS: dict[type[Operation], Lowering] = {**constants.LOWERINGS, **contraction.LOWERINGS,
                                              **elementwise.LOWERINGS, **movement.LOWERINGS,
                                              **reduction.LOWERINGS, **resize.LOWERINGS, **window.LOWERINGS,
                                              **logic.LOWERINGS, **activation.LOWERINGS}
