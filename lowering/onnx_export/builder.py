"""The ONNX graph under construction: nodes, embedded int64 constants, and the dtype of every value.

`Builder.node` adds one ONNX node and refuses (`Unsupported`) an input dtype onnxruntime's CPU
provider has no kernel for (`ORT_TYPES`, probed on onnxruntime 1.32 at opset 21), so an export
fails at export time rather than when the session is made. Names are a counter (`_3`), so the
same graph always gives the same model.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dfir.core import data_type as dt
from dfir.om.plan import GeOp

__all__ = ["Builder", "Export", "Unsupported", "onnx_type"]


class Unsupported(Exception):
    """The op (in this form or dtype) has no ONNX export: the reason."""


def onnx_type(dtype: str) -> int:
    """The ONNX element type of a `DT_*` name."""
    if dtype == "DT_BF16":
        return TensorProto.BFLOAT16
    return helper.np_dtype_to_tensor_dtype(dt.to_numpy(dt.from_name(dtype)))


_FLOATS = {"DT_FLOAT", "DT_FLOAT16"}
_REALS = _FLOATS | {"DT_DOUBLE"}
_SIGNED = {"DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64"}
_UNSIGNED = {"DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64"}
_INTEGERS = _SIGNED | _UNSIGNED
_NUMBERS = _REALS | _INTEGERS
_ANY = _NUMBERS | {"DT_BOOL", "DT_BF16"}

ORT_TYPES: dict[str, set[str]] = {
    **dict.fromkeys(["Identity", "Shape", "Transpose", "Flatten", "Concat", "Split", "Slice", "Gather",
                     "ScatterElements", "Squeeze", "Unsqueeze", "Reshape", "Cast"], _ANY),
    **dict.fromkeys(["Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos",
                     "Softmax", "LogSoftmax", "Gemm", "BatchNormalization"], _REALS),
    **dict.fromkeys(["Erf", "Gelu", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                     "LeakyRelu", "Elu", "Selu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Softplus",
                     "Softsign", "Mish", "PRelu", "GlobalAveragePool", "Conv", "ConvTranspose", "AveragePool",
                     "InstanceNormalization", "LRN", "GridSample"], _FLOATS),
    **dict.fromkeys(["Add", "Sub", "Mul", "Div", "Mod", "Abs", "Shrink", "Less", "Greater", "LessOrEqual",
                     "GreaterOrEqual"], _NUMBERS),
    **dict.fromkeys(["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"], _INTEGERS),
    **dict.fromkeys(["And", "Or", "Xor", "Not"], {"DT_BOOL"}),
    **dict.fromkeys(["Max", "Min"], _REALS | {"DT_INT8", "DT_INT32", "DT_INT64", "DT_UINT8", "DT_UINT32",
                                              "DT_UINT64"}),
    **dict.fromkeys(["ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                     "ReduceLogSum", "ReduceLogSumExp", "CumSum"], _REALS | {"DT_INT32", "DT_INT64"}),
    **dict.fromkeys(["ReduceMax", "ReduceMin"], _REALS | {"DT_INT8", "DT_INT32", "DT_INT64", "DT_UINT8", "DT_BOOL"}),
    **dict.fromkeys(["ArgMax", "ArgMin"], _REALS | {"DT_INT8", "DT_INT32", "DT_INT64", "DT_UINT8"}),
    **dict.fromkeys(["Pad"], _ANY - {"DT_INT16", "DT_UINT16"}),
    **dict.fromkeys(["Expand", "Tile", "Equal"], _ANY - {"DT_BF16"}),
    "Relu": _REALS | {"DT_INT8", "DT_INT32"},
    "Neg": _REALS | _SIGNED,
    "Sign": _ANY - {"DT_BOOL"},
    "IsNaN": _REALS | {"DT_BF16"},
    "IsInf": _REALS | {"DT_BF16"},
    "Celu": {"DT_FLOAT"},
    "Pow": _REALS | {"DT_INT32", "DT_INT64"},
    "BitShift": _UNSIGNED,
    "MatMul": _REALS | {"DT_INT32", "DT_INT64", "DT_UINT32", "DT_UINT64"},
    "MaxPool": _REALS | {"DT_INT8", "DT_UINT8"},
    "LayerNormalization": _REALS | {"DT_BF16"},
    "Trilu": _REALS | {"DT_INT32", "DT_INT64", "DT_BOOL"},
    "TopK": _REALS | {"DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_UINT8"},
    "Resize": _FLOATS | {"DT_INT8", "DT_INT32", "DT_UINT8"},
    "Where": _REALS | {"DT_INT8", "DT_INT32", "DT_INT64", "DT_UINT8", "DT_UINT32"},
}
"""ONNX op -> the dtypes of its typed input (`_TYPED_INPUT`) onnxruntime's CPU provider runs."""

_TYPED_INPUT = {"Where": 1}
"""ONNX op -> which input carries the op's element type (the first, unless listed)."""

_RESULT_TYPES = {**dict.fromkeys(["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "IsNaN", "IsInf"],
                                 "DT_BOOL"),
                 **dict.fromkeys(["Shape", "ArgMax", "ArgMin"], "DT_INT64")}
"""ONNX op -> its result dtype, where that is not its typed input's."""


class Builder:
    """The graph's inputs, weights (initializers of its `const`s), nodes and embedded constants, in
    the order added; `dtypes` maps every value name to its DT_* name."""

    def __init__(self, inputs: list[onnx.ValueInfoProto], dtypes: Sequence[str], opset: int):
        self.inputs, self.opset = inputs, opset
        self.dtypes = {info.name: dtype for info, dtype in zip(inputs, dtypes, strict=True)}
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []
        self.constants: list[onnx.TensorProto] = []
        self.scope = ""
        self._constant_names: dict[tuple, str] = {}
        self._count = 0
        self._ranks: dict[str, int] = {}

    def _fresh(self) -> str:
        self._count += 1
        return f"_{self._count}"

    def supports(self, op_type: str, value: str) -> bool:
        """Whether onnxruntime has an `op_type` kernel for `value`'s dtype."""
        return self.dtypes[value] in ORT_TYPES[op_type]

    def computed(self, value: str) -> str:
        """`value`, or when it is a weight its Identity: onnxruntime's shape inference reads the
        data of a constant it finds as a shape operand, and a weight's data is not in the model."""
        return self.node("Identity", [value]) if re.fullmatch(r"weight_\d+", value) else value

    def node(self, op_type: str, inputs: Sequence[str], outputs: int = 1, dtypes: Sequence[str] | None = None,
             **attrs: Any) -> Any:
        """Add `op_type` (attrs None are left out); its output name, or names when `outputs` > 1."""
        typed = self.dtypes[inputs[_TYPED_INPUT.get(op_type, 0)]]
        if typed not in ORT_TYPES[op_type]:
            raise Unsupported(f"onnxruntime has no {op_type} kernel for {typed}")
        names = [self._fresh() for _ in range(outputs)]
        result = _RESULT_TYPES.get(op_type, typed)
        for name, dtype in zip(names, dtypes or [result] * outputs, strict=True):
            self.dtypes[name] = dtype
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=f"{self.scope}/{op_type}{names[0]}",
                                           **attrs))
        return names[0] if outputs == 1 else names

    def cast(self, x: str, dtype: str) -> str:
        """`x` as `dtype` (itself when it already is)."""
        if self.dtypes[x] == dtype:
            return x
        return self.node("Cast", [x], dtypes=[dtype], to=onnx_type(dtype))

    def ints(self, values: Sequence[int] | int) -> str:
        """An embedded int64 constant: a vector, or a scalar for an int."""
        return self.constant(np.array(values, np.int64))

    def scalar(self, value: Any, dtype: str) -> str:
        """An embedded 0-d constant of `dtype` (converted as numpy converts it)."""
        return self.constant(np.array(value).astype(dt.to_numpy(dt.from_name(dtype))))

    def constant(self, array: np.ndarray) -> str:
        """A small embedded initializer (one per distinct value)."""
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constant_names:
            name = self._fresh()
            self._constant_names[key] = name
            self.constants.append(numpy_helper.from_array(array, name))
            self.dtypes[name] = dt.from_numpy(array.dtype).name
        return self._constant_names[key]

    def rank(self, value: str) -> int:
        """The rank of `value`, from ONNX shape inference over the graph built so far (run again
        only for a value the last run did not know)."""
        if value not in self._ranks:
            graph = helper.make_graph(self.nodes, "partial", self.inputs, [], [*self.weights, *self.constants])
            inferred = onnx.shape_inference.infer_shapes(helper.make_model(
                graph, opset_imports=[helper.make_opsetid("", self.opset)])).graph
            self._ranks = {info.name: len(info.type.tensor_type.shape.dim)
                           for info in [*inferred.value_info, *inferred.input]
                           if info.type.tensor_type.HasField("shape")}
            self._ranks |= {w.name: len(w.dims) for w in self.weights}
        if value not in self._ranks:
            raise Unsupported(f"the rank of {value} is unknown to ONNX shape inference")
        return self._ranks[value]


Export = Callable[[Builder, GeOp, list[str]], list[str]]
"""How one GE op becomes ONNX nodes: `export(builder, op, input names) -> output names`."""
