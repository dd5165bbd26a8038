"""Every `ge` op that the reference kernels run has a lowering (and the registry names ge ops only)."""
from __future__ import annotations

from dfir.dialects import ge
from dfir.passes.ge_to_linalg import LOWERINGS
from dfir.runtime.ge.kernels import KERNELS


def test_every_op_with_a_kernel_has_a_lowering():
    lowered = {cls.name.removeprefix("ge.") for cls in LOWERINGS}
    assert set(KERNELS) - lowered == set()
    assert {ge.ConstOp, ge.VariableOp} <= set(LOWERINGS)


def test_the_registry_holds_ge_tensor_ops_only():
    assert all(issubclass(cls, ge.ShapedOp) for cls in LOWERINGS)
