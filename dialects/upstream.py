"""The upstream MLIR dialects that lowered GE graphs (`ge.graph`'s `codegen` region) use."""
from __future__ import annotations

from xdsl.dialects.arith import Arith
from xdsl.dialects.func import Func
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.math import Math
from xdsl.dialects.tensor import Tensor

from dfir.dialects.iree_util import FLOW, UTIL

UPSTREAM_DIALECTS = (Arith, Func, Linalg, Math, Tensor, UTIL, FLOW)
