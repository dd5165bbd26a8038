"""What a pass needs to know about a `ge` op, as traits on its class (as MLIR's `Elementwise` or
`SameOperandsAndResultType`): a pass asks `op.has_trait(InPlace)`, it keeps no list of op names.

- `Elementwise`: each result element is computed from the operand elements at its own index
  (numpy broadcasting) and from nothing else.
- `View`: each result is its first operand's memory seen another way (a reshape, a transpose, a
  slice, a bit cast): the reference kernels return numpy views, and `plan-memory` gives the result
  no memory of its own.
- `InPlace`: the result may take the memory of an operand that dies at the op; `plan-memory`
  plans it there. Every element-wise op that is not a view declares it.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.traits import OpTrait
from xdsl.utils.exceptions import VerifyException

__all__ = ["Elementwise", "InPlace", "View"]


@dataclass(frozen=True)
class Elementwise(OpTrait):
    """Result element i is a function of the operand elements at index i (numpy broadcasting)."""


@dataclass(frozen=True)
class View(OpTrait):
    """Each result is the first operand's memory seen another way."""

    def verify(self, op: Operation) -> None:
        if not op.operands:
            raise VerifyException(f"{op.name}: a view needs an operand to look into")


@dataclass(frozen=True)
class InPlace(OpTrait):
    """The op's one result may be computed into the memory of an operand that dies at the op."""

    def verify(self, op: Operation) -> None:
        if not op.operands or len(op.results) != 1:
            raise VerifyException(f"{op.name}: an op that runs in place has operands and one result, "
                                  f"got {len(op.operands)} operands and {len(op.results)} results")
