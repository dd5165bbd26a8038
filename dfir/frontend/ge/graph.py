"""`Graph`: build a GE graph in Python, op by op, and turn it into a `ge.graph` op.

    g = Graph("mlp")
    x = g.data(0, shape=[-1, 784], dtype=dt.DT_FLOAT, name="x")
    h = g.relu(g.add(g.matmul(x, g.const(w1)), g.const(b1)))
    g.set_outputs([h])
    op = g.to_ir()                     # a fresh, verified `ge.graph @mlp` each call
    g.content_key()                    # "sha256:...": changes with any op, attribute, weight or output

Every op is typed when it is added, by the same shape function its IR verifier uses, so a shape
error surfaces at the call that caused it as a `GeError` naming the graph, the node, the op and
the shapes. The builder only records; execution belongs to the runtime. The content key is
hashed as ops are recorded, so the compile cache gets it without building any IR.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Sequence

import numpy as np
from xdsl.dialects.builtin import (BytesAttr, DenseArrayBase, DenseIntOrFPElementsAttr, DenseResourceAttr, FloatAttr,
                                   IntegerAttr, StringAttr, TensorType, UnitAttr, f64, i32, i64)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import AttrSizedOperandSegments, IRDLOperation, VarResultDef
from xdsl.utils.exceptions import VerifyException

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.resize_sizes import resize_plan
from dfir.dialects import ge
from dfir.dialects.blobs import BLOB_MIN_BYTES, add_blob
from dfir.dialects.ge_types import FORMATS, GeTensorType, element_type_of
from dfir.frontend.source import user_location

__all__ = ["Graph", "GraphInput", "Value"]


class GraphInput(NamedTuple):
    """A graph input as callers feed it: name, position, data type and shape (-1 = unknown)."""

    name: str
    index: int
    dtype: dt.DType
    shape: list[int]


@dataclass(frozen=True, eq=False)
class Value:
    """A tensor produced by an op of a `Graph`; pass it to further ops of the same graph.

    `known` holds what is known of the elements of a small integer tensor (a constant shape, or
    one computed by `shape` and friends), which ops such as `resize_bilinear` use for their
    result type.
    """

    graph: Graph
    id: int
    type: GeTensorType
    known: ge.ValueRanges | None = None

    @property
    def shape(self) -> list[int]:
        """Fixed dimensions as their size, others as -1."""
        return self.type.shape

    @property
    def dtype(self) -> dt.DType:
        return self.type.dtype

    def __repr__(self) -> str:
        return f"Value(graph={self.graph.name!r}, id={self.id}, type={self.type})"


def _spatial_rank(x: object) -> int | None:
    """The spatial dimensions of an N, C, spatial... input of a window op; None when `x` has too
    few dimensions (or is no value), which the op's verifier reports."""
    return x.type.rank - 2 if isinstance(x, Value) and x.type.rank >= 3 else None


Operand = Value | tuple[Value, ...] | None
"""One operand definition of an op: a value, a tuple of values (a variadic or optional operand
definition), or None (an absent optional one)."""


@dataclass(frozen=True)
class _Node:
    """One recorded op: enough to build it again for every `to_ir()` call.

    `operands` has one entry per operand definition of the op: a value id, or a tuple of ids for
    a variadic or optional one. Results get consecutive value ids, in `to_ir`'s numbering too.
    """

    op_class: type[IRDLOperation]
    name: str
    operands: tuple[int | tuple[int, ...], ...]
    properties: dict[str, Attribute]
    results: tuple[GeTensorType, ...]
    attributes: dict[str, Attribute] = field(default_factory=dict)
    loc: str | None = None
    """The user's line that added the op (`ge.LOC_ATTR` in the IR)."""


class Graph:
    """A GE graph under construction; see the module docstring."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise GeError(f"Graph name must be a non-empty str, got {name!r}", context={"at": user_location()})
        self._name = name
        self._nodes: list[_Node] = []
        self._value_count = 0
        self._names: set[str] = set()
        self._data: dict[int, GraphInput] = {}
        self._outputs: list[int] = []
        self._content = hashlib.sha256()  # of every recorded op, in order (see `content_key`)
        self._locations = True  # record each op's user line as its `loc`

    @property
    def name(self) -> str:
        return self._name

    @property
    def inputs(self) -> list[GraphInput]:
        """The `data` inputs in index order."""
        return [self._data[i] for i in sorted(self._data)]

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    # --- inputs and constants ---

    def data(self, index: int, shape: Sequence[int], dtype: dt.DType, name: str | None = None,
             format: str = "ND") -> Value:
        """Graph input number `index` with a shape (-1 marks an unknown dimension)."""
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise self._error(f"data index must be an int >= 0, got {index!r}")
        if index in self._data:
            raise self._error(f"data index {index} is already used by data '{self._data[index].name}'")
        if not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= -1 for d in shape):
            raise self._error(f"data shape must be a list of ints >= -1 (-1 = unknown), got {shape!r}")
        if format not in FORMATS:
            raise self._error(f"unknown tensor format '{format}', expected one of {', '.join(FORMATS)}")
        result = GeTensorType.from_shape(shape, self._element_dtype(dtype), format)
        name = self._claim_name(name, "data")
        self._data[index] = GraphInput(name, index, dtype, list(shape))
        properties = {"index": IntegerAttr(index, i64), "name": StringAttr(name)}
        return self._record(_Node(ge.DataOp, name, (), properties, (result,)))[0]

    def const(self, array, name: str | None = None) -> Value:
        """A constant tensor holding a copy of `array` (anything `np.asarray` accepts)."""
        return self._add_op(ge.ConstOp, name, "const", (), {"value": self._dense(array)})

    def variable(self, array, name: str) -> Value:
        """A named, persistent weight whose initial value is a copy of `array`; `name` is both the
        variable's and the node's name."""
        if not isinstance(name, str) or not name:
            raise self._error(f"variable name must be a non-empty str, got {name!r}")
        return self._add_op(ge.VariableOp, name, "variable", (),
                            {"var_name": StringAttr(name), "value": self._dense(array)})

    # --- tensor ops ---

    def add(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x + y` with numpy broadcasting."""
        return self._add_op(ge.AddOp, name, "add", (x, y))

    def sub(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x - y` with numpy broadcasting."""
        return self._add_op(ge.SubOp, name, "sub", (x, y))

    def mul(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x * y` with numpy broadcasting."""
        return self._add_op(ge.MulOp, name, "mul", (x, y))

    def relu(self, x: Value, name: str | None = None) -> Value:
        """`max(x, 0)` element by element."""
        return self._add_op(ge.ReluOp, name, "relu", (x,))

    def matmul(self, x: Value, y: Value, name: str | None = None) -> Value:
        """Matrix product over the last two dimensions; batch dimensions broadcast."""
        return self._add_op(ge.MatMulOp, name, "matmul", (x, y))

    def reshape(self, x: Value, shape: Sequence[int], name: str | None = None) -> Value:
        """`x` in a new shape; 0 copies the input dimension, one -1 is inferred (as ONNX)."""
        if not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise self._error(f"reshape shape must be a list of ints, got {shape!r}")
        return self._add_op(ge.ReshapeOp, name, "reshape", (x,),
                            {"shape": DenseArrayBase.from_list(i64, list(shape))})

    def identity(self, x: Value, name: str | None = None) -> Value:
        """`x` itself."""
        return self._add_op(ge.IdentityOp, name, "identity", (x,))

    def div(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x / y` with numpy broadcasting; integer division truncates toward zero."""
        return self._add_op(ge.DivOp, name, "div", (x, y))

    def pow(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x ** y` with numpy broadcasting."""
        return self._add_op(ge.PowOp, name, "pow", (x, y))

    def maximum(self, x: Value, y: Value, name: str | None = None) -> Value:
        """Element-wise maximum with numpy broadcasting."""
        return self._add_op(ge.MaximumOp, name, "maximum", (x, y))

    def minimum(self, x: Value, y: Value, name: str | None = None) -> Value:
        """Element-wise minimum with numpy broadcasting."""
        return self._add_op(ge.MinimumOp, name, "minimum", (x, y))

    def sqrt(self, x: Value, name: str | None = None) -> Value:
        """Square root of a float tensor."""
        return self._add_op(ge.SqrtOp, name, "sqrt", (x,))

    def exp(self, x: Value, name: str | None = None) -> Value:
        """`e ** x` of a float tensor."""
        return self._add_op(ge.ExpOp, name, "exp", (x,))

    def log(self, x: Value, name: str | None = None) -> Value:
        """Natural logarithm of a float tensor."""
        return self._add_op(ge.LogOp, name, "log", (x,))

    def tanh(self, x: Value, name: str | None = None) -> Value:
        """Hyperbolic tangent of a float tensor."""
        return self._add_op(ge.TanhOp, name, "tanh", (x,))

    def sigmoid(self, x: Value, name: str | None = None) -> Value:
        """`1 / (1 + exp(-x))` of a float tensor."""
        return self._add_op(ge.SigmoidOp, name, "sigmoid", (x,))

    def erf(self, x: Value, name: str | None = None) -> Value:
        """The Gauss error function of a float tensor."""
        return self._add_op(ge.ErfOp, name, "erf", (x,))

    def gelu(self, x: Value, approximate: str = "none", name: str | None = None) -> Value:
        """`x * Phi(x)`, exact ("none") or with the tanh formula ("tanh")."""
        properties = {} if approximate == "none" else {"approximate": self._str(approximate, "gelu approximate")}
        return self._add_op(ge.GeluOp, name, "gelu", (x,), properties)

    def batch_matmul(self, x: Value, y: Value, adj_x: bool = False, adj_y: bool = False,
                     name: str | None = None) -> Value:
        """Batched matrix product; `adj_x` / `adj_y` transpose an operand's last two dimensions."""
        return self._add_op(ge.BatchMatMulOp, name, "batch_matmul", (x, y),
                            self._flags("batch_matmul", adj_x=adj_x, adj_y=adj_y))

    def gemm(self, a: Value, b: Value, c: Value | None = None, alpha: float = 1.0, beta: float = 1.0,
             trans_a: bool = False, trans_b: bool = False, name: str | None = None) -> Value:
        """`alpha * op(a) @ op(b) + beta * c` (as ONNX Gemm); `c` broadcasts to the result."""
        properties = {"alpha": self._float(alpha, "gemm alpha"), "beta": self._float(beta, "gemm beta"),
                      **self._flags("gemm", trans_a=trans_a, trans_b=trans_b)}
        return self._add_op(ge.GemmOp, name, "gemm", (a, b, _optional(c)), properties)

    def conv2d(self, x: Value, filter: Value, bias: Value | None = None, strides: Sequence[int] | None = None,
               pads: Sequence[int] | None = None, dilations: Sequence[int] | None = None, groups: int = 1,
               name: str | None = None) -> Value:
        """Convolution of an NCHW input (or NCW, NCDHW: one entry per spatial axis in `strides` and
        `dilations`, with a filter of the input's rank); `pads` is a begin and an end per axis,
        [top, bottom, left, right] in 2-D. Left out, strides and dilations are 1, pads 0."""
        properties = self._window_properties("conv2d", x, None, strides, pads, dilations)
        properties["groups"] = self._int(groups, "conv2d groups")
        return self._add_op(ge.Conv2DOp, name, "conv2d", (x, filter, _optional(bias)), properties)

    def max_pool(self, x: Value, kernel: Sequence[int], strides: Sequence[int] | None = None,
                 pads: Sequence[int] | None = None, dilations: Sequence[int] | None = None, ceil_mode: bool = False,
                 name: str | None = None) -> Value:
        """The maximum of each window of an NCHW input of floats or integers (or NCW, NCDHW: one
        kernel entry per spatial axis); `pads` is a begin and an end per axis, [top, bottom, left,
        right] in 2-D. Left out, strides and dilations are 1, pads 0."""
        properties = self._window_properties("max_pool", x, kernel, strides, pads, dilations)
        properties |= self._flags("max_pool", ceil_mode=ceil_mode)
        return self._add_op(ge.MaxPoolOp, name, "max_pool", (x,), properties)

    def avg_pool(self, x: Value, kernel: Sequence[int], strides: Sequence[int] | None = None,
                 pads: Sequence[int] | None = None, dilations: Sequence[int] | None = None, ceil_mode: bool = False,
                 count_include_pad: bool = False, name: str | None = None) -> Value:
        """The mean of each window of an NCHW input (or NCW, NCDHW, as `max_pool`); padding counts
        only with `count_include_pad`."""
        properties = self._window_properties("avg_pool", x, kernel, strides, pads, dilations)
        properties |= self._flags("avg_pool", ceil_mode=ceil_mode, count_include_pad=count_include_pad)
        return self._add_op(ge.AvgPoolOp, name, "avg_pool", (x,), properties)

    def global_avg_pool(self, x: Value, name: str | None = None) -> Value:
        """The mean over the spatial dimensions (2 and up), kept as size 1."""
        return self._add_op(ge.GlobalAvgPoolOp, name, "global_avg_pool", (x,))

    def batch_norm(self, x: Value, scale: Value, offset: Value, mean: Value, variance: Value,
                   epsilon: float = 1e-5, name: str | None = None) -> Value:
        """Inference batch normalization over channel dimension 1."""
        return self._add_op(ge.BatchNormOp, name, "batch_norm", (x, scale, offset, mean, variance),
                            {"epsilon": self._float(epsilon, "batch_norm epsilon")})

    def layer_norm(self, x: Value, scale: Value, bias: Value | None = None, axis: int = -1,
                   epsilon: float = 1e-5, name: str | None = None) -> Value:
        """Normalization over the dimensions from `axis` on, then `* scale + bias`."""
        properties = {"axis": self._int(axis, "layer_norm axis"),
                      "epsilon": self._float(epsilon, "layer_norm epsilon")}
        return self._add_op(ge.LayerNormOp, name, "layer_norm", (x, scale, _optional(bias)), properties)

    def softmax(self, x: Value, axis: int = -1, name: str | None = None) -> Value:
        """`exp(x) / sum(exp(x))` along `axis`."""
        return self._add_op(ge.SoftmaxOp, name, "softmax", (x,), {"axis": self._int(axis, "softmax axis")})

    def transpose(self, x: Value, perm: Sequence[int], name: str | None = None) -> Value:
        """`x` with dimension i of the result taken from dimension `perm[i]`."""
        return self._add_op(ge.TransposeOp, name, "transpose", (x,), {"perm": self._ints(perm, "transpose perm")})

    def concat(self, inputs: Sequence[Value], axis: int, name: str | None = None) -> Value:
        """The inputs joined along `axis`."""
        if not isinstance(inputs, (list, tuple)):
            raise self._error(f"concat inputs must be a list of values, got {type(inputs).__name__}")
        return self._add_op(ge.ConcatOp, name, "concat", (tuple(inputs),), {"axis": self._int(axis, "concat axis")})

    def split(self, x: Value, sizes: Sequence[int], axis: int = 0, name: str | None = None) -> list[Value]:
        """`x` cut along `axis` into pieces of `sizes` (one may be -1: the rest); one value per piece."""
        properties = {"axis": self._int(axis, "split axis"), "sizes": self._ints(sizes, "split sizes")}
        return self._add_multi_op(ge.SplitOp, name, "split", (x,), properties)

    def slice(self, x: Value, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int] | None = None,
              steps: Sequence[int] | None = None, name: str | None = None) -> Value:
        """`x[starts:ends:steps]` along `axes` (default: the first len(starts)), as ONNX Slice."""
        starts_attr = self._ints(starts, "slice starts")
        count = len(starts)
        properties = {"starts": starts_attr, "ends": self._ints(ends, "slice ends"),
                      "axes": self._ints(list(range(count)) if axes is None else axes, "slice axes"),
                      "steps": self._ints([1] * count if steps is None else steps, "slice steps")}
        return self._add_op(ge.SliceOp, name, "slice", (x,), properties)

    def gather(self, x: Value, indices: Value, axis: int = 0, name: str | None = None) -> Value:
        """Entries of `x` along `axis` at `indices` (an i32 or i64 tensor)."""
        return self._add_op(ge.GatherOp, name, "gather", (x, indices), {"axis": self._int(axis, "gather axis")})

    def scatter_elements(self, data: Value, indices: Value, updates: Value, axis: int = 0, reduction: str = "none",
                         name: str | None = None) -> Value:
        """`data` with `updates` written along `axis` at `indices` (same shape as `updates`), replacing
        (reduction "none") or combined by "add", "mul", "max" or "min", as ONNX ScatterElements."""
        properties = {"axis": self._int(axis, "scatter_elements axis"),
                      "reduction": self._str(reduction, "scatter_elements reduction")}
        return self._add_op(ge.ScatterElementsOp, name, "scatter_elements", (data, indices, updates), properties)

    def squeeze(self, x: Value, axes: Sequence[int], name: str | None = None) -> Value:
        """`x` without its size-1 dimensions `axes`."""
        return self._add_op(ge.SqueezeOp, name, "squeeze", (x,), {"axes": self._ints(axes, "squeeze axes")})

    def unsqueeze(self, x: Value, axes: Sequence[int], name: str | None = None) -> Value:
        """`x` with size-1 dimensions inserted at `axes` of the result."""
        return self._add_op(ge.UnsqueezeOp, name, "unsqueeze", (x,), {"axes": self._ints(axes, "unsqueeze axes")})

    def pad(self, x: Value, pads: Sequence[int], mode: str = "constant", value: float = 0.0,
            name: str | None = None) -> Value:
        """`x` padded by `pads` ([begins..., ends...]); mode "constant", "reflect" or "edge"."""
        properties = {"pads": self._ints(pads, "pad pads"), "mode": self._str(mode, "pad mode"),
                      "value": self._float(value, "pad value")}
        return self._add_op(ge.PadOp, name, "pad", (x,), properties)

    def flatten(self, x: Value, axis: int = 1, name: str | None = None) -> Value:
        """`x` as a matrix: dimensions before `axis` are rows, the rest columns."""
        return self._add_op(ge.FlattenOp, name, "flatten", (x,), {"axis": self._int(axis, "flatten axis")})

    def reduce_sum(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The sum over `axes`."""
        return self._reduce(ge.ReduceSumOp, "reduce_sum", x, axes, keep_dims, name)

    def reduce_mean(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The mean over `axes`."""
        return self._reduce(ge.ReduceMeanOp, "reduce_mean", x, axes, keep_dims, name)

    def reduce_max(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The maximum over `axes`."""
        return self._reduce(ge.ReduceMaxOp, "reduce_max", x, axes, keep_dims, name)

    def cast(self, x: Value, dtype: dt.DType, name: str | None = None) -> Value:
        """`x` converted to `dtype`."""
        return self._add_op(ge.CastOp, name, "cast", (x,), {"to": element_type_of(self._element_dtype(dtype))})

    def bitcast(self, x: Value, dtype: dt.DType, name: str | None = None) -> Value:
        """The bits of `x` read as `dtype`, of the same width (nothing reads as DT_BOOL)."""
        return self._add_op(ge.BitCastOp, name, "bitcast", (x,), {"to": element_type_of(self._element_dtype(dtype))})

    def shape(self, x: Value, name: str | None = None) -> Value:
        """The dimensions of `x` as an i64 vector (known as ranges: see `Value.known`)."""
        return self._add_op(ge.ShapeOp, name, "shape", (x,))

    def resize_bilinear(self, x: Value, size: Value | Sequence[int], align_corners: bool = False,
                        half_pixel_centers: bool = False, name: str | None = None) -> Value:
        """Bilinear resize of an NCHW input to `size` = [height, width]: a list of ints, or an
        i32/i64 tensor of 2 elements (its known values, if any, give the result type)."""
        properties = self._flags("resize_bilinear", align_corners=align_corners,
                                 half_pixel_centers=half_pixel_centers)
        if isinstance(size, Value):
            return self._add_op(ge.ResizeBilinearOp, name, "resize_bilinear", (x, (size,)), properties)
        properties["size"] = self._ints(size, "resize_bilinear size")
        return self._add_op(ge.ResizeBilinearOp, name, "resize_bilinear", (x, ()), properties)

    def resize(self, x: Value, sizes: Value | Sequence[int] | None = None,
               scales: Value | Sequence[float] | None = None, roi: Value | Sequence[float] | None = None,
               axes: Sequence[int] | None = None, mode: str = "nearest",
               coordinate_transformation_mode: str = "half_pixel", nearest_mode: str | None = None,
               cubic_coeff_a: float | None = None, exclude_outside: bool = False, antialias: bool = False,
               extrapolation_value: float | None = None, keep_aspect_ratio_policy: str | None = None,
               name: str | None = None) -> Value:
        """ONNX Resize of `axes` (all of them by default): `mode` "nearest", "linear" or "cubic" to
        `sizes` (ints) or by `scales` (floats), one entry per axis (tensors or lists; see
        `ge.resize` for the options). A list becomes a constant, so its sizes give the result type."""
        axes = list(range(len(x.shape))) if axes is None else axes
        properties = {"axes": self._ints(axes, "resize axes"), "mode": self._str(mode, "resize mode"),
                      "coordinate_transformation_mode": self._str(coordinate_transformation_mode,
                                                                  "resize coordinate_transformation_mode"),
                      **self._flags("resize", exclude_outside=exclude_outside, antialias=antialias)}
        for key, value, convert in (("nearest_mode", nearest_mode, self._str), ("cubic_coeff_a", cubic_coeff_a, self._float),
                                    ("extrapolation_value", extrapolation_value, self._float),
                                    ("keep_aspect_ratio_policy", keep_aspect_ratio_policy, self._str)):
            if value is not None:
                properties[key] = convert(value, f"resize {key}")
        if sizes is None and scales is not None and not isinstance(scales, Value):
            sizes = self._scaled_sizes(x, axes, np.asarray(scales, np.float32))
        operands = [self._tensor_operand(v, dtype, name and f"{name}/{what}")
                    for what, v, dtype in (("roi", roi, np.float32), ("scales", scales, np.float32), ("sizes", sizes, np.int64))]
        properties[AttrSizedOperandSegments.attribute_name] = DenseArrayBase.from_list(
            i32, [1, *(int(v is not None) for v in operands)])
        return self._add_op(ge.ResizeOp, name, "resize", (x, *((v,) if v is not None else () for v in operands)),
                            properties)

    @staticmethod
    def _scaled_sizes(x: Value, axes: Sequence[int], scales: np.ndarray) -> list[int] | None:
        """The output sizes `scales` give when the resized dimensions are fixed (else None)."""
        rank = len(x.shape)
        if len(axes) != len(scales) or not all(isinstance(a, int) and -rank <= a < rank for a in axes):
            return None  # the op's verifier says what is wrong
        in_sizes = [x.shape[a] for a in axes]
        return None if -1 in in_sizes else resize_plan(in_sizes, scales=[float(s) for s in scales])[0]

    def grid_sample(self, x: Value, grid: Value, mode: str = "linear", padding_mode: str = "zeros",
                    align_corners: bool = False, name: str | None = None) -> Value:
        """`x` ([N, C, D1, ...]) sampled at the [N, H1, ..., k] `grid` of points in [-1, 1] (as ONNX
        GridSample): `mode` "linear", "nearest" or "cubic"; `padding_mode` "zeros", "border" or
        "reflection"."""
        properties = {"mode": self._str(mode, "grid_sample mode"),
                      "padding_mode": self._str(padding_mode, "grid_sample padding_mode"),
                      **self._flags("grid_sample", align_corners=align_corners)}
        return self._add_op(ge.GridSampleOp, name, "grid_sample", (x, grid), properties)

    def _tensor_operand(self, value: Value | Sequence | None, dtype, name: str | None) -> Value | None:
        """A tensor argument as given, or a list of numbers as a constant of `dtype`."""
        if value is None or isinstance(value, Value):
            return value
        return self.const(np.asarray(value, dtype), name)

    # --- comparisons, logic and bitwise ops ---

    def equal(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x == y` as a bool tensor, with numpy broadcasting."""
        return self._add_op(ge.EqualOp, name, "equal", (x, y))

    def less(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x < y` as a bool tensor, with numpy broadcasting."""
        return self._add_op(ge.LessOp, name, "less", (x, y))

    def greater(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x > y` as a bool tensor, with numpy broadcasting."""
        return self._add_op(ge.GreaterOp, name, "greater", (x, y))

    def less_equal(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x <= y` as a bool tensor, with numpy broadcasting."""
        return self._add_op(ge.LessEqualOp, name, "less_equal", (x, y))

    def greater_equal(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x >= y` as a bool tensor, with numpy broadcasting."""
        return self._add_op(ge.GreaterEqualOp, name, "greater_equal", (x, y))

    def logical_and(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x and y` of bool tensors, with numpy broadcasting."""
        return self._add_op(ge.LogicalAndOp, name, "logical_and", (x, y))

    def logical_or(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x or y` of bool tensors, with numpy broadcasting."""
        return self._add_op(ge.LogicalOrOp, name, "logical_or", (x, y))

    def logical_xor(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x != y` of bool tensors, with numpy broadcasting."""
        return self._add_op(ge.LogicalXorOp, name, "logical_xor", (x, y))

    def logical_not(self, x: Value, name: str | None = None) -> Value:
        """`not x` of a bool tensor."""
        return self._add_op(ge.LogicalNotOp, name, "logical_not", (x,))

    def bitwise_and(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x & y` of integer tensors, with numpy broadcasting."""
        return self._add_op(ge.BitwiseAndOp, name, "bitwise_and", (x, y))

    def bitwise_or(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x | y` of integer tensors, with numpy broadcasting."""
        return self._add_op(ge.BitwiseOrOp, name, "bitwise_or", (x, y))

    def bitwise_xor(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x ^ y` of integer tensors, with numpy broadcasting."""
        return self._add_op(ge.BitwiseXorOp, name, "bitwise_xor", (x, y))

    def bitwise_not(self, x: Value, name: str | None = None) -> Value:
        """`~x` of an integer tensor."""
        return self._add_op(ge.BitwiseNotOp, name, "bitwise_not", (x,))

    def bit_shift(self, x: Value, shift: Value, direction: str, name: str | None = None) -> Value:
        """`x << shift` (direction "left") or `x >> shift` ("right") of integer tensors; shifts by
        the bit width or more give 0 (-1 for negative signed values shifted right)."""
        return self._add_op(ge.BitShiftOp, name, "bit_shift", (x, shift),
                            {"direction": self._str(direction, "bit_shift direction")})

    def select(self, condition: Value, x: Value, y: Value, name: str | None = None) -> Value:
        """`x` where the bool `condition` is true, else `y`; all three broadcast (as ONNX Where)."""
        return self._add_op(ge.SelectOp, name, "select", (condition, x, y))

    def is_nan(self, x: Value, name: str | None = None) -> Value:
        """Whether each element of a float tensor is NaN, as a bool tensor."""
        return self._add_op(ge.IsNanOp, name, "is_nan", (x,))

    def is_inf(self, x: Value, detect_positive: bool = True, detect_negative: bool = True,
               name: str | None = None) -> Value:
        """Whether each element of a float tensor is +inf (with `detect_positive`) or -inf (with
        `detect_negative`), as a bool tensor."""
        return self._add_op(ge.IsInfOp, name, "is_inf", (x,),
                            self._flags("is_inf", detect_positive=detect_positive, detect_negative=detect_negative))

    # --- element-wise math ---

    def mod(self, x: Value, y: Value, fmod: bool = False, name: str | None = None) -> Value:
        """The remainder of `x / y`: with the sign of `y`, or with `fmod` of `x`."""
        return self._add_op(ge.ModOp, name, "mod", (x, y), self._flags("mod", fmod=fmod))

    def neg(self, x: Value, name: str | None = None) -> Value:
        """`-x` of a numeric tensor."""
        return self._add_op(ge.NegOp, name, "neg", (x,))

    def abs(self, x: Value, name: str | None = None) -> Value:
        """`|x|` of a numeric tensor."""
        return self._add_op(ge.AbsOp, name, "abs", (x,))

    def sign(self, x: Value, name: str | None = None) -> Value:
        """-1, 0 or 1 by the sign of each element of a numeric tensor."""
        return self._add_op(ge.SignOp, name, "sign", (x,))

    def reciprocal(self, x: Value, name: str | None = None) -> Value:
        """`1 / x` of a float tensor."""
        return self._add_op(ge.ReciprocalOp, name, "reciprocal", (x,))

    def floor(self, x: Value, name: str | None = None) -> Value:
        """Each element of a float tensor rounded down."""
        return self._add_op(ge.FloorOp, name, "floor", (x,))

    def ceil(self, x: Value, name: str | None = None) -> Value:
        """Each element of a float tensor rounded up."""
        return self._add_op(ge.CeilOp, name, "ceil", (x,))

    def round(self, x: Value, name: str | None = None) -> Value:
        """Each element of a float tensor rounded to the nearest integer, halves to even."""
        return self._add_op(ge.RoundOp, name, "round", (x,))

    def sin(self, x: Value, name: str | None = None) -> Value:
        """Sine of a float tensor."""
        return self._add_op(ge.SinOp, name, "sin", (x,))

    def cos(self, x: Value, name: str | None = None) -> Value:
        """Cosine of a float tensor."""
        return self._add_op(ge.CosOp, name, "cos", (x,))

    def tan(self, x: Value, name: str | None = None) -> Value:
        """Tangent of a float tensor."""
        return self._add_op(ge.TanOp, name, "tan", (x,))

    def asin(self, x: Value, name: str | None = None) -> Value:
        """Arcsine of a float tensor."""
        return self._add_op(ge.AsinOp, name, "asin", (x,))

    def acos(self, x: Value, name: str | None = None) -> Value:
        """Arccosine of a float tensor."""
        return self._add_op(ge.AcosOp, name, "acos", (x,))

    def atan(self, x: Value, name: str | None = None) -> Value:
        """Arctangent of a float tensor."""
        return self._add_op(ge.AtanOp, name, "atan", (x,))

    def sinh(self, x: Value, name: str | None = None) -> Value:
        """Hyperbolic sine of a float tensor."""
        return self._add_op(ge.SinhOp, name, "sinh", (x,))

    def cosh(self, x: Value, name: str | None = None) -> Value:
        """Hyperbolic cosine of a float tensor."""
        return self._add_op(ge.CoshOp, name, "cosh", (x,))

    def asinh(self, x: Value, name: str | None = None) -> Value:
        """Inverse hyperbolic sine of a float tensor."""
        return self._add_op(ge.AsinhOp, name, "asinh", (x,))

    def acosh(self, x: Value, name: str | None = None) -> Value:
        """Inverse hyperbolic cosine of a float tensor."""
        return self._add_op(ge.AcoshOp, name, "acosh", (x,))

    def atanh(self, x: Value, name: str | None = None) -> Value:
        """Inverse hyperbolic tangent of a float tensor."""
        return self._add_op(ge.AtanhOp, name, "atanh", (x,))

    # --- activations ---

    def leaky_relu(self, x: Value, alpha: float = 0.01, name: str | None = None) -> Value:
        """`x` where it is >= 0, else `alpha * x`."""
        return self._add_op(ge.LeakyReluOp, name, "leaky_relu", (x,), {"alpha": self._float(alpha, "leaky_relu alpha")})

    def elu(self, x: Value, alpha: float = 1.0, name: str | None = None) -> Value:
        """`x` where it is > 0, else `alpha * (exp(x) - 1)`."""
        return self._add_op(ge.EluOp, name, "elu", (x,), {"alpha": self._float(alpha, "elu alpha")})

    def celu(self, x: Value, alpha: float = 1.0, name: str | None = None) -> Value:
        """`max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`."""
        return self._add_op(ge.CeluOp, name, "celu", (x,), {"alpha": self._float(alpha, "celu alpha")})

    def selu(self, x: Value, alpha: float = 1.67326319217681884765625, gamma: float = 1.05070102214813232421875,
             name: str | None = None) -> Value:
        """`gamma * x` where `x` > 0, else `gamma * alpha * (exp(x) - 1)` (ONNX's defaults)."""
        return self._add_op(ge.SeluOp, name, "selu", (x,),
                            {"alpha": self._float(alpha, "selu alpha"), "gamma": self._float(gamma, "selu gamma")})

    def thresholded_relu(self, x: Value, alpha: float = 1.0, name: str | None = None) -> Value:
        """`x` where it is > alpha, else 0."""
        return self._add_op(ge.ThresholdedReluOp, name, "thresholded_relu", (x,),
                            {"alpha": self._float(alpha, "thresholded_relu alpha")})

    def hard_sigmoid(self, x: Value, alpha: float = 0.2, beta: float = 0.5, name: str | None = None) -> Value:
        """`max(0, min(1, alpha * x + beta))`."""
        return self._add_op(ge.HardSigmoidOp, name, "hard_sigmoid", (x,),
                            {"alpha": self._float(alpha, "hard_sigmoid alpha"),
                             "beta": self._float(beta, "hard_sigmoid beta")})

    def hard_swish(self, x: Value, name: str | None = None) -> Value:
        """`x * max(0, min(1, x / 6 + 1 / 2))`."""
        return self._add_op(ge.HardSwishOp, name, "hard_swish", (x,))

    def shrink(self, x: Value, bias: float = 0.0, lambd: float = 0.5, name: str | None = None) -> Value:
        """`x - bias` where `x` > lambd, `x + bias` where `x` < -lambd, else 0."""
        return self._add_op(ge.ShrinkOp, name, "shrink", (x,),
                            {"bias": self._float(bias, "shrink bias"), "lambd": self._float(lambd, "shrink lambd")})

    def softplus(self, x: Value, name: str | None = None) -> Value:
        """`log(1 + exp(x))`."""
        return self._add_op(ge.SoftplusOp, name, "softplus", (x,))

    def softsign(self, x: Value, name: str | None = None) -> Value:
        """`x / (1 + |x|)`."""
        return self._add_op(ge.SoftsignOp, name, "softsign", (x,))

    def mish(self, x: Value, name: str | None = None) -> Value:
        """`x * tanh(softplus(x))`."""
        return self._add_op(ge.MishOp, name, "mish", (x,))

    def prelu(self, x: Value, slope: Value, name: str | None = None) -> Value:
        """`x` where it is >= 0, else `x * slope`; `slope` broadcasts to `x`."""
        return self._add_op(ge.PReluOp, name, "prelu", (x, slope))

    # --- structure ---

    def expand(self, x: Value, shape: Sequence[int], name: str | None = None) -> Value:
        """`x` broadcast against `shape` (numpy's rules, as ONNX Expand: a 1 keeps `x`'s size)."""
        return self._add_op(ge.ExpandOp, name, "expand", (x,), {"shape": self._ints(shape, "expand shape")})

    def tile(self, x: Value, repeats: Sequence[int], name: str | None = None) -> Value:
        """`x` repeated `repeats[i]` times along each dimension i."""
        return self._add_op(ge.TileOp, name, "tile", (x,), {"repeats": self._ints(repeats, "tile repeats")})

    def log_softmax(self, x: Value, axis: int = -1, name: str | None = None) -> Value:
        """`log(softmax(x))` along `axis`."""
        return self._add_op(ge.LogSoftmaxOp, name, "log_softmax", (x,), {"axis": self._int(axis, "log_softmax axis")})

    def reduce_prod(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The product over `axes`."""
        return self._reduce(ge.ReduceProdOp, "reduce_prod", x, axes, keep_dims, name)

    def reduce_min(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The minimum over `axes`."""
        return self._reduce(ge.ReduceMinOp, "reduce_min", x, axes, keep_dims, name)

    def reduce_l1(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The sum of absolute values over `axes`."""
        return self._reduce(ge.ReduceL1Op, "reduce_l1", x, axes, keep_dims, name)

    def reduce_l2(self, x: Value, axes: Sequence[int], keep_dims: bool = False, name: str | None = None) -> Value:
        """The square root of the sum of squares over `axes`."""
        return self._reduce(ge.ReduceL2Op, "reduce_l2", x, axes, keep_dims, name)

    def reduce_sum_square(self, x: Value, axes: Sequence[int], keep_dims: bool = False,
                          name: str | None = None) -> Value:
        """The sum of squares over `axes`."""
        return self._reduce(ge.ReduceSumSquareOp, "reduce_sum_square", x, axes, keep_dims, name)

    def reduce_log_sum(self, x: Value, axes: Sequence[int], keep_dims: bool = False,
                       name: str | None = None) -> Value:
        """`log(sum(x))` over `axes` of a float tensor."""
        return self._reduce(ge.ReduceLogSumOp, "reduce_log_sum", x, axes, keep_dims, name)

    def reduce_log_sum_exp(self, x: Value, axes: Sequence[int], keep_dims: bool = False,
                           name: str | None = None) -> Value:
        """`log(sum(exp(x)))` over `axes` of a float tensor."""
        return self._reduce(ge.ReduceLogSumExpOp, "reduce_log_sum_exp", x, axes, keep_dims, name)

    def arg_max(self, x: Value, axis: int = 0, keep_dims: bool = True, select_last_index: bool = False,
                name: str | None = None) -> Value:
        """The i64 position of the maximum along `axis` (the first, or the last with `select_last_index`)."""
        return self._arg_reduce(ge.ArgMaxOp, "arg_max", x, axis, keep_dims, select_last_index, name)

    def arg_min(self, x: Value, axis: int = 0, keep_dims: bool = True, select_last_index: bool = False,
                name: str | None = None) -> Value:
        """The i64 position of the minimum along `axis` (the first, or the last with `select_last_index`)."""
        return self._arg_reduce(ge.ArgMinOp, "arg_min", x, axis, keep_dims, select_last_index, name)

    def top_k(self, x: Value, k: int, axis: int = -1, largest: bool = True, sorted: bool = True,
              name: str | None = None) -> list[Value]:
        """The `k` largest (or smallest) entries along `axis` and their i64 positions: [values, indices]."""
        properties = {"k": self._int(k, "top_k k"), "axis": self._int(axis, "top_k axis"),
                      **self._flags("top_k", largest=largest, sorted=sorted)}
        return self._add_multi_op(ge.TopKOp, name, "top_k", (x,), properties)

    def instance_norm(self, x: Value, scale: Value, bias: Value, epsilon: float = 1e-5,
                      name: str | None = None) -> Value:
        """Normalization of each (batch, channel) plane over the spatial dimensions, then `* scale + bias`."""
        return self._add_op(ge.InstanceNormOp, name, "instance_norm", (x, scale, bias),
                            {"epsilon": self._float(epsilon, "instance_norm epsilon")})

    def lrn(self, x: Value, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0,
            name: str | None = None) -> Value:
        """Local response normalization across the `size` channels around each one (as ONNX LRN)."""
        properties = {"size": self._int(size, "lrn size"), "alpha": self._float(alpha, "lrn alpha"),
                      "beta": self._float(beta, "lrn beta"), "bias": self._float(bias, "lrn bias")}
        return self._add_op(ge.LrnOp, name, "lrn", (x,), properties)

    def conv_transpose(self, x: Value, filter: Value, bias: Value | None = None, strides: Sequence[int] | None = None,
                       pads: Sequence[int] | None = None, dilations: Sequence[int] | None = None,
                       output_padding: Sequence[int] | None = None, groups: int = 1, name: str | None = None) -> Value:
        """Transposed convolution of an NCHW input with a [C, M / groups, kH, kW] filter (as ONNX
        ConvTranspose; or NCW, NCDHW with one entry per spatial axis in `strides`, `dilations` and
        `output_padding`); `pads` is a begin and an end per axis, cut from the full output. Left
        out, strides and dilations are 1, pads and output_padding 0."""
        properties = self._window_properties("conv_transpose", x, None, strides, pads, dilations)
        properties["output_padding"] = self._spatial_ints(output_padding, "conv_transpose output_padding",
                                                          _spatial_rank(x), 0)
        properties["groups"] = self._int(groups, "conv_transpose groups")
        return self._add_op(ge.ConvTransposeOp, name, "conv_transpose", (x, filter, _optional(bias)), properties)

    def trilu(self, x: Value, k: int = 0, upper: bool = True, name: str | None = None) -> Value:
        """The upper (or lower) triangle of the last two dimensions above diagonal `k`, zeros elsewhere."""
        properties = {"k": self._int(k, "trilu k"), **self._flags("trilu", upper=upper)}
        return self._add_op(ge.TriluOp, name, "trilu", (x,), properties)

    def cum_sum(self, x: Value, axis: int, exclusive: bool = False, reverse: bool = False,
                name: str | None = None) -> Value:
        """Running sums along `axis` (from the end with `reverse`; without the element itself with `exclusive`)."""
        properties = {"axis": self._int(axis, "cum_sum axis"),
                      **self._flags("cum_sum", exclusive=exclusive, reverse=reverse)}
        return self._add_op(ge.CumSumOp, name, "cum_sum", (x,), properties)

    def cum_prod(self, x: Value, axis: int, exclusive: bool = False, reverse: bool = False,
                 name: str | None = None) -> Value:
        """Running products along `axis` (from the end with `reverse`; without the element itself with `exclusive`)."""
        properties = {"axis": self._int(axis, "cum_prod axis"),
                      **self._flags("cum_prod", exclusive=exclusive, reverse=reverse)}
        return self._add_op(ge.CumProdOp, name, "cum_prod", (x,), properties)

    def _arg_reduce(self, op_class: type[ge.ShapedOp], kind: str, x: Value, axis, keep_dims: bool,
                    select_last_index: bool, name: str | None) -> Value:
        properties = {"axis": self._int(axis, f"{kind} axis"),
                      **self._flags(kind, keep_dims=keep_dims, select_last_index=select_last_index)}
        return self._add_op(op_class, name, kind, (x,), properties)

    def _window_properties(self, kind: str, x: Value, kernel, strides, pads, dilations) -> dict[str, Attribute]:
        """`strides`, `pads`, `dilations` (and `kernel`, unless None) as properties, one entry per
        spatial axis of `x` (two for pads); a None one gets its default."""
        spatial = _spatial_rank(x)
        properties = {"kernel": self._ints(kernel, f"{kind} kernel", spatial)} if kernel is not None else {}
        return properties | {"strides": self._spatial_ints(strides, f"{kind} strides", spatial, 1),
                             "pads": self._spatial_ints(pads, f"{kind} pads", spatial and 2 * spatial, 0),
                             "dilations": self._spatial_ints(dilations, f"{kind} dilations", spatial, 1)}

    def _spatial_ints(self, values: object, what: str, count: int | None, default: int) -> DenseArrayBase:
        """`values` (`count` ints), or `count` times `default` when None."""
        return self._ints([default] * (count or 0) if values is None else values, what, count)

    def _reduce(self, op_class: type[ge.ShapedOp], kind: str, x: Value, axes, keep_dims: bool,
                name: str | None) -> Value:
        properties = {"axes": self._ints(axes, f"{kind} axes"), **self._flags(kind, keep_dims=keep_dims)}
        return self._add_op(op_class, name, kind, (x,), properties)

    def set_outputs(self, outputs: Sequence[Value]) -> None:
        """The graph's results, in order (replaces any earlier choice)."""
        if not isinstance(outputs, (list, tuple)) or not outputs:
            raise self._error(f"set_outputs needs a non-empty list of values, got {outputs!r}")
        self._outputs = [self._value_id(v, f"set_outputs: output {i}") for i, v in enumerate(outputs)]

    # --- IR ---

    @classmethod
    def from_onnx(cls, model, name: str | None = None, *,
                  constant_inputs: Mapping[str, object] | None = None) -> Graph:
        """The graph of an ONNX model (a file path or an `onnx.ModelProto`); see `dfir.frontend.ge.onnx`.

        `constant_inputs` fixes model inputs to values at import (`{"axes": np.array([1])}`):
        they are no longer inputs of the graph, and what they determine (axes, shapes, k) folds."""
        from dfir.frontend.ge import onnx  # lazy: onnx takes half a second to import

        def new_graph(graph_name: str) -> Graph:
            graph = cls(graph_name)
            graph._locations = False  # the model's node names locate its ops, not the caller's line
            return graph
        return onnx.import_onnx(model, new_graph, name, constant_inputs)

    def content_key(self) -> str:
        """`sha256:<hex>` of everything `to_ir` builds from: the name, every op (its kind, node
        name, operands, properties and attributes, dense data by their bytes, result types) in
        order, and the outputs. Graphs with the same key build the same `ge.graph`."""
        digest = self._content.copy()
        digest.update(f"\0outputs {self._outputs!r}\0name {self._name!r}".encode())
        return "sha256:" + digest.hexdigest()

    def to_ir(self, verify: bool = True) -> ge.GraphOp:
        """A new `ge.graph` op named after the graph; a GeError if it is incomplete.

        It is verified unless `verify` is False (the importer's case: the compiler verifies the
        module it builds)."""
        if not self._outputs:
            raise self._error("the graph has no outputs; call set_outputs first")
        block = Block()
        values: list[SSAValue] = []
        for node in self._nodes:
            operands = [values[i] if isinstance(i, int) else [values[j] for j in i] for i in node.operands]
            attributes = node.attributes if node.loc is None else {**node.attributes, ge.LOC_ATTR: StringAttr(node.loc)}
            op = node.op_class.build(operands=operands, properties=node.properties,
                                     attributes=attributes, result_types=_result_groups(node))
            hint = _name_hint(node.name)
            for result in op.results:
                result.name_hint = hint
            block.add_op(op)
            values.extend(op.results)
        block.add_op(ge.OutputOp([values[i] for i in self._outputs]))
        graph = ge.GraphOp(self._name, Region(block))
        if verify:
            try:
                graph.verify()
            except VerifyException as e:
                raise self._error(str(e)) from None
        return graph

    # --- helpers ---

    def _add_op(self, op_class: type[ge.ShapedOp], name: str | None, kind: str, operands: Sequence[Operand],
                properties: dict[str, Attribute] | None = None) -> Value:
        """Record an op with one result; see `_add_multi_op`."""
        return self._add_multi_op(op_class, name, kind, operands, properties)[0]

    def _add_multi_op(self, op_class: type[ge.ShapedOp], name: str | None, kind: str,
                      operands: Sequence[Operand], properties: dict[str, Attribute] | None = None) -> list[Value]:
        """Type an op with its shape function (and its known values) and record it; `operands` has
        one entry per operand definition of the op (see `Operand`)."""
        properties = properties or {}
        flat = [v for entry in operands for v in _entry_values(entry)]
        ids = iter([self._value_id(v, f"{kind}: operand {i}") for i, v in enumerate(flat)])
        structure = tuple(next(ids) if not isinstance(entry, tuple) and entry is not None
                          else tuple(next(ids) for _ in _entry_values(entry)) for entry in operands)
        name = self._claim_name(name, kind)
        types, known = [v.type for v in flat], [v.known for v in flat]
        try:
            results = op_class.infer_types(types, properties, known)
            values = list(op_class.infer_values(types, properties, known))
        except VerifyException as e:
            self._names.discard(name)
            raise self._error(str(e), node=name) from None
        return self._record(_Node(op_class, name, structure, properties, tuple(results),
                                  {"name": StringAttr(name)}, user_location() if self._locations else None), values)

    def _record(self, node: _Node, known: Sequence[ge.ValueRanges | None] = ()) -> list[Value]:
        self._nodes.append(node)
        self._content.update(_node_content(node))
        first = self._value_count
        self._value_count += len(node.results)
        known = list(known) + [None] * (len(node.results) - len(known))
        return [Value(self, first + i, t, k) for i, (t, k) in enumerate(zip(node.results, known))]

    def _dense(self, array) -> ge.ConstValue:
        """A copy of `array` (anything `np.asarray` accepts), little-endian: a weight blob
        (`dense_resource`) when it has `BLOB_MIN_BYTES` or more, else a dense attribute."""
        array = np.asarray(array)
        element_type = element_type_of(self._element_dtype(dt.from_numpy(array.dtype)))
        copy = np.array(array, dtype=array.dtype.newbyteorder("<"), order="C")
        if copy.nbytes < BLOB_MIN_BYTES:  # (an empty array among them, which no memoryview can cast)
            return DenseIntOrFPElementsAttr(TensorType(element_type, array.shape), BytesAttr(copy.tobytes()))
        copy.flags.writeable = False
        data = memoryview(copy).cast("B")
        return DenseResourceAttr.from_params(add_blob(data.toreadonly()), TensorType(element_type, array.shape))

    def _ints(self, values: object, what: str, count: int | None = None) -> DenseArrayBase:
        """A list of ints as a property; `what` names the argument in the error."""
        is_list = isinstance(values, (list, tuple)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values)
        if not is_list or (count is not None and len(values) != count):
            size = "" if count is None else f"{count} "
            raise self._error(f"{what} must be a list of {size}ints, got {values!r}")
        return DenseArrayBase.from_list(i64, [int(v) for v in values])

    def _int(self, value: object, what: str) -> IntegerAttr:
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise self._error(f"{what} must be an int, got {value!r}")
        return IntegerAttr(int(value), i64)

    def _float(self, value: object, what: str) -> FloatAttr:
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise self._error(f"{what} must be a number, got {value!r}")
        return FloatAttr(float(value), f64)

    def _flags(self, kind: str, **flags: object) -> dict[str, Attribute]:
        """The flags that are set, as unit properties; each must be a bool."""
        for flag, value in flags.items():
            if not isinstance(value, bool):
                raise self._error(f"{kind} {flag} must be a bool, got {value!r}")
        return {flag: UnitAttr() for flag, value in flags.items() if value}

    def _str(self, value: object, what: str) -> StringAttr:
        if not isinstance(value, str):
            raise self._error(f"{what} must be a str, got {value!r}")
        return StringAttr(value)

    def _value_id(self, value: object, what: str) -> int:
        """The id of a Value of this graph; `what` names the argument in the error."""
        if not isinstance(value, Value):
            raise self._error(f"{what} must be a Value of this graph, got {type(value).__name__}")
        if value.graph is not self:
            raise self._error(f"{what} belongs to graph '{value.graph.name}'")
        return value.id

    def _claim_name(self, name: str | None, kind: str) -> str:
        """Reserve `name`, or the first free `<kind>_<n>` when it is None."""
        if name is None:
            candidates = (f"{kind}_{n}" for n in range(len(self._names) + 1))
            name = next(c for c in candidates if c not in self._names)
        elif not isinstance(name, str) or not name:
            raise self._error(f"node name must be a non-empty str, got {name!r}")
        elif name in self._names:
            raise self._error(f"node name '{name}' is already used")
        self._names.add(name)
        return name

    def _element_dtype(self, dtype: object) -> dt.DType:
        if not isinstance(dtype, dt.DType):
            raise self._error(f"dtype must be a DType such as DT_FLOAT, got {dtype!r}")
        try:
            element_type_of(dtype)
        except ValueError as e:
            raise self._error(str(e)) from None
        return dtype

    def _error(self, message: str, node: str | None = None) -> GeError:
        """A GeError naming the graph, the node and the user's line that called the builder."""
        context = {"graph": self._name} | ({"node": node} if node else {}) | {"at": user_location()}
        return GeError(message, context=context)


def _node_content(node: _Node) -> bytes:
    """What `Graph.content_key` hashes of one recorded op. Attributes appear as their `repr`
    (xDSL attributes are dataclasses: every parameter, exactly), dense data as a digest of its
    bytes."""
    parts = [node.op_class.name, node.name, repr(node.operands), f"loc={node.loc}"]
    for kind, attrs in (("p", node.properties), ("a", node.attributes)):
        parts.extend(f"{kind}:{key}={_attribute_content(attrs[key])}" for key in sorted(attrs))
    parts.extend(repr(result) for result in node.results)
    return ("\0".join(parts) + "\0\0").encode()


def _attribute_content(attr: Attribute) -> str:
    if isinstance(attr, DenseIntOrFPElementsAttr):  # a blob's handle names its content
        return f"dense {attr.type!r} {hashlib.sha256(attr.data.data).hexdigest()}"
    return repr(attr)


def _result_groups(node: _Node) -> list:
    """The result types as `build` takes them: one list for an op with variadic results."""
    definitions = node.op_class.get_irdl_definition().results
    if len(definitions) == 1 and isinstance(definitions[0][1], VarResultDef):
        return [list(node.results)]
    return list(node.results)


def _optional(value: Value | None) -> tuple[Value, ...]:
    """An optional operand as an `Operand` entry."""
    return () if value is None else (value,)


def _entry_values(entry: Operand) -> list:
    """The values of one operand definition (see `Operand`)."""
    if entry is None:
        return []
    return list(entry) if isinstance(entry, tuple) else [entry]


def _name_hint(name: str) -> str | None:
    """An SSA name for readable IR: the node name when xDSL accepts it as one."""
    return name if SSAValue.is_valid_name(name) else None
